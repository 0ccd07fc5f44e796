#!/usr/bin/env bash
# Builds the real mdtest (hpc/ior, the source tarball in ../shared/peers or $IOR_TARBALL) into a
# cache outside the clone, once per tarball, and prints the binary's path. The equivalence test
# (tests/mdtest_equivalence_test.sh) and bench/mdtest_bench.sh run iofleet mdtest beside it.
# GPL-2.0 code: built to compare against, never linked into iofleet.
#   tools/build_mdtest.sh            -> ~/.cache/iofleet-mdtest/<sha256>/ior/src/mdtest
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tarball=${IOR_TARBALL:-}
if [ -z "$tarball" ]; then
  for t in "$here/../shared/peers/ior-5fcf0ba9.tar.gz" /work/shared/peers/ior-5fcf0ba9.tar.gz; do
    [ -r "$t" ] && { tarball=$t; break; }
  done
fi
[ -n "$tarball" ] && [ -r "$tarball" ] || { echo "build_mdtest: no hpc/ior source tarball (set IOR_TARBALL)" >&2; exit 1; }
for tool in autoreconf libtoolize mpicc make; do
  command -v "$tool" > /dev/null || { echo "build_mdtest: $tool missing (tools/install_deps.sh test)" >&2; exit 1; }
done
sha=$(sha256sum "$tarball" | cut -c1-16)
cache=${IOFLEET_MDTEST_CACHE:-$HOME/.cache/iofleet-mdtest}/$sha
binary=$cache/ior/src/mdtest
if [ ! -x "$binary" ]; then
  # Built in a scratch directory and moved into place whole: an interrupted build leaves no
  # half-built cache behind.
  mkdir -p "$(dirname "$cache")"
  scratch=$(mktemp -d "$(dirname "$cache")/build-XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
  tar xzf "$tarball" -C "$scratch"
  (cd "$scratch/ior" && ./bootstrap && ./configure && make -j"$(nproc)") > "$scratch/build.log" 2>&1 ||
    { tail -30 "$scratch/build.log" >&2; echo "build_mdtest: build failed" >&2; exit 1; }
  rm -rf "$cache"
  mv "$scratch" "$cache"
  trap - EXIT
fi
echo "$binary"
