#!/usr/bin/env bash
# iofleet --slurm on a real 3-node Slurm cluster (slurmctld + three slurmd, each node a network
# namespace with its own address and host name: tests/launchers/slurm/cluster.sh): `sbatch -N 3`
# of configs/slurm/nfs-fsync.sbatch (with a 5-second copy of its job) and of
# configs/slurm/mdtest.sbatch give reports with 3 workers, one per node, worker i on node i+1
# (SLURM_PROCID), and leave nothing behind: squeue empty, no worker process. compare --slurm
# starts workers for each target; a run that fails (refused at prepare) and a Ctrl-C (SIGINT to
# the controller) while the workers run both still end the worker step. The cluster is stopped
# and removed at the end, also when a step fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "slurm_test: needs root (namespaces, slurmd)" >&2; exit 1; }
for tool in sbatch slurmctld slurmd munged; do command -v "$tool" > /dev/null || { echo "slurm_test: $tool missing (tools/install_deps.sh)" >&2; exit 1; }; done
repo=$PWD
bin=$(bazel info bazel-bin 2>/dev/null)
bazel build //controller:iofleet //worker:iofleet-worker > /dev/null 2>&1 || { echo "slurm_test: build failed" >&2; exit 1; }
base=$(mktemp -d /tmp/iofleet-slurm-XXXXXX)
chmod 755 "$base"
cleanup() {
  tests/launchers/slurm/cluster.sh stop "$base" > /dev/null 2>&1
  pkill -f "iofleet-worker --controller node1:" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$base"
}
trap cleanup EXIT
fail() { echo "slurm_test: FAIL: $*" >&2; for f in "$base"/jobs/*.out; do [ -f "$f" ] && { echo "== $f" >&2; tail -30 "$f" >&2; }; done; exit 1; }
in_head() { tests/launchers/slurm/in-host.sh "$base" head "$@"; }

tests/launchers/slurm/cluster.sh start "$base" || fail "the Slurm cluster did not start"
mkdir -p "$base/jobs" "$base/data" "$base/results"
# The example job, 5 s instead of 60 (the same 56 fsync writers per node).
sed 's/^runtime=.*/runtime=5/' configs/nfs-fsync-56-jobs.fio > "$base/nfs-fsync-5s.fio"

nothing_left() {
  [ -z "$(in_head squeue -h 2>/dev/null)" ] || fail "squeue is not empty after the job: $(in_head squeue -h)"
  if pgrep -f "iofleet-worker --controller" > /dev/null; then fail "iofleet-worker processes outlived the job: $(pgrep -af 'iofleet-worker --controller')"; fi
}
# Worker i of the report is on node i+1, once each.
three_nodes() {
  python3 - "$1" <<'PY' || fail "the report of $1 does not have its 3 workers on node1..node3 in rank order"
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/*/result.json")[0]))
names = [w["hostname"] for w in r["workers"]]
assert names == ["node1", "node2", "node3"], names
assert not r.get("problems"), r["problems"]
PY
}

# 1. fio job: sbatch -N 3 of the example script.
in_head env IOFLEET="$bin/controller/iofleet" IOFLEET_JOB="$base/nfs-fsync-5s.fio" IOFLEET_ARGS="--results-dir $base/results/fio" \
  timeout 300 sbatch --wait -N 3 --output "$base/jobs/fio-%j.out" --chdir "$repo" configs/slurm/nfs-fsync.sbatch "$base/data/fio" > /dev/null ||
  fail "sbatch -N 3 configs/slurm/nfs-fsync.sbatch"
out=$(ls "$base"/jobs/fio-*.out)
grep -q "fsync-writers" "$out" || fail "the fio job's report is not in its output"
three_nodes "$base/results/fio"
nothing_left

# 2. mdtest: sbatch -N 3 of the example script.
in_head env IOFLEET="$bin/controller/iofleet" IOFLEET_ARGS="--results-dir $base/results/mdtest" \
  timeout 300 sbatch --wait -N 3 --output "$base/jobs/mdtest-%j.out" --chdir "$repo" configs/slurm/mdtest.sbatch "$base/data/mdtest" > /dev/null ||
  fail "sbatch -N 3 configs/slurm/mdtest.sbatch"
grep -q "SUMMARY" "$base"/jobs/mdtest-*.out || fail "the mdtest report (SUMMARY) is not in its output"
three_nodes "$base/results/mdtest"
nothing_left

# 3. compare --slurm: a run per target, each with workers of its own; and a run that fails (the
# workers refuse it at prepare: more memory than their --max-run-memory) still ends its step.
printf '[w]\nrw=randwrite\nbs=4k\nsize=1m\nruntime=1s\ntime_based\n' > "$base/short.fio"
printf '[big]\nrw=randwrite\nbs=1g\nsize=8g\niodepth=8\nioengine=libaio\nruntime=1s\ntime_based\n' > "$base/big.fio"
cat > "$base/compare.sbatch" <<SB
#!/bin/bash
"$bin/controller/iofleet" compare "$base/short.fio" --slurm --target a="$base/data/a" --target b="$base/data/b" --results-dir none \
  > "$base/jobs/compare-report.txt" 2> "$base/jobs/compare-err.txt"
echo "compare exit \$?"
"$bin/controller/iofleet" run "$base/big.fio" --slurm --directory "$base/data/big" --results-dir none \
  > /dev/null 2> "$base/jobs/big-err.txt"
echo "big exit \$?"
SB
in_head timeout 300 sbatch --wait -N 3 --output "$base/jobs/compare-%j.out" "$base/compare.sbatch" > /dev/null || true
grep -q "compare exit 0" "$base"/jobs/compare-*.out || fail "compare --slurm: $(tail -3 "$base/jobs/compare-err.txt")"
[ "$(grep -c "starting 3 worker(s)" "$base/jobs/compare-err.txt")" -eq 2 ] || fail "compare --slurm did not start workers for each target"
grep -q "big exit [12]" "$base"/jobs/compare-*.out || fail "a run refused at prepare did not fail: $(cat "$base"/jobs/compare-*.out)"
grep -q "max-run-memory" "$base/jobs/big-err.txt" || fail "the refused run does not say why: $(tail -3 "$base/jobs/big-err.txt")"
nothing_left

# 4. Ctrl-C: the controller interrupted while its workers run still ends their step.
cat > "$base/interrupt.sbatch" <<SB
#!/bin/bash
"$bin/controller/iofleet" run "$base/nfs-fsync-5s.fio" --slurm --directory "$base/data/int" --results-dir none \
  > "$base/jobs/int-report.txt" 2> "$base/jobs/int-err.txt" &
ctl=\$!
for _ in \$(seq 1 300); do grep -q "iofleet: .*s .*%" "$base/jobs/int-err.txt" 2>/dev/null && break; sleep 0.1; done
kill -INT \$ctl
wait \$ctl
echo "controller exit \$?"
SB
in_head timeout 300 sbatch --wait -N 3 --output "$base/jobs/int-%j.out" "$base/interrupt.sbatch" > /dev/null || true
grep -q "controller exit" "$base"/jobs/int-*.out || fail "the interrupted run's batch script did not finish"
grep -qi "interrupt" "$base/jobs/int-err.txt" || fail "the interrupted controller did not say it was interrupted: $(tail -3 "$base/jobs/int-err.txt")"
nothing_left
echo "slurm_test: sbatch -N 3 of configs/slurm/nfs-fsync.sbatch and mdtest.sbatch: 3 workers on node1..3 in rank order; compare --slurm; a refused run and Ctrl-C end the worker step; nothing left running"
