#include "controller/latency_shares.h"

#include "absl/strings/str_cat.h"

namespace iofleet {

std::vector<LatencyShare> LatencyShares(const LatencyHistogram& histogram) {
  struct Range {
    const char* unit;
    double unit_ns;
    std::vector<double> bounds;
  };
  static const std::vector<Range> kRanges = {
      {"nsec", 1, {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000}},
      {"usec", 1e3, {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000}},
      {"msec", 1e6, {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000}},
  };
  const double total = static_cast<double>(histogram.count());
  auto share_between = [&](double lower, double upper) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < HistogramLayout::kBucketCount; ++i) {
      const uint64_t c = histogram.BucketCount(i);
      if (c == 0) continue;
      const double v = static_cast<double>(HistogramLayout::BucketMidpoint(i));
      if (v >= lower && v < upper) n += c;
    }
    return total > 0 ? 100.0 * static_cast<double>(n) / total : 0.0;
  };
  std::vector<LatencyShare> shares;
  double lower = 0;
  for (const Range& range : kRanges) {
    for (double bound : range.bounds) {
      const double upper = bound * range.unit_ns;
      // fio's nsec 1000 and usec 2 overlap at 1 us; each IO is counted once, in the first.
      if (upper > lower) shares.push_back({range.unit, absl::StrCat(static_cast<int>(bound)), share_between(lower, upper)});
      lower = std::max(lower, upper);
    }
  }
  shares.push_back({"msec", ">=2000", share_between(2000 * 1e6, 1e300)});
  return shares;
}

}  // namespace iofleet
