#!/usr/bin/env bash
# iofleet --ssh against real sshd: two "remote hosts" (network + UTS namespaces h1, h2, each
# with its own sshd: tests/launchers/ssh/hosts.sh). A run with --ssh-copy (the controller sends
# its worker binary) and one with the worker the hosts have (--ssh-worker) each report 2
# workers, h1 then h2, and leave no worker process or temporary binary behind; an interrupted
# run (SIGINT) and a controller killed outright (SIGKILL) both leave no worker running (the
# connection is each worker's lifeline). Everything is removed at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "ssh_test: needs root (network namespaces, sshd)" >&2; exit 1; }
[ -x /usr/sbin/sshd ] || { echo "ssh_test: sshd missing (tools/install_deps.sh)" >&2; exit 1; }
bazel build //controller:iofleet //worker:iofleet-worker > /dev/null 2>&1 || { echo "ssh_test: build failed" >&2; exit 1; }
bin=$(bazel info bazel-bin 2>/dev/null)
base=$(mktemp -d /tmp/iofleet-ssh-XXXXXX)
cleanup() {
  tests/launchers/ssh/hosts.sh down "$base" > /dev/null 2>&1
  [ -n "${KEEP:-}" ] || rm -rf "$base"
}
trap cleanup EXIT
fail() { echo "ssh_test: FAIL: $*" >&2; tail -15 "$base"/*.err >&2 2>/dev/null; exit 1; }
tests/launchers/ssh/hosts.sh up "$base" 2 || fail "the ssh hosts did not come up"
printf '[w]\nrw=randwrite\nbs=4k\nsize=4m\nruntime=2s\ntime_based\nrate_iops=500\n' > "$base/job.fio"
ssh_args=(--ssh h1,h2 --ssh-command "ssh -F $base/ssh_config" --listen 10.213.10.1:0)
workers_on_hosts() { for ns in iofh-h1 iofh-h2; do ip netns pids "$ns"; done | xargs -r ps -o comm= -p 2>/dev/null | grep -c "iofleet-worker" || true; }
two_hosts_in_order() {
  python3 - "$1" <<'PY' || fail "the report of $1 does not have workers h1, h2 in that order"
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/*/result.json")[0]))
names = [w["hostname"] for w in r["workers"]]
assert names == ["h1", "h2"], names
assert not r.get("problems"), r["problems"]
PY
}
nothing_left() {
  for _ in $(seq 1 100); do [ "$(workers_on_hosts)" = 0 ] && break; sleep 0.1; done
  [ "$(workers_on_hosts)" = 0 ] || fail "$1: iofleet-worker processes are left on the hosts"
  [ -z "$(find /tmp -maxdepth 1 -name 'iofleet-worker-ssh.*' -newer "$base/job.fio")" ] || fail "$1: a copied worker binary was left in /tmp"
}

# 1. The controller sends its worker binary over the connection.
timeout 120 "$bin/controller/iofleet" run "$base/job.fio" "${ssh_args[@]}" --ssh-copy --directory "$base/data/copy" \
  --results-dir "$base/results-copy" > "$base/copy.out" 2> "$base/copy.err" || fail "--ssh-copy run"
two_hosts_in_order "$base/results-copy"
nothing_left "--ssh-copy"

# 2. The worker the hosts have (here the same file system, so the same path).
timeout 120 "$bin/controller/iofleet" run "$base/job.fio" "${ssh_args[@]}" --ssh-worker "$bin/worker/iofleet-worker" \
  --directory "$base/data/installed" --results-dir "$base/results-installed" > "$base/installed.out" 2> "$base/installed.err" ||
  fail "--ssh-worker run"
two_hosts_in_order "$base/results-installed"
nothing_left "--ssh-worker"

# 3. Ctrl-C, then 4. the controller killed outright: no worker outlives its controller's interest.
printf '[w]\nrw=randwrite\nbs=4k\nsize=4m\nruntime=60s\ntime_based\nrate_iops=500\n' > "$base/long.fio"
for how in INT KILL; do
  "$bin/controller/iofleet" run "$base/long.fio" "${ssh_args[@]}" --ssh-copy --directory "$base/data/$how" --results-dir none \
    > "$base/$how.out" 2> "$base/$how.err" &
  ctl=$!
  for _ in $(seq 1 300); do [ "$(workers_on_hosts)" = 2 ] && grep -q "workers 2/2" "$base/$how.err" && break; sleep 0.1; done
  [ "$(workers_on_hosts)" = 2 ] || { kill -KILL $ctl; fail "SIG$how: the workers did not start"; }
  kill -"$how" $ctl
  { wait $ctl; } 2> /dev/null || true
  nothing_left "SIG$how"
done
grep -q "interrupted" "$base/INT.err" || fail "the interrupted controller did not say so"
echo "ssh_test: --ssh (with --ssh-copy and with the hosts' worker): 2 workers h1, h2 in order; Ctrl-C and SIGKILL of the controller leave no worker or copied binary"
