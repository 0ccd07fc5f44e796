#include "worker/latency_target.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using Action = LatencyTargetSearch::Action;

constexpr uint64_t kWindow = 1'000'000;  // 1 ms windows
constexpr uint64_t kTarget = 100'000;    // 100 us

v1::JobSpec Job(uint32_t iodepth, double percentile) {
  v1::JobSpec job;
  job.set_iodepth(iodepth);
  job.set_latency_target_ns(kTarget);
  job.set_latency_window_ns(kWindow);
  job.set_latency_percentile(percentile);
  return job;
}

// A device whose IOs take 50 us up to depth `fast_up_to` and 200 us beyond: fio's search
// doubles 1, 2, 4, 8, fails at 8, bisects down to 6, 5 and back up, settles on the deepest fast
// depth, runs a final window there and ends.
TEST(LatencyTargetSearch, FindsTheDeepestDepthWithinTheTarget) {
  for (const uint32_t fast_up_to : {5u, 16u}) {
    const v1::JobSpec job = Job(16, 99.0);
    LatencyTargetSearch search(job, 0);
    uint64_t now = 0;
    std::vector<uint32_t> depths = {search.depth()};
    Action last = Action::kNone;
    bool final_run = false;
    for (int window = 0; window < 40 && last != Action::kDone; ++window) {
      for (int io = 0; io < 10; ++io) search.Completed(search.depth() <= fast_up_to ? 50'000 : 200'000, now);
      now += kWindow;
      last = search.Check(now);
      final_run |= last == Action::kStartFinalRun;
      if (depths.back() != search.depth()) depths.push_back(search.depth());
    }
    EXPECT_EQ(last, Action::kDone) << fast_up_to;
    EXPECT_TRUE(final_run);
    EXPECT_EQ(search.depth(), fast_up_to);
    if (fast_up_to == 16) {
      EXPECT_EQ(depths, (std::vector<uint32_t>{1, 2, 4, 8, 16})) << "doubling up to iodepth";
    } else {
      EXPECT_EQ(depths.front(), 1u);
      EXPECT_EQ(std::vector<uint32_t>(depths.begin(), depths.begin() + 4), (std::vector<uint32_t>{1, 2, 4, 8}));
    }
  }
}

// latency_percentile=100: one IO over the target fails the window at once, and at depth 1 it
// is an error (fio's "max latency exceeded"); below 100, the window's share decides.
TEST(LatencyTargetSearch, PercentileDecidesAndOneSlowIoAtDepthOneIsFatal) {
  LatencyTargetSearch strict(Job(8, 100.0), 0);
  EXPECT_EQ(strict.Completed(200'000, 10), Action::kFatal);
  LatencyTargetSearch lenient(Job(8, 90.0), 0);
  for (int i = 0; i < 9; ++i) lenient.Completed(50'000, 10);
  lenient.Completed(200'000, 10);
  EXPECT_EQ(lenient.Check(kWindow), Action::kNone) << "90% within: success, depth doubles";
  EXPECT_EQ(lenient.depth(), 2u);
  for (int i = 0; i < 8; ++i) lenient.Completed(50'000, kWindow + 10);
  for (int i = 0; i < 2; ++i) lenient.Completed(200'000, kWindow + 10);
  EXPECT_EQ(lenient.Check(2 * kWindow), Action::kQuiesce) << "80% within: failure, depth halves";
  EXPECT_EQ(lenient.depth(), 1u);
  EXPECT_THAT(lenient.Describe(), ::testing::HasSubstr("latency_target: depth 1 (90% of IOs within 100us over windows of 1ms), search not finished"));
}

}  // namespace
}  // namespace iofleet
