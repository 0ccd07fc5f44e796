#!/usr/bin/env bash
# The README's "Finding where the time went" example: the same io_uring direct 4 KiB random-read
# job on two ext4 file systems on loop devices that differ only in their IO scheduler, side by
# side through `iofleet compare --block-stages` (interleaved runs). The table shows where each
# request's time went: Q2D (queue to dispatch: the scheduler) and D2C (the device). Needs root.
#   bench/scheduler_compare.sh                 SCHEDULERS="none mq-deadline" REPEAT=3 RUNTIME=5
#   SCHEDULERS="none kyber" bench/scheduler_compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "scheduler_compare: needs root (loop devices, BPF)" >&2; exit 2; }
bazel build //controller:iofleet //worker:iofleet-worker >/dev/null 2>&1
iofleet=$PWD/bazel-bin/controller/iofleet
read -r -a schedulers <<< "${SCHEDULERS:-none mq-deadline}"
repeat=${REPEAT:-3}
runtime=${RUNTIME:-5}
depth=${IODEPTH:-32}
work=$(mktemp -d /var/tmp/iofleet-sched-XXXXXX)
loops=()
cleanup() {
  for s in "${schedulers[@]}"; do mountpoint -q "$work/$s" && umount "$work/$s"; done
  for l in "${loops[@]}"; do losetup -d "$l"; done
  rm -rf "$work"
}
trap cleanup EXIT
targets=()
for s in "${schedulers[@]}"; do
  truncate -s 2G "$work/$s.img"
  loop=$(losetup -f --show "$work/$s.img")
  loops+=("$loop")
  echo "$s" > "/sys/block/${loop#/dev/}/queue/scheduler"
  mkfs.ext4 -q "$loop"
  mkdir "$work/$s" && mount "$loop" "$work/$s"
  targets+=(--target "$s=$work/$s")
  echo "$loop: scheduler $(cat /sys/block/${loop#/dev/}/queue/scheduler)" >&2
done
cat > "$work/randread.fio" <<JOB
[randread]
ioengine=io_uring
direct=1
rw=randread
bs=4k
iodepth=$depth
size=1g
runtime=$runtime
time_based
JOB
"$iofleet" compare "$work/randread.fio" "${targets[@]}" --repeat "$repeat" --block-stages --profile --local-workers 1 --quiet \
  --results-dir "${RESULTS_DIR:-none}"
