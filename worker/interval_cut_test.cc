#include "worker/interval_cut.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// An IO thread records requests as fast as it can while the collector cuts intervals at
// arbitrary moments: every request lands in exactly one interval, whole (its op with its
// bytes), and each interval's slowest requests are its own (none slower than its maximum).
TEST(IntervalCut, EveryRequestInExactlyOneIntervalWhole) {
  PrepareIntervalCuts();
  DirectionCounters counters;
  constexpr uint64_t kRequests = 2'000'000;
  std::atomic<bool> done{false};
  std::thread io([&] {
    for (uint64_t i = 0; i < kRequests; ++i) {
      const uint64_t latency = 1000 + (i * 7919) % 100'000;
      counters.Record(10, 10, 10 + latency, /*queued=*/false, 4096, /*failed=*/i % 1000 == 0,
                      RequestIdentity{.offset = i, .file = 0, .tracked = true});
      if (i % 5000 == 0) counters.AddError();
    }
    done = true;
  });
  DirectionCounters* all[] = {&counters};
  uint64_t ops = 0, bytes = 0, errors = 0, cuts = 0;
  auto take = [&] {
    DirectionCut cut = CutIntervals(all)[0];
    EXPECT_EQ(cut.bytes, cut.latency.count() * 4096) << "a request's bytes were cut from its op";
    EXPECT_EQ(cut.completion.count(), cut.latency.count());
    for (const SlowSample& s : cut.slowest) EXPECT_LE(s.latency_ns, cut.latency.max_ns()) << "a slowest request of another interval";
    ops += cut.latency.count();
    bytes += cut.bytes;
    errors += cut.errors;
    ++cuts;
  };
  while (!done) take();
  io.join();
  take();  // what the last interval holds
  EXPECT_EQ(ops, kRequests);
  EXPECT_EQ(bytes, kRequests * 4096);
  EXPECT_EQ(errors, kRequests / 1000 + kRequests / 5000);
  EXPECT_GT(cuts, 2u);
  const DirectionCut empty = CutIntervals(all)[0];
  EXPECT_EQ(empty.latency.count(), 0u) << "a cut leaves nothing behind";
  EXPECT_TRUE(empty.slowest.empty());
}

// The collector can close many counters at once (one barrier) and each keeps its own.
TEST(IntervalCut, ManyCountersAtOnce) {
  PrepareIntervalCuts();
  std::vector<std::unique_ptr<DirectionCounters>> owned;
  std::vector<DirectionCounters*> counters;
  for (int i = 0; i < 8; ++i) {
    owned.push_back(std::make_unique<DirectionCounters>());
    counters.push_back(owned.back().get());
    for (int r = 0; r <= i; ++r) owned.back()->Record(0, 0, 100 * (r + 1), false, 512, false);
  }
  std::vector<DirectionCut> cuts = CutIntervals(counters);
  ASSERT_EQ(cuts.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(cuts[i].latency.count(), static_cast<uint64_t>(i + 1));
    EXPECT_EQ(cuts[i].bytes, 512u * (i + 1));
    EXPECT_EQ(cuts[i].latency.max_ns(), 100u * (i + 1));
  }
}

}  // namespace
}  // namespace iofleet
