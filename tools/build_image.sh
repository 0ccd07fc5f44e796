#!/usr/bin/env bash
# Builds the container image localhost/iofleet:VERSION (make image) from Debian packages, with no
# registry: a Debian 12 base made once with mmdebstrap (kept in ~/.cache/iofleet-image, with
# podman's store for these images) and configs/container/Containerfile installing the package
# that `make deb` builds. Prints the image name. Also writes iofleet-image.oci.tar (podman save)
# when given --save, for `podman load` / `skopeo copy` elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${IOFLEET_IMAGE_CACHE:-$HOME/.cache/iofleet-image}
mkdir -p "$cache/run"
export CONTAINERS_CONF=$PWD/tools/podman/containers.conf
# A store of our own, kept between builds (the base image is 165 MB).
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$cache" "$cache" > "$cache/storage.conf"
export CONTAINERS_STORAGE_CONF=$cache/storage.conf
tools/install_deps.sh image
deb=$(tools/build_deb.sh --no-lintian 2> /dev/null | tail -1)
version=$(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//')
if ! podman image exists localhost/iofleet-base:bookworm; then
  if [ ! -s "$cache/rootfs.tar" ]; then
    # Debian 12 with its updates and security updates, as the hosts the package is built on.
    mmdebstrap --quiet --variant=apt bookworm "$cache/rootfs.partial.tar" "deb http://deb.debian.org/debian bookworm main" \
      "deb http://deb.debian.org/debian bookworm-updates main" "deb http://deb.debian.org/debian-security bookworm-security main"
    mv "$cache/rootfs.partial.tar" "$cache/rootfs.tar"
  fi
  podman import --quiet --change 'CMD ["/bin/bash"]' "$cache/rootfs.tar" localhost/iofleet-base:bookworm > /dev/null
fi
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp "$deb" "$context/iofleet.deb"
cp configs/container/Containerfile "$context/"
podman build --quiet --network=host -t "localhost/iofleet:$version" "$context" > /dev/null
if [ "${1:-}" = "--save" ]; then
  rm -f iofleet-image.oci.tar
  podman save --quiet --format oci-archive -o iofleet-image.oci.tar "localhost/iofleet:$version"
fi
echo "localhost/iofleet:$version"
