#include "worker/rate_pacer.h"

#include "absl/strings/str_cat.h"

namespace iofleet {

RatePacer::RatePacer(const v1::JobSpec& job, uint64_t seed) : poisson_process_(job.rate_process() == v1::JobSpec::RATE_POISSON), rng_(seed) {
  for (int d = 0; d < kRateDirections; ++d) {
    if (d < job.rate_iops_size() && job.rate_iops(d) > 0) ns_per_io_[d] = 1e9 / static_cast<double>(job.rate_iops(d));
    if (d < job.rate_bytes_size() && job.rate_bytes(d) > 0) ns_per_byte_[d] = 1e9 / static_cast<double>(job.rate_bytes(d));
    limited_ |= ns_per_io_[d] > 0 || ns_per_byte_[d] > 0;
  }
}

void RatePacer::Charge(int direction, uint64_t length) {
  double gap = ns_per_io_[direction] + ns_per_byte_[direction] * static_cast<double>(length);
  if (gap <= 0) return;
  if (poisson_process_) gap *= poisson_(rng_);
  next_due_ns_[direction] += static_cast<uint64_t>(gap);
}

namespace {
constexpr uint64_t kSettleNs = 2'000'000'000;  // fio: "allow a 2 second settle period"
uint64_t Minimum(const google::protobuf::RepeatedField<uint64_t>& values, int direction) {
  return direction < values.size() ? values.Get(direction) : 0;
}
}  // namespace

MinRateCheck::MinRateCheck(const v1::JobSpec& job)
    : job_(job), cycle_ns_((job.rate_cycle_ms() ? job.rate_cycle_ms() : 1000) * 1'000'000ull) {
  for (int d = 0; d < kRateDirections; ++d) active_ |= Minimum(job.rate_min_bytes(), d) > 0 || Minimum(job.rate_iops_min(), d) > 0;
}

absl::Status MinRateCheck::Check(uint64_t start_ns, uint64_t now_ns) {
  if (now_ns < start_ns + kSettleNs) return absl::OkStatus();
  static const char* const kNames[kRateDirections] = {"read", "write", "trim"};
  for (int d = 0; d < kRateDirections; ++d) {
    if (ios_[d] == 0) continue;  // fio checks only a direction that has moved data
    if (checked_at_ns_[d] != 0) {
      const uint64_t spent_ns = now_ns - checked_at_ns_[d];
      if (spent_ns < cycle_ns_) continue;
      const double seconds = static_cast<double>(spent_ns) / 1e9;
      const double bytes_per_sec = static_cast<double>(bytes_[d] - checked_bytes_[d]) / seconds;
      const double ios_per_sec = static_cast<double>(ios_[d] - checked_ios_[d]) / seconds;
      if (const uint64_t min = Minimum(job_.rate_min_bytes(), d); min > 0 && bytes_per_sec < static_cast<double>(min)) {
        return absl::FailedPreconditionError(absl::StrCat("rate_min=", min, "B/s not met for ", kNames[d], "s: ",
                                                          static_cast<uint64_t>(bytes_per_sec), "B/s over the last ",
                                                          spent_ns / 1'000'000, " ms"));
      }
      if (const uint64_t min = Minimum(job_.rate_iops_min(), d); min > 0 && ios_per_sec < static_cast<double>(min)) {
        return absl::FailedPreconditionError(absl::StrCat("rate_iops_min=", min, " not met for ", kNames[d], "s: ",
                                                          static_cast<uint64_t>(ios_per_sec), " IOPS over the last ",
                                                          spent_ns / 1'000'000, " ms"));
      }
    }
    checked_bytes_[d] = bytes_[d];
    checked_ios_[d] = ios_[d];
    checked_at_ns_[d] = now_ns;
  }
  return absl::OkStatus();
}

}  // namespace iofleet
