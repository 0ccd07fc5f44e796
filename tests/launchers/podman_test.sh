#!/usr/bin/env bash
# The container image, run for real: `make image` builds localhost/iofleet:VERSION from Debian
# packages and the .deb (podman, no registry); then a controller and two workers run as
# containers on the host network — the controller waiting (--listen 127.0.0.1:PORT
# --expect-workers 2), the workers dialling it (--sessions 1) — on a directory bind-mounted into
# all three, as the image's unprivileged user. The report has 2 workers; every container is
# removed at the end, also on failure (the image and the base stay in ~/.cache/iofleet-image).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "podman_test: needs root (rootful podman)" >&2; exit 1; }
build_log=$(mktemp /tmp/iofleet-image-build-XXXXXX.log)
trap 'rm -f "$build_log"' EXIT
image=$(tools/build_image.sh 2> "$build_log" | tail -1) || { tail -20 "$build_log" >&2; exit 1; }
[[ "$image" == localhost/iofleet:* ]] || { tail -20 "$build_log" >&2; echo "podman_test: make image gave '$image'" >&2; exit 1; }
cache=${IOFLEET_IMAGE_CACHE:-$HOME/.cache/iofleet-image}
export CONTAINERS_CONF=$PWD/tools/podman/containers.conf CONTAINERS_STORAGE_CONF=$cache/storage.conf
tmp=$(mktemp -d /tmp/iofleet-podman-XXXXXX)
tag=iofleet-test-$$
cleanup() {
  podman rm -f -t 0 "$tag-ctl" "$tag-w0" "$tag-w1" > /dev/null 2>&1 || true
  rm -rf "$tmp" "$build_log"
}
trap cleanup EXIT
fail() { echo "podman_test: FAIL: $*" >&2; podman logs "$tag-ctl" 2>&1 | tail -20 >&2 || true; exit 1; }
mkdir -p "$tmp/work" "$tmp/results"
chmod 0777 "$tmp" "$tmp/work" "$tmp/results"  # the image's iofleet user writes there
printf '[w]\nrw=randwrite\nbs=4k\nsize=4m\nruntime=2s\ntime_based\n' > "$tmp/job.fio"
port=$((20000 + RANDOM % 20000))
podman run -d --name "$tag-ctl" --network=host -v "$tmp:/data" "$image" \
  iofleet run /data/job.fio --listen "127.0.0.1:$port" --expect-workers 2 --wait 60s --directory /data/work --results-dir /data/results \
  --output /data/report.txt > /dev/null || fail "the controller container did not start"
for i in 0 1; do
  podman run -d --name "$tag-w$i" --network=host -v "$tmp:/data" "$image" \
    iofleet-worker --controller "127.0.0.1:$port" --allow-root /data/work --sessions 1 > /dev/null || fail "worker container $i did not start"
done
code=$(timeout 120 podman wait "$tag-ctl") || fail "the controller container did not finish"
[ "$code" = 0 ] || fail "the controller container exited $code"
for i in 0 1; do
  [ "$(timeout 30 podman wait "$tag-w$i")" = 0 ] || fail "worker container $i did not leave after its run"
done
grep -q "on 2 workers" "$tmp/report.txt" || fail "the report does not show 2 workers: $(head -3 "$tmp/report.txt")"
python3 - "$tmp/results" <<'PY' || fail "result.json: not 2 workers that did IO"
import glob, json, sys
r = json.load(open(glob.glob(sys.argv[1] + "/*/result.json")[0]))
done = r.get("workers_completed", r.get("workersCompleted"))
assert len(r["workers"]) == 2 and done == 2, (len(r["workers"]), done)
PY
[ "$(stat -c %U "$tmp/work")" = root ] && [ -n "$(find "$tmp/work" -type f ! -user root | head -1)" ] ||
  fail "the workers' files were not written by the image's unprivileged user"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
echo "podman_test: $image: a controller and 2 workers as containers (host network, unprivileged) ran a job; containers removed"
