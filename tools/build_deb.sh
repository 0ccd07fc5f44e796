#!/usr/bin/env bash
# Builds the Debian package (make deb): iofleet_VERSION-1_amd64.deb in the source tree's top
# directory, holding /usr/bin/iofleet and /usr/bin/iofleet-worker (stripped), the standing
# worker's systemd unit and its /etc/default file, man pages made from the programs' --help,
# and Depends: computed from the libraries the binaries link (dpkg-shlibdeps: the runtime
# packages, never the -dev ones). Then lintian checks it and fails on any warning.
#   tools/build_deb.sh [--no-lintian]
set -euo pipefail
cd "$(dirname "$0")/.."
lintian=1
[ "${1:-}" = "--no-lintian" ] && lintian=0

tools/install_deps.sh deb
bazel build //controller:iofleet //worker:iofleet-worker
bin=$(bazel info bazel-bin 2>/dev/null)

# The version the programs report (common/protocol_version.h) is the package's.
upstream=$("$bin/controller/iofleet" version | awk '{print $2}')
version="$upstream-1"
[[ "$upstream" =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || { echo "build_deb: unexpected version '$upstream'" >&2; exit 1; }
head -1 packaging/debian/changelog | grep -qF "($version)" ||
  { echo "build_deb: packaging/debian/changelog's first entry is not $version: add one" >&2; exit 1; }

stage=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$stage" "$work"' EXIT
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/lib/systemd/system" "$stage/etc/default" \
  "$stage/usr/share/doc/iofleet" "$stage/usr/share/man/man1" "$stage/usr/share/lintian/overrides"
for program in controller/iofleet worker/iofleet-worker; do
  install -m 0755 "$bin/$program" "$stage/usr/bin/"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/$(basename "$program")"
done
install -m 0644 configs/systemd/iofleet-worker.service "$stage/lib/systemd/system/"
install -m 0644 configs/systemd/iofleet-worker.default "$stage/etc/default/iofleet-worker"
install -m 0644 packaging/debian/copyright "$stage/usr/share/doc/iofleet/"
install -m 0644 packaging/debian/lintian-overrides "$stage/usr/share/lintian/overrides/iofleet"
gzip -9n < packaging/debian/changelog > "$stage/usr/share/doc/iofleet/changelog.Debian.gz"
# Man pages from --help and --version (help2man), so they never drift from the programs.
help2man --no-info --no-discard-stderr --version-string="$upstream" \
  --name="distributed load generator for networked filesystems (controller)" \
  "$stage/usr/bin/iofleet" | gzip -9n > "$stage/usr/share/man/man1/iofleet.1.gz"
help2man --no-info --no-discard-stderr --version-string="$upstream" \
  --name="iofleet worker daemon: does the IO of iofleet runs" \
  "$stage/usr/bin/iofleet-worker" | gzip -9n > "$stage/usr/share/man/man1/iofleet-worker.1.gz"
chmod 0644 "$stage"/usr/share/man/man1/*.gz

# Depends: from the ELF dependencies (dpkg-shlibdeps wants a debian/control to read).
mkdir -p "$work/debian"
printf 'Source: iofleet\nMaintainer: x <x@example.org>\n\nPackage: iofleet\nArchitecture: amd64\n' > "$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O "$stage/usr/bin/iofleet" "$stage/usr/bin/iofleet-worker" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "build_deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
depends="adduser, $shlibs"  # adduser: the postinst creates the iofleet user

install -m 0644 packaging/debian/conffiles "$stage/DEBIAN/conffiles"
install -m 0755 packaging/debian/postinst packaging/debian/postrm "$stage/DEBIAN/"
installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@DEPENDS@/$depends/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
  packaging/debian/control.in > "$stage/DEBIAN/control"
(cd "$stage" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"

out="iofleet_${version}_amd64.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out.partial" > /dev/null
mv "$out.partial" "$out"
if [ "$lintian" = 1 ]; then
  # (its own temporary files, which it leaves in $TMPDIR, go with $work)
  TMPDIR="$work" lintian --fail-on warning --tag-display-limit 0 "$out"
fi
echo "$out"
