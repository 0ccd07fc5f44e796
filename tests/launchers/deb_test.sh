#!/usr/bin/env bash
# The Debian package, for real (as root): `make deb` builds it and lintian passes it at
# --fail-on warning; `apt-get install ./iofleet_*.deb` installs it; iofleet runs
# configs/quickstart.fio from /usr/bin (two local workers); the standing worker, started as its
# systemd unit would start it (the iofleet user, /etc/default/iofleet-worker's arguments), serves
# a run in its default directory; `systemd-analyze verify` finds nothing to say about the
# installed unit; `apt-get purge` removes it all. The package is purged and every process and
# namespace removed at the end, also when a step fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "deb_test: needs root (installs a package)" >&2; exit 1; }
tmp=$(mktemp -d)
cleanup() {
  pkill -f "^/usr/bin/iofleet-worker .*--allow-root /var/lib/iofleet" 2>/dev/null || true
  if dpkg-query -W -f='${Status}' iofleet 2>/dev/null | grep -q "ok installed"; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q iofleet > /dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }

if dpkg-query -W -f='${Status}' iofleet 2>/dev/null | grep -q "ok installed"; then
  echo "deb_test: iofleet was installed (a test run that did not finish?): purging it first" >&2
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -q iofleet > /dev/null
fi

# make deb: the package, and lintian at --fail-on warning (tools/build_deb.sh fails otherwise).
deb=$(make -s deb | tail -1)
[ -f "$deb" ] || fail "make deb made no package (said: $deb)"
dpkg-deb -f "$deb" Depends | grep -q "libgrpc++1.51" || fail "Depends: lacks the gRPC runtime library"
if dpkg-deb -f "$deb" Depends | grep -q -- "-dev"; then fail "Depends: names a -dev package"; fi
for f in ./usr/bin/iofleet ./usr/bin/iofleet-worker ./lib/systemd/system/iofleet-worker.service ./etc/default/iofleet-worker \
    ./usr/share/man/man1/iofleet.1.gz ./usr/share/man/man1/iofleet-worker.1.gz; do
  dpkg-deb -c "$deb" | awk '{print $6}' | grep -qx "$f" || fail "the package lacks $f"
done

DEBIAN_FRONTEND=noninteractive apt-get install -y -q "./$deb" > "$tmp/apt.log" 2>&1 || { cat "$tmp/apt.log" >&2; fail "apt-get install ./$deb"; }
[ "$(command -v iofleet)" = /usr/bin/iofleet ] || fail "iofleet is not /usr/bin/iofleet after installing"
iofleet version | grep -q "^iofleet $(dpkg-deb -f "$deb" Version | sed 's/-[^-]*$//') " || fail "iofleet version does not match the package"
man -l /usr/share/man/man1/iofleet-worker.1.gz 2>/dev/null | grep -q -- "--allow-root" || fail "man iofleet-worker lacks the options"

# The README's main job, from /usr/bin (the local workers are /usr/bin/iofleet-worker).
(cd "$tmp" && iofleet run "$OLDPWD/configs/quickstart.fio" --results-dir "$tmp/results" > "$tmp/quickstart.txt" 2> "$tmp/quickstart.err") ||
  { cat "$tmp/quickstart.err" >&2; fail "iofleet run configs/quickstart.fio from /usr/bin"; }
grep -q "randwrite" "$tmp/quickstart.txt" && grep -q "randread" "$tmp/quickstart.txt" || fail "the quickstart report lacks its jobs"
python3 - "$tmp/results" <<'PY' || fail "the quickstart's result.json does not show 2 workers with IO done"
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/*/result.json")[0]))
assert len(r["workers"]) == 2, r["workers"]
assert all(int(d.get("ops", 0)) > 0 for j in r["jobs"] for d in j["directions"]), "a job did no IO"
PY

# The standing worker as iofleet-worker.service starts it: its user, its defaults file, in a
# network namespace of its own (the default address is 127.0.0.1:7420).
getent passwd iofleet > /dev/null || fail "installing did not create the iofleet user"
[ "$(stat -c %U /var/lib/iofleet)" = iofleet ] || fail "/var/lib/iofleet does not belong to the iofleet user"
unit=/lib/systemd/system/iofleet-worker.service
user=$(sed -n 's/^User=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
unshare -n bash -c '
  set -e
  ip link set lo up
  set -a; . /etc/default/iofleet-worker; set +a
  eval "runuser -u '"$user"' -- $1" > "$2/worker.out" 2> "$2/worker.err" &
  worker=$!
  for _ in $(seq 1 100); do grep -q "listening on" "$2/worker.out" 2>/dev/null && break; sleep 0.1; done
  iofleet run "$3/configs/quickstart.fio" --hosts 127.0.0.1:7420 --directory /var/lib/iofleet/deb-test --results-dir none > "$2/standing.txt" 2> "$2/standing.err"
  rc=$?
  kill $worker; wait $worker || true
  exit $rc
' _ "$exec_start" "$tmp" "$PWD" || { cat "$tmp/standing.err" "$tmp/worker.err" >&2; fail "a run on the standing worker as its unit starts it"; }
grep -q "randread" "$tmp/standing.txt" || fail "the standing worker's run printed no report"

# The unit, installed: systemd-analyze verify says nothing (it warns about unknown keys, so any
# output is a failure).
out=$(systemd-analyze verify --man=no "$unit" 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"

DEBIAN_FRONTEND=noninteractive apt-get purge -y -q iofleet > "$tmp/purge.log" 2>&1 || { cat "$tmp/purge.log" >&2; fail "apt-get purge iofleet"; }
[ ! -e /usr/bin/iofleet ] && [ ! -e "$unit" ] && [ ! -e /etc/default/iofleet-worker ] || fail "purging left files behind"
echo "deb_test: $deb: lintian clean, installs, runs the quickstart from /usr/bin and as a standing worker, unit verified, purges"
