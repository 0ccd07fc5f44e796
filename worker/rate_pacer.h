// fio's rate, rate_iops and rate_process for one job thread: when the next read, write or trim is
// due. Latency is measured from that due time, not from when the loop got round to issuing
// it, so a device that falls behind cannot hide its backlog (no coordinated omission).
#ifndef IOFLEET_WORKER_RATE_PACER_H_
#define IOFLEET_WORKER_RATE_PACER_H_

#include <cstdint>
#include <random>

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace iofleet {

// fio's per-direction rates: read, write, trim (rate=R,W,T).
inline constexpr int kRateDirections = 3;

class RatePacer {
 public:
  // Directions are 0 (read), 1 (write) and 2 (trim), as in fio's rate=R,W,T.
  RatePacer(const v1::JobSpec& job, uint64_t seed);

  // Whether any limit applies; without one every IO is due at once.
  bool limited() const { return limited_; }
  // When the next IO of `direction` is due; the first call starts that direction's clock at `now_ns`.
  uint64_t Due(int direction, uint64_t now_ns) {
    if (next_due_ns_[direction] == 0) next_due_ns_[direction] = now_ns;
    return next_due_ns_[direction];
  }
  // An IO of `length` bytes was issued in `direction`: the next one is due a gap later
  // (exponentially distributed around it with rate_process=poisson).
  void Charge(int direction, uint64_t length);

 private:
  const bool poisson_process_;
  bool limited_ = false;
  uint64_t next_due_ns_[kRateDirections] = {};
  double ns_per_io_[kRateDirections] = {}, ns_per_byte_[kRateDirections] = {};
  std::mt19937_64 rng_;
  std::exponential_distribution<double> poisson_{1.0};
};

// fio's rate_min / rate_iops_min with rate_cycle: once the job has run 2 s (fio's settle
// period), each completion at least rate_cycle after the last check measures what the thread
// moved since that check; below the minimum in either direction, the job fails.
class MinRateCheck {
 public:
  explicit MinRateCheck(const v1::JobSpec& job);

  bool active() const { return active_; }
  // A completed IO of `bytes` in `direction` (0 read, 1 write, 2 trim).
  void Completed(int direction, uint64_t bytes) {
    bytes_[direction] += bytes;
    ++ios_[direction];
  }
  // At a completion at `now_ns` of a job that started at `start_ns`: an error naming the
  // minimum and the rate when it was not met.
  absl::Status Check(uint64_t start_ns, uint64_t now_ns);

 private:
  const v1::JobSpec& job_;
  bool active_ = false;
  uint64_t cycle_ns_;
  uint64_t bytes_[kRateDirections] = {}, ios_[kRateDirections] = {};
  uint64_t checked_bytes_[kRateDirections] = {}, checked_ios_[kRateDirections] = {};
  uint64_t checked_at_ns_[kRateDirections] = {};  // 0: no sample yet
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_RATE_PACER_H_
