#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ (Bazel, --config=fuzz: clang with ASan + UBSan) and runs
# each for a bounded time (FUZZ_SECONDS, default 60) from the corpus in fuzz/corpus, without
# writing new inputs into the repository. Exits non-zero on a crash, hang or sanitizer report.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
command -v clang-14 >/dev/null || { echo "fuzz: clang-14 missing (tools/install_deps.sh installs it)" >&2; exit 1; }
targets=(fio_job_file mdtest_options worker_request prometheus_text)
labels=()
for name in "${targets[@]}"; do labels+=("//fuzz:${name}_fuzzer"); done
out=$(mktemp -d /tmp/iofleet-fuzz-XXXXXX)
# (/tmp/iofleet-fuzz-root: the worker_request fuzzer's allowed root, fuzz/worker_request_fuzzer.cc)
trap 'rm -rf "$out" /tmp/iofleet-fuzz-root' EXIT
# gold warns once per sanitizer symbol it cannot export; the log is shown only on failure.
if ! bazel build --config=fuzz "${labels[@]}" >"$out/build.log" 2>&1; then
  grep -v "Cannot export local symbol" "$out/build.log" | tail -40 >&2
  echo "fuzz: building the fuzz targets failed" >&2
  exit 1
fi
bin=$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz

failed=0
for name in "${targets[@]}"; do
  mkdir -p "$out/corpus-$name"
  cp fuzz/corpus/$name/* "$out/corpus-$name/"
  if (cd "$out" && "$bin/${name}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "corpus-$name" > "fuzz-$name.log" 2>&1); then
    echo "fuzz: $name ran ${seconds}s: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz-$name.log" | awk '{print $2}') inputs, no failure"
  else
    echo "fuzz: $name FAILED" >&2
    tail -40 "$out/fuzz-$name.log" >&2
    failed=1
  fi
done
exit $failed
