#!/usr/bin/env bash
# The field report's topology and workloads, on one machine: JuiceFS (FUSE) exported over NFS by
# nfs-ganesha (tools/juicefs_nfs.sh), and one `iofleet compare` per workload of a local
# directory, the JuiceFS mount and NFS over JuiceFS (the nfs engine, no client mount), with
# JuiceFS's own metrics and the server host's node exporter scraped (--target-metrics). Its fio
# jobs (configs/field-report.fio: 4 KiB fsync=1 writes, then 16 MiB writes) and mdtest (-I 10
# -z 2 -b 5 -w 131072 -e 131072 -t -u) are the field's, scaled to this machine: one compare for
# the fio jobs, one for mdtest. Checked: every run completes on every target with exact
# counts (an fsync per write but each thread's last; whole 16 MiB blocks; 620 files created, read and removed), the
# NFS runs go through the nfs engine, and JuiceFS saw the clients' work — on the JuiceFS target
# at least the clients' writes as FUSE writes, through NFS the NFS server's writes reaching
# JuiceFS and its object store. Everything is removed at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "nfs_over_juicefs_test: needs root (FUSE, network namespace)" >&2; exit 1; }
bazel build //controller:iofleet //worker:iofleet-worker > /dev/null 2>&1 || { echo "nfs_over_juicefs_test: build failed" >&2; exit 1; }
bin=$(bazel info bazel-bin 2>/dev/null)
base=$(mktemp -d /tmp/iofleet-field-XXXXXX)
state=$base/jfsnfs
cleanup() {
  tools/juicefs_nfs.sh stop "$state" > /dev/null 2>&1 || true
  [ -n "${KEEP:-}" ] || rm -rf "$base"
}
trap cleanup EXIT
fail() { echo "nfs_over_juicefs_test: FAIL: $*" >&2; tail -15 "$base"/*.err >&2 2>/dev/null; exit 1; }

mapfile -t target < <(tools/juicefs_nfs.sh start "$state" 2> "$base/start.err") || fail "JuiceFS over NFS did not come up"
[ "${#target[@]}" -eq 4 ] || fail "tools/juicefs_nfs.sh start printed ${#target[@]} lines, not 4"
mount=${target[0]} url=${target[1]} metrics=${target[2]} node=${target[3]}
mkdir -p "$base/local"
started=$(date +%s)

# One compare per workload, three targets each, inside the NFS server's namespace.
compare() {
  local name=$1
  shift
  timeout 300 ip netns exec iofleet-nfs "$bin/controller/iofleet" compare "$@" --target local="$base/local/$name" \
    --target juicefs="$mount/$name" --target nfs-juicefs="$url/$name" --target-metrics juicefs="$metrics" --target-metrics nfs-server="$node" \
    --results-dir "$base/results-$name" --quiet > "$base/$name.out" 2> "$base/$name.err" || fail "compare $name"
}
compare fio configs/field-report.fio
compare mdtest --mdtest "-I 10 -z 2 -b 5 -w 131072 -e 131072 -t -u"

python3 - "$base" <<'PY' || fail "the results are not what the jobs did"
import glob, json, sys
base = sys.argv[1]

def result(name, target):
    [path] = glob.glob(f"{base}/results-{name}/*/{target}/1/result.json")
    return json.load(open(path))

def fuse(target_metrics, method):
    return sum(s.get("value", 0) for s in target_metrics["run_total"]
               if s["name"] == "juicefs_fuse_ops_total" and f'method="{method}"' in s.get("labels", ""))

def total(target_metrics, name):
    return sum(s.get("count", s.get("value", 0)) for s in target_metrics["run_total"] if s["name"] == name)

for target in ("local", "juicefs", "nfs-juicefs"):
    r = result("fio", target)
    assert not r.get("problems"), (target, r["problems"])
    assert [j["name"] for j in r["jobs"]] == ["fsync-4k", "write-16m"], target
    dirs = {d["direction"]: d for d in r["jobs"][0]["directions"]}
    writes, syncs = int(dirs["write"]["ops"]), int(dirs["sync"]["ops"])
    # fsync=1: an fsync after each write, but (as in fio: 14,715 writes, 14,712 fsyncs for
    # this job on a local disk for 3 s) a thread stopped by the runtime leaves its last write
    # without one: at most one per thread (2 workers x 8 threads).
    assert writes > 0 and 0 <= writes - syncs <= 16, ("one fsync per write", target, writes, syncs)
    assert int(dirs["write"]["bytes"]) == 4096 * writes, target
    assert int(dirs["write"].get("errors", 0)) == 0, target
    tm, node = r["target_metrics"]
    # The NFS server host's node exporter, scraped beside JuiceFS: its CPUs were busy.
    assert node["name"] == "nfs-server" and len(node["intervals"]) >= 5, node.get("problems")
    assert any(s["name"] == "node_cpu_seconds_total" and s.get("value", 0) > 0 for s in node["run_total"]), "no CPU time on the server"
    # (A scrape that failed on a loaded machine is a problem of tm, and its interval is covered
    # by the next scrape: the run totals below hold either way.)
    assert len(tm["intervals"]) >= 5, (target, len(tm["intervals"]), tm.get("problems"))
    if target == "juicefs":
        assert fuse(tm, "write") >= writes, ("JuiceFS saw fewer FUSE writes than the clients did", fuse(tm, "write"), writes)
        assert fuse(tm, "fsync") >= syncs, ("JuiceFS saw fewer fsyncs than the clients did", fuse(tm, "fsync"), syncs)
    if target == "nfs-juicefs":
        # NFS WRITEs and COMMITs reach JuiceFS as FUSE writes and fsyncs, then objects.
        assert fuse(tm, "write") > 0 and fuse(tm, "fsync") > 0, ("nothing reached JuiceFS through NFS", fuse(tm, "write"), fuse(tm, "fsync"))
        assert total(tm, "juicefs_object_request_durations_histogram_seconds") > 0, "no object store request"
    resolved = json.load(open(glob.glob(f"{base}/results-fio/*/{target}/1/job-resolved.json")[0]))
    engine = resolved["jobs"][0]["ioengine"]
    assert engine == ("nfs" if target == "nfs-juicefs" else "libaio"), (target, engine)

    dirs = {d["direction"]: d for d in r["jobs"][1]["directions"]}
    written = int(dirs["write"]["bytes"])
    assert written > 0 and written % (16 << 20) == 0, ("whole 16 MiB blocks", target, written)
    assert int(dirs["write"].get("errors", 0)) == 0, target
    # compare's table names each job's figures
    table = json.load(open(glob.glob(f"{base}/results-fio/*/compare.json")[0]))
    names = [m["name"] for m in table["metrics"]]
    assert "fsync-4k write IOPS" in names and "write-16m write bandwidth" in names, names

for target in ("local", "juicefs", "nfs-juicefs"):
    r = result("mdtest", target)
    assert not r.get("problems"), (target, r["problems"])
    items = {p["operation"]: int(p["items"]) for p in r["phases"]}
    # -I 10 -z 2 -b 5: 1 + 5 + 25 directories of 10 items each, per task; 2 tasks.
    for op in ("File creation", "File read", "File removal"):
        assert items[op] == 620, (target, op, items[op])
    assert r["target_metrics"], target
PY
for dir in "$base/local/mdtest" "$mount/mdtest" "$mount/export/mdtest"; do
  [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || fail "mdtest left items in $dir"
done
echo "nfs_over_juicefs: local, JuiceFS and NFS over JuiceFS ran the field's fio jobs and mdtest, counts exact, JuiceFS's metrics agree ($(( $(date +%s) - started )) s)"
