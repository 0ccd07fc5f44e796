// Micro-benchmark: nanoseconds per Record() on the IO path (LiveLatencyHistogram, the one the
// worker's IO threads use) and on the plain LatencyHistogram. Prints, asserts nothing.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "histogram/latency_histogram.h"

int main() {
  constexpr int kSamples = 1 << 16;
  constexpr int kRounds = 400;
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> ln(10.0, 2.0);
  std::vector<uint64_t> values(kSamples);
  for (uint64_t& v : values) v = static_cast<uint64_t>(ln(rng));

  auto time_ns_per_record = [&](auto& histogram) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < kRounds; ++r) {
      for (uint64_t v : values) histogram.Record(v);
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    return std::chrono::duration<double, std::nano>(elapsed).count() / (double(kSamples) * kRounds);
  };
  iofleet::LiveLatencyHistogram live;
  iofleet::LatencyHistogram plain;
  const double live_ns = time_ns_per_record(live);
  const double plain_ns = time_ns_per_record(plain);
  std::printf("LiveLatencyHistogram::Record: %.2f ns/record (%d records)\n", live_ns, kSamples * kRounds);
  std::printf("LatencyHistogram::Record:     %.2f ns/record\n", plain_ns);
  std::printf("check: %llu %llu\n", static_cast<unsigned long long>(live.Snapshot().count()),
              static_cast<unsigned long long>(plain.count()));
  return 0;
}
