#include "common/clock_filter.h"

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(ClockFilter, TheShortestRoundTripOfTheRecentProbesGivesTheOffset) {
  ClockFilter filter;
  EXPECT_EQ(filter.offset_ns(), 0);
  filter.Add(1'000'000, 40'000'000);   // 1 ms round trip: 40 ms ahead
  filter.Add(300'000'000, 190'000'000);  // waited 300 ms in a queue somewhere: not the clock
  EXPECT_EQ(filter.offset_ns(), 40'000'000);
  filter.Add(500'000, 41'000'000);  // a quicker one wins
  EXPECT_EQ(filter.offset_ns(), 41'000'000);
  // Once it is older than the last kSamples probes, the best of those counts (a clock that
  // was stepped is followed).
  for (int i = 0; i < static_cast<int>(ClockFilter::kSamples); ++i) filter.Add(2'000'000 + i, -5'000'000);
  EXPECT_EQ(filter.offset_ns(), -5'000'000);
  filter.Add(-1, 99);  // no round trip: no sample
  EXPECT_EQ(filter.offset_ns(), -5'000'000);
}

}  // namespace
}  // namespace iofleet
