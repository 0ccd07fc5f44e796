#!/usr/bin/env bash
# iofleet mdtest against the real mdtest (hpc/ior, built by tools/build_mdtest.sh), with the same
# options on the same file system: tmpfs and ext4 on a loop device, 2 and 4 tasks (mpirun -np N;
# N local workers). For every option set it asserts:
#   - the same tree: each tool runs the set with -C on a test directory that does not exist yet
#     (both make it), and `find -printf` (path, type, size, permissions) of what it left is identical, and
#     so is every file's data (md5sum; -G gives both the same seed);
#   - the same test directory handling: -d relative to where the tool starts, and the directory
#     a whole run made is removed at its end by both (left by both after -C alone);
#   - the same output: every line mdtest prints up to "-- finished at" is printed by iofleet in
#     the same order, identical once numbers, timestamps, the tool's name and the command line
#     are masked; the SUMMARY rows have the same names, in the same order, with every number
#     ending in the same column; a row is 0 in one exactly when it is 0 in the other (the same
#     phases run or skipped);
#   - the same statistics: with -i 3, each tool's Std Dev is the sample standard deviation (n-1)
#     of the three per-iteration values its Max, Min and Mean imply;
#   - the same --saveRankPerformanceDetails CSV: header, lines (the "all" line, a line per task
#     and iteration, per task count), and which cells are empty, but for mdtest's "Directory
#     read" (a phase of no calls iofleet does not run) and its tree figures (nonsense in mdtest);
#   - the same --savePerOpDataCSV files: names, header, a line per operation in mdtest's format;
#   - the same order: the tree directories made and removed, one task, as strace sees each
#     tool's calls (mdtest's recursion: a directory before its children when made, after them
#     when removed; copy by copy with directory loops); and every call on an item (made,
#     stat'ed, renamed, opened to read, removed), in the same order (creation and removal
#     directory by directory as mdtest's recursion goes, the others by item number);
#   - the same WARNING lines where operations on items fail (names missing or already there, a
#     file planted in the tree), the run going on in both;
#   - with -a DUMMY (mdtest's backend of no calls), the same output, and nothing made by either.
# mpirun listens on every address: it runs in a network namespace of its own (loopback only).
# Everything it mounts and creates goes at exit, pass or fail.
set -euo pipefail
cd "$(dirname "$0")/../.."
name=mdtest_equivalence
[ "$(id -u)" -eq 0 ] || { echo "$name: needs root (tmpfs, a loop device, a network namespace)" >&2; exit 1; }
mdtest=$(tools/build_mdtest.sh) || { echo "$name: FAIL: cannot build mdtest" >&2; exit 1; }
bazel build //controller:iofleet //worker:iofleet-worker > /dev/null 2>&1 || { echo "$name: build failed" >&2; exit 1; }
iofleet="$(bazel info bazel-bin 2>/dev/null)/controller/iofleet"

tmp=$(mktemp -d /tmp/iofleet-mdtest-eq-XXXXXX)
loop=""
cleanup() {
  for m in "$tmp/tmpfs" "$tmp/ext4"; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "$name: FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/tmpfs" "$tmp/ext4" "$tmp/out"
mount -t tmpfs -o size=512m tmpfs "$tmp/tmpfs"
truncate -s 512M "$tmp/ext4.img"
mkfs.ext4 -q -F "$tmp/ext4.img"
loop=$(losetup --find --show "$tmp/ext4.img")
mount "$loop" "$tmp/ext4"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# $1 tasks, $2 output file, rest: mdtest's options.
run_mdtest() {
  local tasks=$1 out=$2; shift 2
  timeout 120 unshare -n bash -c 'ip link set lo up; exec mpirun -np "$1" "${@:2}"' _ "$tasks" "$mdtest" "$@" > "$out" 2> "$out.err" ||
    fail "mdtest $*: exit $? ($(tail -3 "$out.err"))"
}
run_iofleet() {
  local tasks=$1 out=$2; shift 2
  timeout 120 "$iofleet" mdtest "$@" --local-workers "$tasks" --quiet --results-dir none > "$out" 2> "$out.err" ||
    fail "iofleet mdtest $*: exit $? ($(tail -3 "$out.err"))"
}
# Every path with its type and size, then every file's checksum (its data: -G fixes the seed).
tree_of() { (cd "$1" && find . -mindepth 1 -printf '%P %y %s %m\n' | LC_ALL=C sort && find . -type f -size +0 -exec md5sum {} + | LC_ALL=C sort); }
# Both tools run with a umask of 002, as many HPC sites set it: mdtest's modes (directories
# 0775, files 0664, mknod 0400) then show whole in the trees' permissions.
umask 002

# $1 mdtest's output, $2 iofleet's, $3 what ran: every line mdtest prints up to "-- finished at"
# printed alike, the SUMMARY rows alike, the same phases run, and (-i 3) the same statistics.
same_output() {
  python3 - "$1" "$2" "$3" <<'PY' || exit 1
import math, re, sys
m_lines = open(sys.argv[1]).read().split("\n")
i_lines = open(sys.argv[2]).read().split("\n")
tag = sys.argv[3]

def fail(why):
    print(f"mdtest_equivalence: FAIL: {tag}: {why}\n--- mdtest:\n" + "\n".join(m_lines[:40]) + "\n--- iofleet:\n" + "\n".join(i_lines[:40]), file=sys.stderr)
    sys.exit(1)

def mdtest_part(lines):
    # Up to and including "-- finished at", without mpirun's and the tools' own noise.
    end = next((k for k, l in enumerate(lines) if l.startswith("-- finished at")), None)
    if end is None: fail("no '-- finished at' line")
    return lines[:end + 1]

# A number with the blanks before it: widths differ with the figures (columns are checked below).
# --print-all-procs prints C's %e, and mdtest's "Directory read" (a phase of no calls, timed as
# nothing) can be inf.
NUM = re.compile(r"\s*(-?\d+(\.\d+)?(e[+-]\d+)?|\binf\b)")
def masked(line):
    if line.startswith("Command line used:"): return "Command line used: ..."
    line = re.sub(r"^(mdtest|iofleet-mdtest)-\S+ was launched", "TOOL was launched", line)
    return NUM.sub(" #", line)

m, i = mdtest_part(m_lines), mdtest_part(i_lines)
if [masked(l) for l in m] != [masked(l) for l in i]:
    for k, (a, b) in enumerate(zip([masked(l) for l in m] + [""] * len(i), [masked(l) for l in i] + [""] * len(m))):
        if a != b: fail(f"line {k + 1} differs: mdtest {m[k] if k < len(m) else '(none)'!r}, iofleet {i[k] if k < len(i) else '(none)'!r}")

def rows(lines):
    out, table = [], None
    for l in lines:
        if l.startswith("SUMMARY"): table = l; continue
        if table and l.startswith("   ") and not l.strip().startswith(("Operation", "---")):
            numbers = list(re.finditer(r"-?\d+\.\d{3}", l))
            name = l[:numbers[0].start()].strip() if numbers else l.strip()
            ends = [mt.end() for mt in numbers]
            values = [float(v) for v in re.findall(r"-?\d+\.\d{3}", l)]
            out.append((table, name, ends, values))
    return out

mr, ir = rows(m), rows(i)
if [(t, n, e) for t, n, e, _ in mr] != [(t, n, e) for t, n, e, _ in ir]:
    fail(f"SUMMARY rows differ: mdtest {[(n, e) for _, n, e, _ in mr]}, iofleet {[(n, e) for _, n, e, _ in ir]}")
for (t, n, _, mv), (_, _, _, iv) in zip(mr, ir):
    # (In the rate tables: a phase's time can print as 0.000 and still have run.)
    if t.startswith("SUMMARY rate") and (mv[0] == 0) != (iv[0] == 0):
        fail(f"{n}: run by {'iofleet' if mv[0] == 0 else 'mdtest'} only (max mdtest {mv[0]}, iofleet {iv[0]})")
# Statistics: three iterations -> the middle value is 3*mean - max - min; Std Dev is the
# sample standard deviation of the three (printed to 3 decimals: a tolerance of the rounding).
iterations = int(re.search(r"of (\d+) iterations", next(l for l in m if l.startswith("SUMMARY"))).group(1))
if iterations == 3:
    for who, rs in (("mdtest", mr), ("iofleet", ir)):
        for _, n, _, (mx, mn, mean, sd) in rs:
            mid = 3 * mean - mx - mn
            want = math.sqrt(sum((v - mean) ** 2 for v in (mx, mn, mid)) / 2)
            if abs(want - sd) > 0.002 * 3 + 1e-9 * max(1.0, mx):
                fail(f"{who} {n}: Std Dev {sd} is not the sample standard deviation {want:.3f} of {mx}, {mid:.3f}, {mn} (mean {mean})")
PY
}
# Option sets mdtest users pass: files and directories, -u or a shared directory, deep and wide
# trees, -L, -F, -D, -S, -c, -N, -w/-e, -U, -n rounded down over the directories (50 over 5),
# mknod (-k), O_DIRECT (--posix.odirect), record locks (--posix.rangelocks), stats in random order (-R, --random-seed), every kind of data packet, checked on read (-X) and after the write (--verify-write), -Y, and
# runs over several task counts (-f/-l/-s: a line and tables per count), --showRankStatistics,
# --print-all-procs,
# and mdtest's directory loops (-n with -I, no -u: -n/-I copies of the tree).
sets=(
  "-n 120 -u -w 4096 -e 4096 -G 4242"
  "-I 10 -z 2 -b 3 -u"
  "-I 4 -z 2 -b 3 -L -u -w 1000 -e 1000 -G -7"
  "-F -n 200 -u"
  "-D -n 60 -u"
  "-n 50 -z 1 -b 4"
  "-F -S -n 40"
  "-c -n 30 -w 100 -G 5"
  "-N 1 -n 40 -u -w 513 -e 512 -G 99"
  "-D -n 24 -z 1 -b 2 -C -U"
  "-F -n 20 -u -k"
  "-F -n 20 -u -w 5000 -e 5000 -G 3 --dataPacketType=r -X"
  "-F -n 20 -w 8200 -e 4096 -G 11 --dataPacketType=i -X --verify-write"
  "-F -n 20 -u -w 8200 -e 8200 -G 12 --dataPacketType=o -X -Y"
  "-F -n 30 -u -f 1 -l 2"
  "-D -n 12 -z 1 -b 2 -f 1 -l 2 -s 1 -P --print-all-procs"
  "-n 30 -u -i 2 --showRankStatistics -P --print-all-procs"
  "-n 20 -I 5 -z 1 -b 2"
  "-F -n 30 -I 10 -w 64 -e 64 -G 8"
  "-D -n 12 -I 3 -z 2 -b 2 -L"
  "-F -n 20 -u -w 4096 -e 4096 -G 21 -X --posix.odirect"
  "-F -n 20 -u -w 4096 -e 4096 -G 22 -y --posix.rangelocks"
  "-n 30 -u -R"
  "-F -n 20 --random-seed=9"
)
compared=0
for fs in tmpfs ext4; do
  for tasks in 2 4; do
    for set in "${sets[@]}"; do
      # shellcheck disable=SC2206
      opts=($set)
      tag="$fs/$tasks tasks/$set"
      dir="$tmp/$fs/t"
      # The tree: creation only. Neither tool finds the test directory: each makes it (not its
      # parents) and, as nothing removes it, leaves it with the tree in it. (-X checks reads:
      # with -C alone there are none, and mdtest refuses it. Not with -f/-l: each task count
      # would make the same tree again.)
      if [[ " $set " != *" -l "* ]]; then
      create_opts=()
      for o in "${opts[@]}"; do [ "$o" = -X ] || create_opts+=("$o"); done
      run_mdtest "$tasks" "$tmp/out/m.c" "${create_opts[@]}" -C -d "$dir"
      [ -d "$dir" ] || fail "$tag: mdtest -C left no test directory"
      tree_of "$dir" > "$tmp/out/m.tree"; rm -rf "$dir"
      run_iofleet "$tasks" "$tmp/out/i.c" "${create_opts[@]}" -C -d "$dir"
      [ -d "$dir" ] || fail "$tag: iofleet mdtest -C left no test directory (mdtest leaves it)"
      tree_of "$dir" > "$tmp/out/i.tree"; rm -rf "$dir"
      [ -s "$tmp/out/m.tree" ] || fail "$tag: mdtest -C made nothing"
      diff "$tmp/out/m.tree" "$tmp/out/i.tree" > "$tmp/out/tree.diff" ||
        fail "$tag: the trees differ (< mdtest, > iofleet):
$(head -20 "$tmp/out/tree.diff")"
      fi
      # The output, of the whole run (-i 3 on the first set of each file system and task count),
      # with -d relative to where each tool starts; a whole run removes the directory it made
      # (unless -C alone was asked for).
      extra=()
      [ "$set" = "${sets[0]}" ] && extra=(-i 3)
      (cd "$tmp/$fs" && run_mdtest "$tasks" "$tmp/out/m.out" "${opts[@]}" "${extra[@]}" -d t)
      m_left=$([ -e "$dir" ] && echo yes || echo no); rm -rf "$dir"
      (cd "$tmp/$fs" && run_iofleet "$tasks" "$tmp/out/i.out" "${opts[@]}" "${extra[@]}" -d t)
      i_left=$([ -e "$dir" ] && echo yes || echo no); rm -rf "$dir"
      [ "$m_left" = "$i_left" ] || fail "$tag: mdtest left the test directory behind: $m_left, iofleet: $i_left"
      same_output "$tmp/out/m.out" "$tmp/out/i.out" "$tag"
      compared=$((compared + 1))
    done
  done
done
# --saveRankPerformanceDetails: the CSV's shape, with phases run and skipped (-C -T, -F, -D) and
# over task counts.
csvs=0
for set in "-n 20 -u -i 2" "-F -n 20 -u -C -T" "-D -n 12 -z 1 -b 2 -f 1 -l 2"; do
  # shellcheck disable=SC2206
  opts=($set)
  dir="$tmp/tmpfs/t"
  run_mdtest 2 "$tmp/out/m.csvrun" "${opts[@]}" -d "$dir" --saveRankPerformanceDetails="$tmp/out/m.csv"; rm -rf "$dir"
  run_iofleet 2 "$tmp/out/i.csvrun" "${opts[@]}" -d "$dir" --saveRankPerformanceDetails="$tmp/out/i.csv"; rm -rf "$dir"
  python3 - "$tmp/out/m.csv" "$tmp/out/i.csv" "$set" <<'PY' || exit 1
import sys
m, i, tag = [l.rstrip("\n").split(",") for l in open(sys.argv[1])], [l.rstrip("\n").split(",") for l in open(sys.argv[2])], sys.argv[3]
def fail(why):
    print(f"mdtest_equivalence: FAIL: --saveRankPerformanceDetails {tag}: {why}", file=sys.stderr); sys.exit(1)
if m[0] != i[0]: fail(f"headers differ: {m[0]} / {i[0]}")
if len(m) != len(i): fail(f"{len(m)} lines in mdtest's, {len(i)} in iofleet's")
ignored = {k for k, name in enumerate(m[0]) if name.endswith(("-Directory read", "-Tree creation", "-Tree removal"))}
for n, (a, b) in enumerate(zip(m[1:], i[1:]), 2):
    if len(a) != len(b) or a[:2] != b[:2]:
        fail(f"line {n}: mdtest {a[:2]} ({len(a)} cells), iofleet {b[:2]} ({len(b)} cells)")
    for k in range(2, len(a)):
        if k not in ignored and (a[k] == "") != (b[k] == ""):
            fail(f"line {n}, {m[0][k]}: mdtest {a[k]!r}, iofleet {b[k]!r}")
PY
  csvs=$((csvs + 1))
done
# --savePerOpDataCSV: the same files (a task's per file phase, by the same names), each with the
# same header and as many lines, every line in mdtest's format; with one file for every task
# (-S: but for the removal, which task 0 alone makes, where mdtest's other tasks record a line
# for each call they skip); over task counts, the last count's.
perops=0
for set in "-n 20 -u -i 2 -w 100 -e 100" "-F -n 15 -S" "-F -n 8 -u -f 1 -l 2"; do
  # shellcheck disable=SC2206
  opts=($set)
  dir="$tmp/tmpfs/t"
  rm -rf "$tmp/out/m-perop" "$tmp/out/i-perop"; mkdir -p "$tmp/out/m-perop" "$tmp/out/i-perop"
  run_mdtest 2 "$tmp/out/m.peroprun" "${opts[@]}" -d "$dir" --savePerOpDataCSV="$tmp/out/m-perop/ops"; rm -rf "$dir"
  run_iofleet 2 "$tmp/out/i.peroprun" "${opts[@]}" -d "$dir" --savePerOpDataCSV="$tmp/out/i-perop/ops"; rm -rf "$dir"
  python3 - "$tmp/out/m-perop" "$tmp/out/i-perop" "$set" <<'PY' || exit 1
import os, re, sys
m, i, tag = sys.argv[1], sys.argv[2], sys.argv[3]
def fail(why):
    print(f"mdtest_equivalence: FAIL: --savePerOpDataCSV {tag}: {why}", file=sys.stderr); sys.exit(1)
if sorted(os.listdir(m)) != sorted(os.listdir(i)): fail(f"files differ: mdtest {sorted(os.listdir(m))}, iofleet {sorted(os.listdir(i))}")
line = re.compile(r"\d\.\d{8}e[-+]\d{2},\d\.\d{8}e[-+]\d{2},(\d\.\d{6}e[-+]\d{2}|inf)")
for f in sorted(os.listdir(m)):
    a, b = open(f"{m}/{f}").read().splitlines(), open(f"{i}/{f}").read().splitlines()
    if "-S" in tag.split() and f.startswith("ops-File removal-") and not f.endswith("-00000.csv"):
        if b != ["time,runtime,tp"]: fail(f"{f}: iofleet recorded {len(b) - 1} removals of a task that makes none")
        continue
    if len(a) != len(b) or a[:1] != b[:1]: fail(f"{f}: mdtest {len(a)} lines {a[:1]}, iofleet {len(b)} lines {b[:1]}")
    for n, text in enumerate(b[1:], 2):
        if not line.fullmatch(text): fail(f"{f} line {n}: {text!r} is not in mdtest's format")
PY
  perops=$((perops + 1))
done
# The order of the tree phases' calls. strace -y names each directory descriptor's path, so
# iofleet's mkdirat/unlinkat (a name beside an open directory) read as the whole path, as
# mdtest's mkdir/rmdir give it; only tree directories count (mdtest_tree.*, not iofleet's
# rehearsal names beside them).
tree_calls() {
  sed -nE 's/^([0-9]+ +)?(mkdir|rmdir)\("([^"]*)".* = 0$/\2 \3/p;
           s/^([0-9]+ +)?mkdirat\([0-9]+<([^>]*)>, "([^"]*)".* = 0$/mkdir \2\/\3/p;
           s/^([0-9]+ +)?unlinkat\([0-9]+<([^>]*)>, "([^"]*)", AT_REMOVEDIR\) = 0$/rmdir \2\/\3/p' "$1" |
    sed -E 's|/$||' | grep -E '/mdtest_tree[^/]*$' | grep -v 'iofleet-rehearsal' | sed "s|$2/||"
}
# The order of every call on an item (dir.mdtest.*, file.mdtest.*), whole paths as above: a
# creation is an open with O_CREAT, a read an open without it.
item_calls() {
  python3 - "$1" "$2" <<'PY'
import re, sys
trace, base = sys.argv[1], sys.argv[2].rstrip("/") + "/"
at = r'(?:AT_FDCWD(?:<[^>]*>)?|\d+<([^>]*)>)'
patterns = [
    ("mkdir", re.compile(r'mkdir\("([^"]*)"()'), r" = 0$"),
    ("mkdir", re.compile(r'mkdirat\(' + at + r', "([^"]*)"'), r" = 0$"),
    ("rmdir", re.compile(r'rmdir\("([^"]*)"()'), r" = 0$"),
    ("rmdir", re.compile(r'unlinkat\(' + at + r', "([^"]*)", AT_REMOVEDIR\)'), r" = 0$"),
    ("unlink", re.compile(r'unlinkat\(' + at + r', "([^"]*)", 0\)'), r" = 0$"),
    ("unlink", re.compile(r'unlink\("([^"]*)"()'), r" = 0$"),
    ("stat", re.compile(r'(?:newfstatat|statx)\(' + at + r', "([^"]*)"'), r" = 0$"),
    ("stat", re.compile(r'l?stat\("([^"]*)"()'), r" = 0$"),
    ("open", re.compile(r'openat\(' + at + r', "([^"]*)", ([A-Z_|]+)'), r" = \d+"),
    ("open", re.compile(r'open\("([^"]*)"(), ([A-Z_|]+)'), r" = \d+"),
    ("rename", re.compile(r'renameat2?\(' + at + r', "([^"]*)", ' + at + r', "([^"]*)"'), r" = 0$"),
    ("rename", re.compile(r'rename\("([^"]*)"(), "([^"]*)"()'), r" = 0$"),
]
item = re.compile(r'(^|/)(dir|file)\.mdtest\.\d+\.\d+(-XX)?$')
def whole(directory, leaf):
    path = leaf if directory is None or leaf.startswith("/") or not directory else directory + "/" + leaf
    if not path.startswith("/"): return path
    path = re.sub(r'/+', '/', path)
    return path[len(base):] if path.startswith(base) else path
for line in open(trace):
    line = re.sub(r'^\d+ +', '', line.rstrip("\n"))
    for kind, pattern, ok in patterns:
        m = pattern.match(line)
        if not m or not re.search(ok, line): continue
        g = m.groups()
        if kind == "rename":
            a, b = (whole(g[0], g[1]), whole(g[2], g[3])) if pattern.pattern.startswith("renameat") else (whole(None, g[0]), whole(None, g[2]))
            if item.search(a): print("rename", a, b)
        else:
            path = whole(g[0], g[1]) if len(g) >= 2 and g[1] != "" else whole(None, g[0])
            if kind == "open": kind = "create" if "O_CREAT" in g[-1] else "open"
            if item.search(path): print(kind, path)
        break
PY
}
# Each set runs once under strace in each tool, and both orders are compared on that trace.
# $1: what is compared (tree_calls or item_calls), $2: a call mdtest's trace must have, $3: the
# set, for the message.
same_calls() {
  "$1" "$tmp/out/m.strace" "$dir" > "$tmp/out/m.calls"
  "$1" "$tmp/out/i.strace" "$dir" > "$tmp/out/i.calls"
  grep -qE "$2" "$tmp/out/m.calls" || fail "$3: no $2 for $1 in mdtest's trace"
  diff "$tmp/out/m.calls" "$tmp/out/i.calls" > "$tmp/out/calls.diff" || fail "$3: the order of $1 differs (< mdtest, > iofleet):
$(head -20 "$tmp/out/calls.diff")"
}
ordered=0
for set in "-I 1 -z 2 -b 3 -u" "-D -n 16 -I 2 -z 2 -b 2" "-I 1 -z 3 -b 1 -u" \
           "-I 2 -z 2 -b 2 -u -w 8 -e 8" "-n 16 -I 2 -z 2 -b 2" "-I 2 -z 3 -b 2 -L -u -F" "-n 28 -z 2 -b 2 -D -u"; do
  # shellcheck disable=SC2206
  opts=($set)
  dir="$tmp/tmpfs/t"
  timeout 120 unshare -n bash -c 'ip link set lo up; exec mpirun -np 1 strace -f -y -qq -e trace=mkdir,rmdir,open,openat,unlink,stat,lstat,newfstatat,statx,rename -o "$1" "${@:2}"' _ \
    "$tmp/out/m.strace" "$mdtest" "${opts[@]}" -d "$dir" > "$tmp/out/m.order" 2>&1 || fail "$set: mdtest under strace: exit $?"
  rm -rf "$dir"
  timeout 120 strace -f -y -qq -e trace=mkdirat,unlinkat,openat,newfstatat,statx,renameat,renameat2 -o "$tmp/out/i.strace" "$iofleet" mdtest "${opts[@]}" \
    -d "$dir" --local-workers 1 --quiet --results-dir none > "$tmp/out/i.order" 2>&1 || fail "$set: iofleet mdtest under strace: exit $?"
  rm -rf "$dir"
  same_calls tree_calls '^(mkdir|rmdir) ' "$set"
  same_calls item_calls '^(unlink|rmdir) ' "$set"
  ordered=$((ordered + 1))
done

# --posix.odirect: every file either tool makes or reads is opened with O_DIRECT, and as often.
dir="$tmp/ext4/t"
timeout 120 unshare -n bash -c 'ip link set lo up; exec mpirun -np 1 strace -f -qq -e trace=open,openat -o "$1" "${@:2}"' _ \
  "$tmp/out/m.odirect" "$mdtest" -F -n 12 -u -w 4096 -e 4096 --posix.odirect -d "$dir" > /dev/null 2>&1 || fail "--posix.odirect: mdtest under strace: exit $?"
rm -rf "$dir"
timeout 120 strace -f -qq -e trace=openat -o "$tmp/out/i.odirect" "$iofleet" mdtest -F -n 12 -u -w 4096 -e 4096 --posix.odirect -d "$dir" \
  --local-workers 1 --quiet --results-dir none > /dev/null 2>&1 || fail "--posix.odirect: iofleet mdtest under strace: exit $?"
rm -rf "$dir"
declare -A direct_opens
for tool in m i; do
  opens=$(grep -c 'file\.mdtest\.[0-9.]*"' "$tmp/out/$tool.odirect" || true)
  direct=$(grep 'file\.mdtest\.[0-9.]*"' "$tmp/out/$tool.odirect" | grep -c O_DIRECT || true)
  [ "$opens" -gt 0 ] && [ "$opens" = "$direct" ] || fail "--posix.odirect: $tool opened files $opens times, $direct of them with O_DIRECT"
  direct_opens[$tool]=$direct
done
[ "${direct_opens[m]}" = "${direct_opens[i]}" ] || fail "--posix.odirect: mdtest opened files with O_DIRECT ${direct_opens[m]} times, iofleet ${direct_opens[i]}"

# --posix.rangelocks, -y and --verify-write: the same record locks, fsyncs and opens in both, as
# often: a write lock on each file's bytes around its write (and its fsync, -y), a read lock
# around each read (--verify-write's read-back too, through the file the creation opened), each
# released after (strace's fcntl calls on the files' 4096 bytes); -y without -w syncs nothing in
# either (mdtest's -y syncs a write).
for set in "-w 4096 -e 4096 -y --verify-write --posix.rangelocks" "-y"; do
  # shellcheck disable=SC2206
  opts=(-F -n 12 -u $set)
  timeout 120 unshare -n bash -c 'ip link set lo up; exec mpirun -np 1 strace -f -qq -e trace=fcntl,fsync,open,openat -o "$1" "${@:2}"' _ \
    "$tmp/out/m.locks" "$mdtest" "${opts[@]}" -d "$dir" > /dev/null 2>&1 || fail "$set: mdtest under strace: exit $?"
  rm -rf "$dir"
  timeout 120 strace -f -qq -e trace=fcntl,fsync,openat -o "$tmp/out/i.locks" "$iofleet" mdtest "${opts[@]}" -d "$dir" --local-workers 1 --quiet \
    --results-dir none > /dev/null 2>&1 || fail "$set: iofleet mdtest under strace: exit $?"
  rm -rf "$dir"
  for call in "F_SETLKW, {l_type=F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=4096}" "F_SETLKW, {l_type=F_RDLCK, l_whence=SEEK_SET, l_start=0, l_len=4096}" \
              "F_SETLK, {l_type=F_UNLCK, l_whence=SEEK_SET, l_start=0, l_len=4096}" "fsync("; do
    m=$(grep -c -F "$call" "$tmp/out/m.locks" || true)
    i=$(grep -c -F "$call" "$tmp/out/i.locks" || true)
    [ "$m" = "$i" ] || fail "$set: '$call' $m times in mdtest, $i times in iofleet"
    [ "$set" = "-y" ] || [ "$m" -gt 0 ] || fail "$set: no '$call' in mdtest's calls (the test's premise)"
  done
  m=$(grep -c 'open.*file\.mdtest\.[0-9.]*"' "$tmp/out/m.locks" || true)
  i=$(grep -c 'open.*file\.mdtest\.[0-9.]*"' "$tmp/out/i.locks" || true)
  [ "$m" -gt 0 ] && [ "$m" = "$i" ] || fail "$set: mdtest opened files $m times, iofleet $i times"
done

# -W and -x as IO500 runs mdtest (its mdtest-easy: the files made in a run of their own under a
# stonewall, -C -W, their count kept in the status file -x; stat and removal in runs of their
# own, -T and -r, that read it), 2 tasks on tmpfs, one tool after the other: the same
# output at every step (after a creation the stonewall cut short, mdtest's "Continue stonewall
# hit" line; where the status file cannot be read, its WARNING), and the same status file (the
# count every task has, written after a creation with -W whether the stonewall hit or not).
easy=(-u -L -F -G 7 -N 1)
for tool in mdtest iofleet; do
  dir="$tmp/tmpfs/easy"; sw="$tmp/out/$tool.stonewall"
  rm -f "$sw"
  "run_$tool" 2 "$tmp/out/$tool.sw-create" -n 200 "${easy[@]}" -d "$dir" -x "$sw" -C -W 60
  [ "$(cat "$sw" 2>/dev/null)" = 200 ] || fail "-C -W 60 -x: $tool's status file holds '$(cat "$sw" 2>/dev/null)', not 200 (the stonewall did not hit)"
  "run_$tool" 2 "$tmp/out/$tool.sw-stat" -n 200 "${easy[@]}" -d "$dir" -x "$sw" -T
  "run_$tool" 2 "$tmp/out/$tool.sw-nofile" -n 200 "${easy[@]}" -d "$dir" -x "$tmp/out/no-such-status-file" -T
  "run_$tool" 2 "$tmp/out/$tool.sw-remove" -n 200 "${easy[@]}" -d "$dir" -x "$sw" -r
  rm -rf "$dir"
  # The stonewall hit: 1 s of a creation of millions.
  "run_$tool" 2 "$tmp/out/$tool.sw-hit" -n 5000000 "${easy[@]}" -d "$dir" -x "$sw" -C -W 1
  rm -rf "$dir"
  line=$(grep "^Continue stonewall hit min: " "$tmp/out/$tool.sw-hit") || fail "-C -W 1: $tool printed no 'Continue stonewall hit' line"
  [ "$(cat "$sw")" = "$(sed -E 's/.* max: ([0-9]+) .*/\1/' <<< "$line")" ] || fail "-C -W 1: $tool's status file holds $(cat "$sw"), its output says '$line'"
  # The stonewall over task counts (-f 1 -l 2: 1 task, then 2), a whole run each: the counts,
  # the minimum and the mean are of the tasks that ran.
  "run_$tool" 2 "$tmp/out/$tool.sw-counts" -n 3000000 -u -F -W 1 -f 1 -l 2 -d "$dir"
  rm -rf "$dir"
done
stonewalls=0
for step in create stat nofile remove hit counts; do
  same_output "$tmp/out/mdtest.sw-$step" "$tmp/out/iofleet.sw-$step" "-W/-x, IO500's way: $step"
  stonewalls=$((stonewalls + 1))
done
grep -q "^WARNING: Could not read stonewall status file" "$tmp/out/iofleet.sw-nofile" || fail "-x without a status file: no WARNING"

# Failed operations on items, as mdtest goes past them: a tree made (three levels, where mdtest
# names what it makes and removes with doubled slashes), then items removed behind the tools'
# backs, in every level; a stat and rename run (-T -U) finds names missing, a creation run over
# the tree (-C again) finds names there, and a removal run (-r), with the items removed again and
# a file planted in a tree directory, finds both (and leaves the iteration directory, which
# mdtest warns of). Each tool, one task on tmpfs (two mdtest ranks' WARNINGs, printed as they
# happen, come through mpirun cut into each other mid-line; tests/mdtest_e2e_test.cc has four
# tasks' in iofleet), one after the other: the same WARNING lines (compared as sets), the rest of
# the output alike, exit 0, and the same tree left at every step.
failing_opts=(-n 40 -z 2 -b 2 -u)
gone=(mdtest_tree.0.0/mdtest_tree.0.1/mdtest_tree.0.3/file.mdtest.0.16 mdtest_tree.0.0/mdtest_tree.0.1/mdtest_tree.0.4/dir.mdtest.0.21
      mdtest_tree.0.0/mdtest_tree.0.2/dir.mdtest.0.12 mdtest_tree.0.0/file.mdtest.0.2)
for tool in mdtest iofleet; do
  dir="$tmp/tmpfs/failing"
  "run_$tool" 1 "$tmp/out/$tool.fail-create" "${failing_opts[@]}" -d "$dir" -C
  for item in "${gone[@]}"; do rm -r "$dir/test-dir.0-0/$item"; done
  "run_$tool" 1 "$tmp/out/$tool.fail-stat" "${failing_opts[@]}" -d "$dir" -T -U
  tree_of "$dir" > "$tmp/out/$tool.fail-stat.tree"
  "run_$tool" 1 "$tmp/out/$tool.fail-again" "${failing_opts[@]}" -d "$dir" -C
  tree_of "$dir" > "$tmp/out/$tool.fail-again.tree"
  for item in "${gone[@]}"; do rm -r "$dir/test-dir.0-0/$item"; done
  touch "$dir/test-dir.0-0/mdtest_tree.0.0/mdtest_tree.0.2/planted"
  "run_$tool" 1 "$tmp/out/$tool.fail-remove" "${failing_opts[@]}" -d "$dir" -r
  tree_of "$dir" > "$tmp/out/$tool.fail-remove.tree"
  rm -rf "$dir"
done
failing=0
for step in stat again remove; do
  for tool in mdtest iofleet; do
    grep '^WARNING: ' "$tmp/out/$tool.fail-$step" | LC_ALL=C sort > "$tmp/out/$tool.fail-$step.warnings" || true
    grep -v '^WARNING: ' "$tmp/out/$tool.fail-$step" > "$tmp/out/$tool.fail-$step.rest" || true
  done
  [ -s "$tmp/out/mdtest.fail-$step.warnings" ] || fail "failed items, $step: mdtest printed no WARNING (the test's premise)"
  diff -u "$tmp/out/mdtest.fail-$step.warnings" "$tmp/out/iofleet.fail-$step.warnings" >&2 ||
    fail "failed items, $step: the two tools' WARNING lines differ (above)"
  same_output "$tmp/out/mdtest.fail-$step.rest" "$tmp/out/iofleet.fail-$step.rest" "failed items: $step"
  cmp -s "$tmp/out/mdtest.fail-$step.tree" "$tmp/out/iofleet.fail-$step.tree" ||
    fail "failed items, $step: the trees left differ ($(diff "$tmp/out/mdtest.fail-$step.tree" "$tmp/out/iofleet.fail-$step.tree" | head -5))"
  failing=$((failing + 1))
done

# -a DUMMY, mdtest's DUMMY backend (no file system call: every operation succeeds at once, after
# its --dummy.* delays): each tool with one task (each task says "DUMMY initialized" as it sets
# up and "DUMMY finalized" as it ends, lines two mpirun ranks print at random places in the
# rest), the same output, as many of those lines, and neither makes anything, not even -d.
# (Trees of 111 directories: mdtest times a phase with gettimeofday, and a tree phase of a few
# calls that do nothing often takes under its microsecond, a rate of "inf".)
dummies=0
for set in "-a DUMMY -I 2 -z 2 -b 10 -u" "-a dummy -I 1 -z 2 -b 10 -w 8 -e 8 -X -Y -i 3 --dummy.delay-xfer=10 --dummy.delay-sync=100" \
           "-a DUMMY -F -I 3 -z 2 -b 10 -C -T -w 16 --verify-write --dummy.delay-create=100 --dummy.delay-close=50 --dummy.delay-only-rank0"; do
  # shellcheck disable=SC2206
  opts=($set)
  dir="$tmp/tmpfs/dummy"
  for tool in mdtest iofleet; do
    "run_$tool" 1 "$tmp/out/$tool.dummy" "${opts[@]}" -d "$dir"
    [ ! -e "$dir" ] || fail "$set: $tool made $dir"
  done
  same_output "$tmp/out/mdtest.dummy" "$tmp/out/iofleet.dummy" "$set"
  for line in "WARNING: DUMMY initialized" "WARNING: DUMMY finalized"; do
    m=$(grep -c "^$line\$" "$tmp/out/mdtest.dummy" || true); i=$(grep -c "^$line\$" "$tmp/out/iofleet.dummy" || true)
    [ "$m" = 1 ] && [ "$i" = 1 ] || fail "$set: '$line' printed $m times by mdtest, $i times by iofleet (one task: once)"
  done
  dummies=$((dummies + 1))
done

echo "$name: iofleet mdtest and the real mdtest (built from ../shared/peers) agree on $compared runs: trees, output layout, phases, statistics (tmpfs, ext4; 2 and 4 tasks); on the rank CSV of $csvs runs; on the per-operation CSVs of $perops runs; on the order of the tree phases' and the item phases' calls in $ordered runs; on $stonewalls runs with -W and -x, as IO500 runs them; on $failing runs whose operations fail on items (the same WARNINGs); and on $dummies runs with -a DUMMY"
