#!/usr/bin/env bash
# Builds JuiceFS (the FUSE file system the JuiceFS tests mount) once, into a cache outside the
# clone, and prints the binary's path. Later calls find it there and return at once.
#   tools/build_juicefs.sh            build if missing, print the path
#   IOFLEET_JUICEFS_CACHE=DIR         where the build is kept (default ~/.cache/iofleet-juicefs)
# JuiceFS v1.3.1 from the Go module proxy: `go mod download` of the module and its
# dependencies, then `go build` (about 1 minute of download and 10 minutes of build on 2 cores,
# once per machine). It needs Go 1.21 or newer (Debian 12's golang-go is 1.19: use a newer Go
# on PATH, as /usr/local/go on these machines).
set -euo pipefail
version=v1.3.1
module=github.com/juicedata/juicefs
cache=${IOFLEET_JUICEFS_CACHE:-$HOME/.cache/iofleet-juicefs}/$version
bin=$cache/juicefs

if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi

export PATH=$PATH:/usr/local/go/bin
if ! command -v go >/dev/null; then
  echo "build_juicefs: no go command (JuiceFS $version needs Go >= 1.21)" >&2
  exit 1
fi
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [ "${go_minor:-0}" -lt 21 ]; then
  echo "build_juicefs: $(go env GOVERSION) is too old: JuiceFS $version needs Go >= 1.21" >&2
  exit 1
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
started=$(date +%s)
# The module's source (read-only in the module cache) copied to a tree go can build in.
source_dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
[ -n "$source_dir" ] && [ -d "$source_dir" ] || { echo "build_juicefs: go mod download of $module@$version failed" >&2; exit 1; }
cp -r "$source_dir" "$work/src"
chmod -R u+w "$work/src"
cd "$work/src"
go mod download
# As JuiceFS's Makefile builds it (its version is in pkg/version; no git here).
go build -buildvcs=false -trimpath \
  -ldflags "-s -w" \
  -o "$work/juicefs" .
"$work/juicefs" --version >&2
mv "$work/juicefs" "$bin"
echo "build_juicefs: built $version in $(( $(date +%s) - started )) s" >&2
echo "$bin"
