#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (ASan + UBSan) and runs each for a bounded
# time (FUZZ_SECONDS, default 60) from the corpus in fuzz/corpus, without writing new inputs
# into the repository. Exits non-zero on a crash, hang or sanitizer report.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
clang=clang++-14
command -v $clang >/dev/null || { echo "fuzz: $clang missing (tools/install_deps.sh installs it)" >&2; exit 1; }
bazel build //proto:job_proto //proto:worker_service_proto >/dev/null 2>&1
out=$(mktemp -d /tmp/iofleet-fuzz-XXXXXX)
trap 'rm -rf "$out"' EXIT
absl=$(pkg-config --libs grpc++ | tr ' ' '\n' | grep -- -labsl | awk '!s[$0]++' | tr '\n' ' ')
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. -Ibazel-bin)
common=(common/nearest_name.cc common/units.cc common/nfs_url.cc common/confined_path.cc common/errno_status.cc common/printable.cc bazel-bin/proto/job.pb.cc)
libs=(-lprotobuf $absl -luring -laio -lnfs -lcrypto -lpthread)

build() {  # name sources...
  local name=$1; shift
  $clang "${flags[@]}" "$@" "${common[@]}" "${libs[@]}" -o "$out/$name"
}
build fio_job_file fuzz/fio_job_file_fuzzer.cc job/fio_job_file.cc job/fio_option_names.cc job/fio_options.cc job/block_sizes.cc \
  job/job_validation.cc job/run_limits.cc job/file_names.cc job/mdtest_tree.cc engines/engine_catalog.cc
# The worker's request validation and run preparation (layout, a WorkerRun started and stopped).
build worker_request fuzz/worker_request_fuzzer.cc fuzz/proto_mutation.cc worker/request_validation.cc worker/file_layout.cc worker/file_system.cc \
  worker/path_policy.cc worker/host_facts.cc worker/worker_run.cc worker/job_thread.cc worker/metadata_task.cc \
  worker/random_offsets.cc worker/block_verify.cc worker/interval_cut.cc common/log.cc histogram/latency_histogram.cc \
  job/job_validation.cc job/run_limits.cc job/file_names.cc job/mdtest_tree.cc job/block_sizes.cc \
  engines/engine_catalog.cc engines/engine_registry.cc engines/posix_files.cc engines/*_engine.cc nfs/nfs_connection.cc nfs/nfs_tree.cc nfs/nfs_rpc.cc \
  bazel-bin/proto/worker_service.pb.cc bazel-bin/proto/histogram.pb.cc bazel-bin/proto/host_facts.pb.cc
build mdtest_options fuzz/mdtest_options_fuzzer.cc controller/mdtest_options.cc job/mdtest_tree.cc job/run_limits.cc job/block_sizes.cc

failed=0
for name in fio_job_file mdtest_options worker_request; do
  mkdir -p "$out/corpus-$name"
  cp fuzz/corpus/$name/* "$out/corpus-$name/"
  if (cd "$out" && "./$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "corpus-$name" > "fuzz-$name.log" 2>&1); then
    echo "fuzz: $name ran ${seconds}s: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz-$name.log" | awk '{print $2}') inputs, no failure"
  else
    echo "fuzz: $name FAILED" >&2
    tail -40 "$out/fuzz-$name.log" >&2
    failed=1
  fi
done
exit $failed
