#!/usr/bin/env bash
# Metadata rates per phase with `iofleet mdtest` on tmpfs and on ext4 (a loop device), with the
# same options and task count; where `mdtest` (IOR's, with mpirun) is installed, it runs the
# same test and the iofleet/mdtest ratio is printed per phase. Needs root (mounts); everything
# it mounts is removed on exit.   bench/mdtest_bench.sh [mdtest options]   (default below)
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //controller:iofleet //worker:iofleet-worker >/dev/null 2>&1
iofleet=$PWD/bazel-bin/controller/iofleet
options=("$@")
[ ${#options[@]} -gt 0 ] || options=(-n 2000 -z 1 -b 4 -u -w 4096 -e 4096)
tasks=${TASKS:-2}

source bench/scratch_targets.sh

for target in tmpfs ext4; do
  mkdir -p "$work/$target/t"
  "$iofleet" mdtest -d "$work/$target/t" "${options[@]}" --local-workers 1 --results-dir none --quiet --tasks-per-worker "$tasks" \
    --output-format json --output "$work/iofleet-$target.json" >/dev/null
  have_mdtest=0
  if command -v mdtest >/dev/null && command -v mpirun >/dev/null; then
    mpirun --allow-run-as-root -np "$tasks" mdtest -d "$work/$target/t" "${options[@]}" > "$work/mdtest-$target.txt" && have_mdtest=1
  fi
  python3 - "$work/iofleet-$target.json" "$work/mdtest-$target.txt" "$target" "$have_mdtest" "$tasks" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1])); target, have, tasks = sys.argv[3], sys.argv[4] == "1", sys.argv[5]
peer = {}
if have:
    for line in open(sys.argv[2]):
        m = re.match(r"\s+(.+?)\s+:\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", line)
        if m: peer.setdefault(m.group(1).strip(), float(m.group(4)))   # first table: rates (mean)
print(f"{target}: {tasks} tasks, options: {report['command_line']}")
for row in report["summary_rate"]:
    name, rate = row["operation"], row["mean"]
    extra = f" | mdtest {peer[name]:12.1f} ratio {rate / peer[name]:5.2f}" if name in peer and peer[name] > 0 else ("" if have else " | mdtest not installed: no ratio")
    print(f"  {name:22s} iofleet {rate:12.1f} items/s{extra}")
PY
done
