// fio's latency distribution ("lat (usec): 2=0.01%, 4=1.93%, ..." and the JSON latency_ns /
// latency_us / latency_ms maps): the share of IOs below each of fio's bounds, counted from an
// exactly merged histogram at its bucket resolution.
#ifndef IOFLEET_CONTROLLER_LATENCY_SHARES_H_
#define IOFLEET_CONTROLLER_LATENCY_SHARES_H_

#include <string>
#include <vector>

#include "histogram/latency_histogram.h"

namespace iofleet {

struct LatencyShare {
  std::string unit;   // "nsec", "usec", "msec"
  std::string bound;  // "2", "4", ..., ">=2000"
  double percent = 0;
};

// In fio's order: nsec bounds below 1 us, then usec, then msec and ">=2000" msec.
std::vector<LatencyShare> LatencyShares(const LatencyHistogram& histogram);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_LATENCY_SHARES_H_
