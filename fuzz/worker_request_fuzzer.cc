// libFuzzer target: arbitrary PrepareRequest and StartRequest messages (protobuf wire bytes,
// mutated by libFuzzer from a corpus of real requests) through the worker's own validation and,
// when they pass, its run preparation: layout in a scratch root, then a WorkerRun started and
// stopped at once. Nothing may crash, trap, hang or allocate without bound.
//
// Input: a 4-byte little-endian length, that many bytes of PrepareRequest, the rest a
// StartRequest (its instant is taken relative to now, so a start within the window happens).
// Mutation is structure-aware (fuzz/proto_mutation.h): most inputs are decoded, one field of
// one message changed through reflection and encoded again, so hostile values reach every
// field; the rest are mutated as bytes, which exercises the decoding.
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fuzz/proto_mutation.h"
#include "google/protobuf/stubs/logging.h"
#include "common/confined_path.h"
#include "job/block_sizes.h"
#include "job/run_limits.h"
#include "proto/worker_service.pb.h"
#include "worker/file_layout.h"
#include "worker/path_policy.h"
#include "worker/request_validation.h"
#include "worker/worker_run.h"

namespace {

constexpr const char* kRoot = "/tmp/iofleet-fuzz-root";
// What one input may make the fuzzer lay out and allocate (the worker's real limit is 4 GiB;
// the fuzzer keeps each input fast).
constexpr uint64_t kLayoutBudget = 64ull << 20;
constexpr uint64_t kMemoryBudget = 256ull << 20;

uint64_t LayoutBytes(const iofleet::v1::RunSpec& spec) {
  uint64_t total = 0;
  for (const auto& job : spec.jobs()) {
    const uint64_t per_thread = job.offset() + iofleet::FileSize(job);
    const uint64_t files = uint64_t{job.numjobs()} * std::max(1u, job.nrfiles());
    if (per_thread > kLayoutBudget || files > kLayoutBudget) return UINT64_MAX;
    total += per_thread * files;
    if (total > kLayoutBudget) return UINT64_MAX;
  }
  return total;
}

}  // namespace

// Splits an input into its two messages; false when the first does not decode.
static bool Decode(const uint8_t* data, size_t size, iofleet::v1::PrepareRequest* prepare, iofleet::v1::StartRequest* start) {
  if (size < 4) return false;
  uint32_t prepare_size;
  std::memcpy(&prepare_size, data, 4);
  data += 4;
  size -= 4;
  if (prepare_size > size) prepare_size = static_cast<uint32_t>(size);
  if (!prepare->ParseFromArray(data, static_cast<int>(prepare_size))) return false;
  (void)start->ParseFromArray(data + prepare_size, static_cast<int>(size - prepare_size));
  return true;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  iofleet::v1::PrepareRequest prepare;
  iofleet::v1::StartRequest start;
  if (rng() % 8 == 0 || !Decode(data, size, &prepare, &start)) return LLVMFuzzerMutate(data, size, max_size);
  const int changes = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < changes; ++i) {
    if (rng() % 6 == 0) {
      iofleet::fuzz::MutateMessage(&start, rng, &LLVMFuzzerMutate);
    } else {
      iofleet::fuzz::MutateMessage(&prepare, rng, &LLVMFuzzerMutate);
    }
  }
  const std::string p = prepare.SerializeAsString(), s = start.SerializeAsString();
  if (4 + p.size() + s.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  const uint32_t prepare_size = static_cast<uint32_t>(p.size());
  std::memcpy(data, &prepare_size, 4);
  std::memcpy(data + 4, p.data(), p.size());
  std::memcpy(data + 4 + p.size(), s.data(), s.size());
  return 4 + p.size() + s.size();
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Byte-mutated inputs often hold invalid UTF-8, which protobuf refuses with a log line each.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char*, int, const std::string&) {});
  ::mkdir(kRoot, 0755);
  (void)iofleet::ConfineOpensBeneath({kRoot});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  iofleet::v1::PrepareRequest prepare;
  iofleet::v1::StartRequest start;
  if (!Decode(data, size, &prepare, &start)) return 0;

  const int64_t now = absl::ToUnixNanos(absl::Now());
  if (!iofleet::ValidatePrepareRequest(prepare).ok()) return 0;
  if (!iofleet::CheckRunMemory(iofleet::EstimateRunMemory(prepare.spec()), kMemoryBudget).ok()) return 0;
  if (LayoutBytes(prepare.spec()) == UINT64_MAX) return 0;
  static const auto* policy = new iofleet::PathPolicy(*iofleet::PathPolicy::Create({kRoot}));
  auto layout = iofleet::LayOutRunFiles(prepare, *policy);
  if (!layout.ok()) return 0;
  // The start instant as sent, but near now: the window check is exercised by Validate, the
  // run itself by a start that is accepted.
  start.set_start_unix_ns(now + start.start_unix_ns() % 1'000'000);
  if (!iofleet::ValidateStartRequest(start, now).ok()) return 0;
  {
    iofleet::WorkerRun run(prepare, std::move(*layout));
    if (run.Start(start.start_unix_ns()).ok()) run.Stop("fuzz input done");
  }  // ~WorkerRun joins every thread
  // What the input laid out goes, so a long fuzzing session does not fill the disk.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot, ignored)) std::filesystem::remove_all(entry.path(), ignored);
  return 0;
}
