#!/usr/bin/env bash
# Runs the same jobs with fio and with iofleet (one local worker, so both use one host and the
# same thread count) on the same directory, and prints IOPS, p99 and the iofleet/fio ratio.
#   bench/fio_compare.sh [DIR]     (default: a temporary directory under /tmp)
# Figures on a shared VM are noisy: run it twice before believing a ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo; $sudo apt-get install -y -q fio; }
bazel build //controller:iofleet //worker:iofleet-worker
iofleet=bazel-bin/controller/iofleet

dir=${1:-}
cleanup=""
if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/iofleet-bench-XXXXXX); cleanup=$dir; fi
trap '[ -n "$cleanup" ] && rm -rf "$cleanup"' EXIT
runtime=${RUNTIME:-5}

# Each measured run starts from the same state: dirty pages written back, caches dropped (as
# root), so neither tool pays for the other's writeback.
settle() {
  sync
  if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches; fi
}

compare() {  # name rw ioengine bs numjobs
  local name=$1 rw=$2 engine=$3 bs=$4 numjobs=$5 dirn=$1
  local job="$dir/$name.fio"
  mkdir -p "$dir/$dirn"
  cat > "$job" <<JOB
[global]
ioengine=$engine
bs=$bs
size=256m
runtime=$runtime
time_based
directory=$dir/$dirn

[$name]
rw=$rw
numjobs=$numjobs
JOB
  # Lay the files out once with fio so neither measured run pays for it.
  fio --output=/dev/null --runtime=1 "$job" >/dev/null
  settle
  fio --output-format=json --output="$dir/fio.json" "$job" >/dev/null
  settle
  "$iofleet" run "$job" --local-workers 1 --results-dir none --quiet --output-format iofleet-json --output "$dir/iofleet.json" >/dev/null
  python3 - "$dir/fio.json" "$dir/iofleet.json" "$name" "$rw" <<'PY'
import json, sys
fio = json.load(open(sys.argv[1])); ifl = json.load(open(sys.argv[2])); name, rw = sys.argv[3], sys.argv[4]
d = "read" if "read" in rw else "write"
fio_iops = sum(j[d]["iops"] for j in fio["jobs"])
fio_p99 = max(float(j[d]["clat_ns"]["percentile"]["99.000000"]) for j in fio["jobs"])
c = next(x for x in ifl["cluster"] if x["direction"] == d)
ifl_p99 = next(float(p["value_ns"]) for p in c["latency"]["percentiles"] if p["percentile"] == 99)
print(f"{name:22s} fio {fio_iops:12,.0f} IOPS p99 {fio_p99/1000:8.2f}us | iofleet {c['iops']:12,.0f} IOPS p99 {ifl_p99/1000:8.2f}us | ratio {c['iops']/fio_iops:5.2f}x")
PY
}

echo "same job, same directory ($dir), ${runtime}s each, fio $(fio --version)"
compare randread-4k-psync randread psync 4k 1
compare randwrite-4k-psync randwrite psync 4k 1
compare seqwrite-1m-sync write sync 1m 1
compare randread-4k-psync-x2 randread psync 4k 2
