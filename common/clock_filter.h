// A peer's clock offset from probe round trips (controller -> worker -> controller), filtered as
// NTP filters its samples: of the last few, the one with the shortest round trip wins. A probe
// that waited in a busy host's queues measures the wait, not the clock: its offset is off by up
// to half its round trip, and the shortest round trip is the one that waited least.
#ifndef IOFLEET_COMMON_CLOCK_FILTER_H_
#define IOFLEET_COMMON_CLOCK_FILTER_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace iofleet {

class ClockFilter {
 public:
  static constexpr size_t kSamples = 8;

  // One probe's round trip and the offset it measured (the peer's clock minus ours).
  void Add(int64_t round_trip_ns, int64_t offset_ns) {
    if (round_trip_ns < 0) return;
    samples_[count_++ % kSamples] = {round_trip_ns, offset_ns};
    const Sample* best = nullptr;
    for (size_t i = 0; i < kSamples && i < count_; ++i) {
      if (best == nullptr || samples_[i].round_trip_ns < best->round_trip_ns) best = &samples_[i];
    }
    offset_ns_ = best->offset_ns;
  }
  // 0 before any sample.
  int64_t offset_ns() const { return offset_ns_; }

 private:
  struct Sample {
    int64_t round_trip_ns = 0, offset_ns = 0;
  };
  std::array<Sample, kSamples> samples_;
  size_t count_ = 0;
  int64_t offset_ns_ = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_COMMON_CLOCK_FILTER_H_
