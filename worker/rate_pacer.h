// fio's rate, rate_iops and rate_process for one job thread: when the next read or write is
// due. Latency is measured from that due time, not from when the loop got round to issuing
// it, so a device that falls behind cannot hide its backlog (no coordinated omission).
#ifndef IOFLEET_WORKER_RATE_PACER_H_
#define IOFLEET_WORKER_RATE_PACER_H_

#include <cstdint>
#include <random>

#include "proto/job.pb.h"

namespace iofleet {

class RatePacer {
 public:
  // Directions are 0 (read) and 1 (write), as in fio's rate=R,W.
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
  uint64_t next_due_ns_[2] = {0, 0};
  double ns_per_io_[2] = {0, 0}, ns_per_byte_[2] = {0, 0};
  std::mt19937_64 rng_;
  std::exponential_distribution<double> poisson_{1.0};
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_RATE_PACER_H_
