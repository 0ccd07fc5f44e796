#!/usr/bin/env bash
# Is the load generator ever the bottleneck? Runs fio and iofleet (one local worker) one after
# the other on the same job, same machine, and prints the iofleet/fio ratio of IOPS and of CPU
# time per IO (whole processes, user+sys, iofleet's controller and worker included):
#   null engine at iodepth 1 and 32; psync 4k randread on tmpfs with 1 and 2 jobs;
#   io_uring 4k randread iodepth 32 on tmpfs; io_uring direct 4k randread on ext4 on a loop device.
# Needs root (tmpfs and loop mounts); everything mounted is removed on exit.
#   bench/harness_vs_fio.sh            RUNTIME=5 by default
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || apt-get install -y -q fio
bazel build //controller:iofleet //worker:iofleet-worker >/dev/null 2>&1
iofleet=$PWD/bazel-bin/controller/iofleet
runtime=${RUNTIME:-5}

TMPFS_SIZE=1200m LOOP_DIRECT_IO=on source bench/scratch_targets.sh

# Runs a command and prints its user+sys CPU seconds (children included) on fd 3.
cpu_of() {
  local TIMEFORMAT="%U %S"
  { time "$@" >/dev/null 2>"$work/err"; } 2>"$work/time" || { cat "$work/err" >&2; return 1; }
  awk '{print $1 + $2}' "$work/time"
}

row() {  # label dir engine rw iodepth numjobs [extra options...]
  local label=$1 dir=$2 engine=$3 rw=$4 depth=$5 jobs=$6; shift 6
  local job="$work/job.fio"
  {
    echo "[global]"; echo "ioengine=$engine"; echo "bs=4k"; echo "size=256m"; echo "iodepth=$depth"
    echo "runtime=$runtime"; echo "time_based"
    # One file both tools use (laid out once, untimed), shared by the job's threads in both.
    [ -n "$dir" ] && { echo "directory=$dir"; echo "filename=bench.dat"; }
    for o in "$@"; do echo "$o"; done
    echo "[$label]"; echo "rw=$rw"; echo "numjobs=$jobs"
  } > "$job"
  [ -n "$dir" ] && { find "$dir" -maxdepth 1 -type f -delete; fio --output=/dev/null --runtime=1 "$job" >/dev/null; }
  sync
  local fio_cpu ifl_cpu
  fio_cpu=$(cpu_of fio --output-format=json --output="$work/fio.json" "$job")
  sync
  ifl_cpu=$(cpu_of "$iofleet" run "$job" --local-workers 1 --results-dir none --quiet --output-format iofleet-json --output "$work/iofleet.json")
  python3 - "$work/fio.json" "$work/iofleet.json" "$label" "$fio_cpu" "$ifl_cpu" <<'PY'
import json, sys
fio = json.load(open(sys.argv[1])); ifl = json.load(open(sys.argv[2]))
label, fio_cpu, ifl_cpu = sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
fio_ios = sum(j["read"]["total_ios"] for j in fio["jobs"])
fio_iops = sum(j["read"]["iops"] for j in fio["jobs"])
c = next(x for x in ifl["cluster"] if x["direction"] == "read")
ifl_ios, ifl_iops = int(c["ops"]), c["iops"]
fio_ns = fio_cpu / fio_ios * 1e9; ifl_ns = ifl_cpu / ifl_ios * 1e9
print(f"{label:34s} IOPS fio {fio_iops:12,.0f} iofleet {ifl_iops:12,.0f} ratio {ifl_iops/fio_iops:5.2f} | "
      f"CPU/IO fio {fio_ns:8.0f}ns iofleet {ifl_ns:8.0f}ns ratio(fio/iofleet) {fio_ns/ifl_ns:5.2f}")
PY
}

echo "fio $(fio --version), ${runtime}s per run; ratios >= 1.0 mean iofleet is at least as fast / as cheap"
row "null iodepth=1" "" null randread 1 1
row "null iodepth=32" "" null randread 32 1
row "psync 4k randread tmpfs 1 job" "$work/tmpfs" psync randread 1 1
row "psync 4k randread tmpfs 2 jobs" "$work/tmpfs" psync randread 1 2
row "io_uring 4k randread qd32 tmpfs" "$work/tmpfs" io_uring randread 32 1
row "io_uring direct 4k randread qd32 ext4" "$work/ext4" io_uring randread 32 1 direct=1
