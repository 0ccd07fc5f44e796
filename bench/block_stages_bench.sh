#!/usr/bin/env bash
# What --block-stages costs: io_uring direct 4 KiB random reads at iodepth 32 on ext4 on a loop
# device, the same job with and without tracing, in interleaved pairs (one local worker), with
# fio on the same job in the same invocation. Prints the median IOPS of each and the ratios, and
# the stage split the traced runs measured. The machines here are noisy (the same run varies by
# 20%), so the cost is the median of each pair's traced/untraced ratio (the two runs of a pair
# are seconds apart, and which goes first alternates). Needs root (loop device, BPF).
#   bench/block_stages_bench.sh            PAIRS=11 RUNTIME=3 by default
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "block_stages_bench: needs root (loop device, BPF)" >&2; exit 2; }
bazel build //controller:iofleet //worker:iofleet-worker >/dev/null 2>&1
iofleet=$PWD/bazel-bin/controller/iofleet
pairs=${PAIRS:-11}
runtime=${RUNTIME:-3}
work=$(mktemp -d /var/tmp/iofleet-bs-bench-XXXXXX)
loop=""
cleanup() {
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT
truncate -s 2G "$work/ext4.img"
loop=$(losetup -f --show "$work/ext4.img")
mkfs.ext4 -q "$loop"
mkdir "$work/mnt" && mount "$loop" "$work/mnt"
cat > "$work/job.fio" <<JOB
[randread]
ioengine=io_uring
direct=1
rw=randread
bs=4k
iodepth=32
size=1g
runtime=$runtime
time_based
directory=$work/mnt
filename=bench.dat
JOB

# One run's read IOPS (iofleet's or fio's JSON, fio's layout); iofleet's stage split to stderr.
iofleet_iops() {  # extra flags...
  "$iofleet" run "$work/job.fio" --local-workers 1 --results-dir none --quiet --output-format iofleet-json --output "$work/out.json" "$@" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  python3 - "$work/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = [d for d in r["jobs"][0]["directions"] if d["direction"] == "read"][0]
print(f'{d["iops"]:.0f}')
for dev in r.get("block_devices", []):
    for x in dev["directions"]:
        if x["direction"] == "read":
            timed, merged, unseen = int(x["request_bytes"]["count"]), int(x.get("merged_bios", 0)), int(x.get("completion_unseen", 0))
            print(f'  traced {dev["device"]}: {timed} requests timed + {merged} bios merged + {unseen} completions unreported = {timed + merged + unseen}; application ops {x.get("application_ops", 0)}, events missed {dev.get("missed_events", 0)}', file=sys.stderr)
PY
}
fio_iops() {
  fio --output-format=json "$work/job.fio" > "$work/fio.json" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  python3 -c "import json; print(f'{json.load(open(\"$work/fio.json\"))[\"jobs\"][0][\"read\"][\"iops\"]:.0f}')"
}
# Lay the file out once (not measured).
"$iofleet" run "$work/job.fio" --local-workers 1 --results-dir none --quiet >/dev/null 2>&1 || true

plain=() traced=() fio=() ratios=()
for ((i = 1; i <= pairs; i++)); do
  if ((i % 2)); then
    plain+=("$(iofleet_iops)")
    traced+=("$(iofleet_iops --block-stages 2>>"$work/traced.log")")
  else
    traced+=("$(iofleet_iops --block-stages 2>>"$work/traced.log")")
    plain+=("$(iofleet_iops)")
  fi
  fio+=("$(fio_iops)")
  ratios+=("$(python3 -c "print(f'{${traced[-1]} / ${plain[-1]}:.4f}')")")
  echo "pair $i: untraced ${plain[-1]} IOPS, traced ${traced[-1]} IOPS (ratio ${ratios[-1]}), fio ${fio[-1]} IOPS" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
p=$(median "${plain[@]}") t=$(median "${traced[@]}") f=$(median "${fio[@]}")
echo "io_uring direct 4k randread iodepth 32, ext4 on $loop ($(cat /sys/block/${loop#/dev/}/queue/scheduler)), $pairs interleaved runs of ${runtime}s, medians:"
printf '  %-28s %10s IOPS\n' "iofleet" "$p" "iofleet --block-stages" "$t" "fio 3.x (same job)" "$f"
r=$(median "${ratios[@]}")
python3 -c "print(f'  tracing cost: median of the pairs\' traced/untraced ratios {$r:.3f} ({(1 - $r) * 100:.1f}% fewer IOPS traced); iofleet/fio {$p / $f:.2f}, traced iofleet/fio {$t / $f:.2f}')"
tail -1 "$work/traced.log"
