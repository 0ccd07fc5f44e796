#include "worker/steady_state.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kSecond = 1'000'000'000;

v1::SteadyState Spec(v1::SteadyState::Criterion criterion, double limit, bool percent, uint64_t duration_s, uint64_t ramp_s) {
  v1::SteadyState spec;
  spec.set_criterion(criterion);
  spec.set_limit(limit);
  spec.set_percent(percent);
  spec.set_duration_ns(duration_s * kSecond);
  spec.set_ramp_ns(ramp_s * kSecond);
  return spec;
}

// fio's iops:10%: every sample of the window within 10% of the window's mean.
TEST(SteadyState, DeviationFromTheMeanOverAFullWindowAfterTheRamp) {
  SteadyState ss(Spec(v1::SteadyState::IOPS, 10, true, 3, 2));
  uint64_t second = 0;
  auto add = [&](uint64_t ops) { return ss.Add(ops, ops * 4096, 0, 0, kSecond, ++second * kSecond); };
  EXPECT_FALSE(add(5000)) << "ramp";
  EXPECT_FALSE(add(5000)) << "ramp";
  EXPECT_FALSE(add(1000));
  EXPECT_FALSE(add(1000));
  EXPECT_FALSE(add(1200)) << "1000,1000,1200: 1200 is 12.5% above their mean";
  EXPECT_FALSE(add(1000));
  EXPECT_FALSE(add(1300));
  EXPECT_FALSE(add(1050));
  EXPECT_FALSE(add(1100)) << "1300,1050,1100: 1300 is 13% above";
  EXPECT_TRUE(add(1075)) << "1050,1100,1075: all within 2.3% of 1075";
  EXPECT_TRUE(ss.attained());
  EXPECT_THAT(ss.Describe(), HasSubstr("steady state (iops:10%) attained: largest deviation from the mean 2.33% over 3 samples of 1s, mean 1075"));
}

// fio's bw_slope:1%: the least-squares slope of the window's samples below 1% of their mean.
TEST(SteadyState, SlopeOfTheWindow) {
  SteadyState ss(Spec(v1::SteadyState::BW_SLOPE, 1, true, 4, 0));
  uint64_t second = 0;
  auto add = [&](uint64_t bytes) { return ss.Add(0, bytes, 0, 0, kSecond, ++second * kSecond); };
  for (const uint64_t bytes : {100, 110, 120}) EXPECT_FALSE(add(bytes << 20));
  EXPECT_FALSE(add(130 << 20)) << "rising 10 MiB/s per sample: 8.7% of the mean";
  EXPECT_FALSE(add(131 << 20)) << "110,120,130,131: 5.9% of the mean";
  EXPECT_FALSE(add(130 << 20)) << "120,130,131,130: 2.4%";
  EXPECT_TRUE(add(131 << 20)) << "130,131,130,131: 0.15%";
}

// Samples are check intervals: report spans of 100 ms add up to one 1 s sample; lat judges
// the mean completion latency.
TEST(SteadyState, SpansAddUpToACheckIntervalAndLatencyIsTheMean) {
  v1::SteadyState spec = Spec(v1::SteadyState::LAT, 5, true, 2, 0);
  SteadyState ss(spec);
  uint64_t at = 0;
  bool attained = false;
  for (int i = 0; i < 19; ++i) attained |= ss.Add(10, 0, 10 * 100'000, 10, kSecond / 10, at += kSecond / 10);
  EXPECT_FALSE(attained) << "1.9 s: one sample of two";
  EXPECT_TRUE(ss.Add(10, 0, 10 * 102'000, 10, kSecond / 10, at += kSecond / 10)) << "means 100us and 100.2us";
  SteadyState never(spec);
  EXPECT_THAT(never.Describe(), HasSubstr("not attained: the run ended with 0 of the window's 2 samples of 1s"));
}

}  // namespace
}  // namespace iofleet
