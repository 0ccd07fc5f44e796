#include "worker/rate_pacer.h"

namespace iofleet {

RatePacer::RatePacer(const v1::JobSpec& job, uint64_t seed) : poisson_process_(job.rate_process() == v1::JobSpec::RATE_POISSON), rng_(seed) {
  for (int d = 0; d < 2; ++d) {
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

}  // namespace iofleet
