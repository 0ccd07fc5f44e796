#!/usr/bin/env bash
# ioengine=nfs against nfs-ganesha on this machine (tools/nfs_server.sh: server and clients in
# one network namespace, loopback only), with libnfs's own nfs-cp as the peer in the same
# invocation (Debian's fio has no nfs engine). Prints:
#   sequential 1 MiB write/read, iofleet nfs engine iodepth 8 vs nfs-cp (same file size);
#   4k random read at iodepth 1 and 16: the ratio shows requests really overlap on the wire.
# Needs root (network namespace). Server and namespace are removed on exit.
#   bench/nfs_bench.sh                  RUNTIME=5, SIZE=256m by default
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //controller:iofleet //worker:iofleet-worker >/dev/null 2>&1
iofleet=$PWD/bazel-bin/controller/iofleet
runtime=${RUNTIME:-5}
size=${SIZE:-256m}
work=$(mktemp -d /tmp/iofleet-nfs-bench-XXXXXX)
trap 'tools/nfs_server.sh stop; rm -rf "$work"' EXIT
url=$(tools/nfs_server.sh start "$work/export")
in_ns() { ip netns exec iofleet-nfs "$@"; }

# iofleet: one local worker, one job thread; prints MiB/s and IOPS of the direction.
iofleet_run() {  # name rw bs iodepth [time_based]
  local name=$1 rw=$2 bs=$3 depth=$4 timed=${5:-}
  {
    echo "[$name]"; echo "ioengine=nfs"; echo "nfs_url=$url"; echo "rw=$rw"; echo "bs=$bs"; echo "size=$size"
    echo "iodepth=$depth"; echo "filename=bench.dat"
    [ -n "$timed" ] && { echo "runtime=$runtime"; echo "time_based"; }
  } > "$work/$name.fio"
  in_ns "$iofleet" run "$work/$name.fio" --local-workers 1 --results-dir none --quiet --output-format json --output "$work/$name.json" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  python3 - "$work/$name.json" "$rw" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
d = job["read" if "read" in sys.argv[2] else "write"]
print(f'{d["bw_bytes"] / 2**20:.1f} {d["iops"]:.0f}')
PY
}

# nfs-cp of the same amount; prints MiB/s.
nfscp() {  # src dst
  local bytes start end
  bytes=$(numfmt --from=iec "${size^^}")
  start=$(date +%s.%N)
  in_ns nfs-cp "$1" "$2" >/dev/null
  end=$(date +%s.%N)
  python3 -c "print(f'{$bytes / 2**20 / ($end - $start):.1f}')"
}

head -c "$(numfmt --from=iec "${size^^}")" /dev/urandom > "$work/local.dat"
printf '%-34s %12s %12s %8s\n' "workload" "iofleet" "nfs-cp" "ratio"
read -r w_bw _ < <(iofleet_run seqwrite write 1m 8)
p_w=$(nfscp "$work/local.dat" "$url/cp.dat")
printf '%-34s %9s MiB/s %6s MiB/s %7.2fx\n' "seq write 1 MiB (iodepth 8), $size" "$w_bw" "$p_w" "$(python3 -c "print($w_bw / $p_w)")"
read -r r_bw _ < <(iofleet_run seqread read 1m 8)
p_r=$(nfscp "$url/cp.dat" "$work/back.dat")
printf '%-34s %9s MiB/s %6s MiB/s %7.2fx\n' "seq read 1 MiB (iodepth 8), $size" "$r_bw" "$p_r" "$(python3 -c "print($r_bw / $p_r)")"
read -r _ qd1 < <(iofleet_run randread1 randread 4k 1 timed)
read -r _ qd16 < <(iofleet_run randread16 randread 4k 16 timed)
printf '%-34s %9s IOPS %7s IOPS %7.2fx\n' "4k randread iodepth 16 vs 1" "$qd16" "$qd1" "$(python3 -c "print($qd16 / $qd1)")"
