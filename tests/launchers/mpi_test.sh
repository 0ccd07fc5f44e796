#!/usr/bin/env bash
# Workers started by mpirun (OpenMPI), the way mdtest users launch: the controller waits
# (--listen --expect-workers 4) and `mpirun -np 4 iofleet-worker --controller ...` starts the
# workers, each taking its worker index from its rank (OMPI_COMM_WORLD_RANK): the report's worker
# i is rank i, for a fio job and for mdtest. mpirun listens on every address, so all of it runs
# in a network namespace of its own (only its loopback inside). Every process ends with the run
# (--sessions 1); the namespace goes with the last of them.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "mpi_test: needs root (a network namespace)" >&2; exit 1; }
command -v mpirun > /dev/null || { echo "mpi_test: mpirun missing (tools/install_deps.sh)" >&2; exit 1; }
bazel build //controller:iofleet //worker:iofleet-worker > /dev/null 2>&1 || { echo "mpi_test: build failed" >&2; exit 1; }
bin=$(bazel info bazel-bin 2>/dev/null)
tmp=$(mktemp -d /tmp/iofleet-mpi-XXXXXX)
cleanup() {
  pkill -f "iofleet-worker --controller 127.0.0.1:17461" 2>/dev/null || true
  pkill -f "mpirun .*iofleet-worker" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "mpi_test: FAIL: $*" >&2; tail -20 "$tmp"/*.err >&2 2>/dev/null; exit 1; }
mkdir -p "$tmp/data"
printf '[w]\nrw=randwrite\nbs=4k\nsize=4m\nruntime=2s\ntime_based\n' > "$tmp/job.fio"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# $1: the controller's command (after iofleet); the workers join it from mpirun.
run_with_mpirun() {
  local name=$1; shift
  timeout 180 unshare -n bash -c '
    set -u
    ip link set lo up
    "$1/controller/iofleet" "${@:4}" --listen 127.0.0.1:17461 --expect-workers 4 --wait 60s --results-dir "$2/results-$3" \
      > "$2/$3.out" 2> "$2/$3.err" &
    ctl=$!
    mpirun -np 4 "$1/worker/iofleet-worker" --controller 127.0.0.1:17461 --allow-root "$2/data" --sessions 1 > "$2/$3-mpirun.out" 2> "$2/$3-mpirun.err"
    mpi=$?
    wait $ctl
    ctl_rc=$?
    echo "controller $ctl_rc mpirun $mpi" > "$2/$3.rc"
    [ $ctl_rc -eq 0 ] && [ $mpi -eq 0 ]
  ' _ "$bin" "$tmp" "$name" "$@" || fail "$name: $(cat "$tmp/$name.rc" 2>/dev/null)"
}
ranks_in_order() {
  python3 - "$tmp/results-$1" <<'PY' || fail "$1: the report's workers are not ranks 0..3 in order"
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/*/result.json")[0]))
ranks = [w.get("launchRank", w.get("launch_rank")) for w in r["workers"]]
assert ranks == [0, 1, 2, 3], ranks
PY
}

run_with_mpirun fio run "$tmp/job.fio" --directory "$tmp/data/fio"
grep -q "write" "$tmp/fio.out" || fail "fio: no report"
ranks_in_order fio
run_with_mpirun mdtest mdtest -n 20 -z 1 -b 2 -u -d "$tmp/data/md"
grep -q "SUMMARY" "$tmp/mdtest.out" || fail "mdtest: no SUMMARY"
ranks_in_order mdtest
if pgrep -f "iofleet-worker --controller 127.0.0.1:17461" > /dev/null; then fail "workers outlived their run"; fi
echo "mpi_test: mpirun -np 4 iofleet-worker: workers numbered by rank (fio and mdtest), all exited with their run"
