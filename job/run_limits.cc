#include "job/run_limits.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "job/block_sizes.h"

namespace iofleet {
namespace {

std::string Duration(uint64_t ns) { return absl::FormatDuration(absl::Nanoseconds(static_cast<int64_t>(std::min<uint64_t>(ns, INT64_MAX)))); }

absl::Status CheckRange(uint64_t ns, uint64_t min, uint64_t max, absl::string_view what) {
  if (ns < min) return absl::InvalidArgumentError(absl::StrCat(what, " ", Duration(ns), " is below the minimum of ", Duration(min)));
  if (ns > max) return absl::InvalidArgumentError(absl::StrCat(what, " ", Duration(ns), " is above the maximum of ", Duration(max)));
  return absl::OkStatus();
}

std::string Bytes(uint64_t n) {
  if (n >= (1ull << 30)) return absl::StrFormat("%.1f GiB", static_cast<double>(n) / (1ull << 30));
  return absl::StrFormat("%.1f MiB", static_cast<double>(n) / (1ull << 20));
}

// Saturating arithmetic: an estimate over a limit is all that matters, never its wrap-around.
uint64_t Add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t Mul(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// What one thread of `job` holds: its statistics (five directions of three live histograms
// and their interval cutters), and its buffers.
constexpr uint64_t kPerThreadStateBytes = 1ull << 20;
constexpr uint64_t kPerFileBytes = 512;

uint64_t ThreadMemory(const v1::JobSpec& job) {
  uint64_t bytes = kPerThreadStateBytes;
  if (job.has_metadata()) {
    const v1::MetadataPhase& phase = job.metadata();
    return Add(bytes, std::max(phase.write_bytes(), phase.read_bytes()));
  }
  bytes = Add(bytes, Mul(std::max(1u, job.iodepth()), Add(MaxBlockSize(job), 4096)));
  bytes = Add(bytes, Mul(std::max(1u, job.nrfiles()), kPerFileBytes));
  if (job.verify() != v1::JobSpec::VERIFY_NONE && job.do_verify()) {
    // do_verify remembers every write of a pass (offset, length), then queues them to read back.
    const uint64_t min_bs = std::max<uint64_t>(1, MinBlockSize(job));
    const uint64_t pass = job.io_size() ? job.io_size() : job.size();
    bytes = Add(bytes, Mul(pass / min_bs + 1, 16 + 24));
  }
  return bytes;
}

}  // namespace

absl::Status CheckIntervalNs(uint64_t ns, absl::string_view what) { return CheckRange(ns, kMinIntervalNs, kMaxIntervalNs, what); }

absl::StatusOr<int> ParseLocalWorkers(absl::string_view value) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 1 || n > kMaxLocalWorkers) {
    return absl::InvalidArgumentError(absl::StrCat("--local-workers must be a number from 1 to ", kMaxLocalWorkers, " (got '", value, "')"));
  }
  return n;
}

absl::Status CheckLeaseNs(uint64_t ns, absl::string_view what) { return CheckRange(ns, kMinLeaseNs, kMaxLeaseNs, what); }

absl::Status CheckStartInstant(int64_t start_unix_ns, int64_t now_unix_ns) {
  // Compared as differences in 128 bits: any pair of int64 values is fine.
  const __int128 lead = static_cast<__int128>(start_unix_ns) - now_unix_ns;
  if (lead > kMaxStartLeadNs) {
    return absl::InvalidArgumentError(absl::StrCat("start instant ", start_unix_ns, " is ", Duration(static_cast<uint64_t>(std::min<__int128>(lead, INT64_MAX))),
                                                   " ahead of this worker's clock (at most ", Duration(kMaxStartLeadNs),
                                                   "): refused; check the clocks of the controller and the worker"));
  }
  if (-lead > kMaxStartLagNs) {
    return absl::InvalidArgumentError(absl::StrCat("start instant ", start_unix_ns, " is ", Duration(static_cast<uint64_t>(std::min<__int128>(-lead, INT64_MAX))),
                                                   " in the past by this worker's clock (at most ", Duration(kMaxStartLagNs),
                                                   " late is started at once): refused; check the clocks of the controller and the worker"));
  }
  return absl::OkStatus();
}

absl::Status CheckReportRate(size_t jobs, uint64_t interval_ns) {
  if (interval_ns == 0 || static_cast<double>(jobs) * 1e9 / static_cast<double>(interval_ns) <= kMaxReportsPerSecond) return absl::OkStatus();
  const uint64_t shortest = (jobs * 1'000'000'000ull + kMaxReportsPerSecond - 1) / kMaxReportsPerSecond;
  return absl::InvalidArgumentError(absl::StrCat(jobs, " jobs reported every ", Duration(interval_ns), " make more than ", kMaxReportsPerSecond,
                                                 " interval reports a second: use an interval of at least ", Duration(shortest)));
}

absl::Status CheckRunId(absl::string_view run_id, absl::string_view field) {
  if (run_id.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " is empty"));
  if (run_id.size() > kMaxRunIdLength) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is ", run_id.size(), " bytes long, above the maximum of ", kMaxRunIdLength));
  }
  for (const char c : run_id) {
    if (c < 0x21 || c > 0x7e) return absl::InvalidArgumentError(absl::StrCat(field, " may hold only printable ASCII without spaces"));
  }
  return absl::OkStatus();
}

absl::Status CheckWorkerPlace(uint32_t worker_index, uint32_t worker_count) {
  if (worker_count == 0 || worker_count > kMaxWorkerCount) {
    return absl::InvalidArgumentError(absl::StrCat("worker_count ", worker_count, " is outside 1..", kMaxWorkerCount));
  }
  if (worker_index >= worker_count) {
    return absl::InvalidArgumentError(absl::StrCat("worker_index ", worker_index, " is not below worker_count ", worker_count));
  }
  return absl::OkStatus();
}

uint64_t EstimateRunMemory(const v1::RunSpec& spec) {
  uint64_t total = 0;
  for (const v1::JobSpec& job : spec.jobs()) total = Add(total, Mul(job.numjobs(), ThreadMemory(job)));
  return total;
}

absl::Status CheckRunMemory(uint64_t estimate, uint64_t limit) {
  if (estimate <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("the run needs about ", Bytes(estimate), " of memory on this worker (",
                                                   "per job thread: statistics, IO buffers of iodepth x bs, do_verify's write list), above its limit of ",
                                                   Bytes(limit), " (iofleet-worker --max-run-memory); use fewer jobs or threads, "
                                                   "a smaller iodepth or bs, or raise the limit"));
}

}  // namespace iofleet
