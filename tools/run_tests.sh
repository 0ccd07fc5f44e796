#!/usr/bin/env bash
# Runs every test (unit, engine conformance and the multi-process end-to-end tests) and ends
# with one plain line "N passed, M failed" counted from Bazel's per-target results.
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# JuiceFS for the targets test, built once into ~/.cache (about 10 minutes the first time on 2
# cores, then found at once): the JuiceFS tests run every time, never skipped for want of it.
juicefs_env=()
if juicefs=$(tools/build_juicefs.sh 2> "$log.juicefs"); then
  juicefs_env=(--test_env=IOFLEET_JUICEFS="$juicefs")
  juicefs_failed=0
else
  tail -20 "$log.juicefs" >&2
  echo "juicefs: tools/build_juicefs.sh failed: the JuiceFS tests cannot run" >&2
  juicefs_failed=1
fi
rm -f "$log.juicefs"
bazel test //... "${juicefs_env[@]}" ${BAZEL_TEST_FLAGS:-} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|FLAKY|NO STATUS|INCOMPLETE)' "$log")
# One more failed check: counted, and the exit status says so.
count_failure() {
  failed=$((failed + 1))
  [ "$rc" -ne 0 ] || rc=1
}
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1  # a build error: no test could say so itself
  echo "bazel test failed (exit $rc) before tests could report" >&2
fi
[ "$juicefs_failed" -eq 0 ] || count_failure
# The worker's and the aggregator's threads, and the sessions (both ways, resumed after a reset,
# through relays and relays of relays, with real controller, worker, relay and simulator processes
# built with TSAN: a race there makes the controller exit 66, or shows on a relay's stderr), under
# ThreadSanitizer.
# tools/tsan.supp: races reported inside the uninstrumented system gRPC, abseil and OpenSSL libraries.
tsan_tests="//worker:worker_test //controller:run_aggregator_test //controller:session_client_test //tests:dial_in_e2e_test //tests:relay_e2e_test"
if bazel test --config=tsan --test_env=TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp" $tsan_tests \
    ${BAZEL_TEST_FLAGS:-} > "$log.tsan" 2>&1; then
  echo "tsan: $tsan_tests pass under ThreadSanitizer"
  passed=$((passed + 1))
else
  tail -60 "$log.tsan" >&2
  echo "tsan: a test failed or a race was reported under ThreadSanitizer" >&2
  count_failure
fi
rm -f "$log.tsan"
# Layering: the parser and job model (//job/...) link no engine library, so the controller and
# the fuzzers carry none of liburing, libaio or libnfs.
if deps=$(bazel query 'deps(//job/... + //fuzz:fio_job_file_fuzzer + //fuzz:mdtest_options_fuzzer)' 2>/dev/null) && ! grep -qE '^//third_party/system:(uring|aio|nfs)$' <<< "$deps"; then
  echo "layering: //job/... and the parser fuzzers reach no engine library"
  passed=$((passed + 1))
else
  echo "layering: //job/... reaches an engine library (or bazel query failed)" >&2
  count_failure
fi
# Script tests (each bounded in time, each cleaning up after itself): $1 the kind, $2 seconds
# each may take, then the scripts. Their last line on success; their last 40 on failure.
run_script_tests() {
  local kind=$1 limit=$2 t
  shift 2
  for t in "$@"; do
    if timeout "$limit" "$t" > "$log.script" 2>&1; then
      tail -1 "$log.script"
      passed=$((passed + 1))
    else
      tail -40 "$log.script" >&2
      echo "$kind: $t failed" >&2
      count_failure
    fi
  done
  rm -f "$log.script"
}
# The launchers, each against the real thing (tests/launchers/*_test.sh: the Debian package
# installed with apt and its systemd unit verified, ...).
run_script_tests launchers 900 tests/launchers/*_test.sh
# The peers themselves beside iofleet (tests/peers/*_test.sh: the real mdtest, built from
# ../shared/peers by tools/build_mdtest.sh, run with the same options on the same file systems).
run_script_tests peers 1200 tests/peers/*_test.sh
# The field report's topology: JuiceFS exported over NFS, compared with local and JuiceFS
# (tests/field/*_test.sh).
run_script_tests field 900 tests/field/*_test.sh
# The parsers' fuzz targets, for a bounded time each (FUZZ_SECONDS, default 60).
if tools/fuzz.sh 2>&1 | tee "$log.fuzz"; then
  passed=$((passed + $(grep -c "no failure" "$log.fuzz")))
else
  count_failure
fi
rm -f "$log.fuzz"
echo "$passed passed, $failed failed"
exit "$rc"
