#!/usr/bin/env bash
# The worker's interval cut, before and after it became a double-buffer flip, in one
# invocation: //worker:interval_cut_bench built at 0eeb457 (the seqlock cut that retried while
# IO ran, under the run lock) and at this checkout, run back to back. Each prints, per case,
# the IOPS the null engine reached (the harness's ceiling) and how late the 10 ms interval
# reports were after their boundary (median, p99, worst): wake-up plus the cut itself.
#   bench/interval_cut.sh
set -euo pipefail
cd "$(dirname "$0")/.."
before=0eeb457
work=$(mktemp -d /tmp/iofleet-cut-bench-XXXXXX)
cleanup() {
  (cd "$work/before" 2>/dev/null && bazel shutdown >/dev/null 2>&1) || true
  git worktree remove --force "$work/before" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add -q "$work/before" "$before"
(cd "$work/before" && bazel build -c opt //worker:interval_cut_bench >/dev/null 2>&1 && cp bazel-bin/worker/interval_cut_bench "$work/bench.before")
bazel build -c opt //worker:interval_cut_bench >/dev/null 2>&1
cp bazel-bin/worker/interval_cut_bench "$work/bench.after"
for round in 1 2; do
  echo "== before ($before: seqlock cut, retried while IO ran, under the run lock), round $round"
  "$work/bench.before"
  echo "== after (double-buffered counters, one membarrier per cut, no lock held), round $round"
  "$work/bench.after"
done
