#!/usr/bin/env bash
# iofleet mdtest against the real mdtest (built by tools/build_mdtest.sh, run with mpirun), same
# options, same task count, same file system: tmpfs and ext4 on a loop device. For each
# workload, PAIRS interleaved pairs (which tool goes first alternates; 31 on tmpfs, 61 on ext4,
# whose phases vary more from run to run; a phase of a few milliseconds moves by a fifth or more
# between runs of either tool, with the kernel's deferred work of the phase before landing in
# it or not, and a median of 15 or 31 moved with it by 2-5%), and per phase the median
# rate of each tool (each run's SUMMARY mean) and the ratio iofleet/mdtest; then the median
# whole-command wall clock of each and its ratio. A benchmark, not a test: it prints, it asserts
# nothing. Needs root (mounts, a network namespace for mpirun); all of it is removed on exit.
# It takes 15-20 minutes (PAIRS=9 about 3).
#   bench/mdtest_bench.sh                 the issue's four workloads, TASKS=2
#   bench/mdtest_bench.sh "-F -n 5000 -u" one workload of your own
#   TARGETS=tmpfs bench/mdtest_bench.sh   one file system only
#   WORKERS=2 bench/mdtest_bench.sh       the tasks spread over 2 local workers (default: 1 worker)
#   RAW=1 bench/mdtest_bench.sh           each pair's two rates too, per phase (mdtest/iofleet)
#   AA=1 bench/mdtest_bench.sh            mdtest in both columns: how far apart two runs of one
#                                         tool land here, the ratios' noise floor on this machine
#   BASELINE=DIR bench/mdtest_bench.sh    another iofleet build (DIR holds its iofleet and
#                                         iofleet-worker) in mdtest's column: a change to iofleet
#                                         against the build before it, in the same alternation
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //controller:iofleet //worker:iofleet-worker > /dev/null 2>&1
# Bazel's server (a JVM) would go on waking its threads on these two CPUs through the runs.
bazel shutdown > /dev/null 2>&1
iofleet=$PWD/bazel-bin/controller/iofleet
mdtest=$(tools/build_mdtest.sh)
tasks=${TASKS:-2}
# mpirun -np TASKS on one node is one worker with TASKS tasks (WORKERS=TASKS: a worker per task,
# as if each were on a host of its own; TASKS must be a multiple of WORKERS).
workers=${WORKERS:-1}
[ $((tasks % workers)) -eq 0 ] || { echo "TASKS ($tasks) must be a multiple of WORKERS ($workers)" >&2; exit 2; }
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE/iofleet" ] && [ -x "$BASELINE/iofleet-worker" ] ||
    { echo "BASELINE=$BASELINE: no iofleet and iofleet-worker there (copy them from a build's bazel-bin/controller and bazel-bin/worker)" >&2; exit 2; }
  [ -z "${AA:-}" ] || { echo "BASELINE and AA=1 compare different things: give one" >&2; exit 2; }
fi
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=("-n 2000 -z 1 -b 4 -u -w 4096 -e 4096" "-I 1000 -z 2 -b 4 -u"
                                         "-I 20 -z 2 -b 10 -w 131072 -e 131072 -t -u" "-F -n 5000 -u")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

source bench/scratch_targets.sh

# $1 tool, $2 output, rest: options. The wall clock goes on the output's last line.
run() {
  local tool=$1 out=$2; shift 2
  local start end
  start=$(date +%s%N)
  # (BASELINE: mdtest's column runs the other iofleet build.)
  local binary=$iofleet
  if [ "$tool" = mdtest ] && [ -n "${BASELINE:-}" ]; then binary=$BASELINE/iofleet; fi
  if [ -n "${AA:-}" ] || { [ "$tool" = mdtest ] && [ -z "${BASELINE:-}" ]; }; then
    unshare -n bash -c 'ip link set lo up; exec mpirun -np "$1" "${@:2}"' _ "$tasks" "$mdtest" "$@" > "$out" 2> "$out.err"
  else
    "$binary" mdtest "$@" --local-workers "$workers" --tasks-per-worker $((tasks / workers)) --quiet --results-dir none > "$out" 2> "$out.err"
  fi
  end=$(date +%s%N)
  echo "WALL $(( (end - start) / 1000 ))" >> "$out"
}

for target in ${TARGETS:-tmpfs ext4}; do
  pairs=${PAIRS:-$([ "$target" = ext4 ] && echo 61 || echo 31)}
  for workload in "${workloads[@]}"; do
    # shellcheck disable=SC2206
    opts=($workload)
    rm -f "$work"/out-*
    for pair in $(seq 1 "$pairs"); do
      order=(mdtest iofleet)
      [ $((pair % 2)) -eq 0 ] && order=(iofleet mdtest)
      for tool in "${order[@]}"; do
        run "$tool" "$work/out-$tool-$pair" "${opts[@]}" -d "$work/$target/t"
        rm -rf "$work/$target/t"
        # Every run starts from a file system at rest: the removal's journal commits and writeback
        # done now, not in the next run's phases, which they stalled for tens of ms at random (ext4,
        # the same build, 9 pairs: directory rename and removal 0.81-0.88x one way or the other
        # without it).
        sync
      done
    done
    python3 - "$work" "$pairs" "$target" "$tasks" "$workload" "$workers" <<'PY'
import os, random, re, statistics, sys
work, pairs, target, tasks, workload, workers = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
def read(tool):
    rates, walls = {}, []
    for p in range(1, pairs + 1):
        for line in open(f"{work}/out-{tool}-{p}"):
            if line.startswith("WALL "): walls.append(int(line.split()[1]) / 1e6)
            m = re.match(r"   (\S.*?\S)\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+(\d+\.\d{3})$", line)
            if m: rates.setdefault(m.group(1), []).append(float(m.group(4)))
    return rates, walls
m_rates, m_walls = read("mdtest")
i_rates, i_walls = read("iofleet")
print(f"{target}, {tasks} tasks (iofleet: {workers} local worker(s)), mdtest {workload}  ({pairs} interleaved pairs, medians)")
if os.environ.get("AA"): print("  AA=1: the iofleet column is mdtest run again: the ratios are two runs of one tool")
if os.environ.get("BASELINE"): print(f"  BASELINE: the mdtest column is {os.environ['BASELINE']}/iofleet: the ratios are this build against that one")
print(f"  {'phase':22s} {'mdtest':>14s} {'iofleet':>14s} {'ratio':>7s}   {'pairs: median ratio [95% interval], iofleet faster in':s}")
# The interval of the pairs' median ratio, by resampling the pairs (2,000 bootstrap samples):
# where it holds 1.0 the two tools are at parity in this run and the sign of the ratio is noise.
bootstrap = random.Random(1)
def interval(ratios):
    medians = sorted(statistics.median(bootstrap.choices(ratios, k=len(ratios))) for _ in range(2000))
    return medians[50], medians[1949]
for name, values in m_rates.items():
    m, i = statistics.median(values), statistics.median(i_rates.get(name, [0]))
    if m == 0 and i == 0: continue
    # Each pair's own ratio too (the two runs of a pair are next to each other in time, so a
    # drift of the machine or the file system over the benchmark cancels out).
    pair_ratios = [b / a for a, b in zip(values, i_rates.get(name, [])) if a > 0]
    pairs_note = ""
    if len(pair_ratios) == len(values):
        lo, hi = interval(pair_ratios)
        pairs_note = f"{statistics.median(pair_ratios):5.2f} [{lo:.2f}-{hi:.2f}], {sum(r > 1 for r in pair_ratios)}/{len(pair_ratios)}"
    print(f"  {name:22s} {m:14.1f} {i:14.1f} {i / m if m else float('inf'):7.2f}   {pairs_note}")
    if os.environ.get("RAW"):
        print("    " + " ".join(f"{a:.0f}/{b:.0f}" for a, b in zip(values, i_rates.get(name, []))))
mw, iw = statistics.median(m_walls), statistics.median(i_walls)
print(f"  {'whole command (s)':22s} {mw:14.3f} {iw:14.3f} {iw / mw:7.2f}  (iofleet/mdtest; mdtest's includes mpirun and its own 1 s sleep)")
PY
  done
done
