// What a relay sends up for an interval some of its workers are late for: the reports it has
// when its grace ends, saying how many it carries and how many were owed, then the late ones,
// saying how many they carry (the controller waits for them: run_aggregator_test).
#include "controller/relay.h"

#include <vector>

#include "gtest/gtest.h"
#include "histogram/latency_histogram.h"

namespace iofleet {
namespace {

v1::IntervalReport Interval(uint32_t index, uint64_t ops) {
  v1::IntervalReport r;
  r.set_run_id("run");
  r.set_job_index(0);
  r.set_interval_index(index);
  r.set_start_unix_ns(1'000'000'000LL * (index + 1));
  r.set_end_unix_ns(1'000'000'000LL * (index + 2));
  LatencyHistogram h;
  for (uint64_t i = 0; i < ops; ++i) h.Record(1000 + i);
  v1::DirectionStats* d = r.add_directions();
  d->set_direction(v1::READ);
  d->set_ops(ops);
  d->set_bytes(ops * 4096);
  *d->mutable_latency() = h.ToProto();
  return r;
}

// A run of one job at 1 s intervals.
v1::PrepareRequest OneJobRun() {
  v1::PrepareRequest request;
  request.set_run_id("run");
  request.set_interval_ns(1'000'000'000);
  request.mutable_spec()->add_jobs()->set_name("j");
  return request;
}

// What the relay has ready to send up now.
std::vector<v1::IntervalReport> Ready(RelayRun& run) {
  std::vector<v1::IntervalReport> got;
  bool asked = false;
  run.DeliverReports([&](std::vector<v1::IntervalReport> reports) {
    got = std::move(reports);
    return true;
  }, [&] { return std::exchange(asked, true); });
  return got;
}

// The grace a relay gives at 1 s intervals is a whole second: a worker whose report comes 0.8 s
// after the interval's end (a loaded relay host takes that long to take in an interval) is in
// the interval when it goes up, not sent again after it as a late report.
TEST(RelayRun, AWorkerASecondLateAtMostIsInTheIntervalItself) {
  EXPECT_EQ(RelayRun::GraceFor(1'000'000'000), absl::Seconds(1));
  EXPECT_EQ(RelayRun::GraceFor(100'000'000), absl::Seconds(1)) << "at least a second";
  EXPECT_EQ(RelayRun::GraceFor(5'000'000'000), absl::Seconds(5)) << "an interval";
  const v1::PrepareRequest request = OneJobRun();
  RelayRun run(request, {"a:1", "b:2"}, {0, 0}, RelayRun::GraceFor(request.interval_ns()));
  int late_batches = 0;
  run.OnLateReport([&] { ++late_batches; });
  run.Add(0, {Interval(0, 10)});
  const absl::Time end = absl::FromUnixNanos(2'000'000'000);
  EXPECT_EQ(run.ForwardDue(end + absl::Milliseconds(800)), end + absl::Seconds(1)) << "held until the grace ends";
  EXPECT_TRUE(Ready(run).empty());
  run.Add(1, {Interval(0, 5)});
  const std::vector<v1::IntervalReport> up = Ready(run);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].reports_carried(), 2u);
  EXPECT_EQ(up[0].directions(0).ops(), 15u);
  EXPECT_EQ(late_batches, 0);
}

TEST(RelayRun, AnIntervalSentWithoutLateWorkersSaysWhatItOwesAndTheRestFollows) {
  // Three workers, the third a relay of 4 (its own report of the interval carries 3 of them).
  RelayRun run(OneJobRun(), {"a:1", "b:2", "relay:3"}, {0, 0, 4}, absl::Milliseconds(500));
  int late_batches = 0;
  run.OnLateReport([&] { ++late_batches; });
  run.Add(0, {Interval(0, 10)});
  v1::IntervalReport below = Interval(0, 30);
  below.set_reports_carried(3);
  below.set_reports_owed(4);
  run.Add(2, {below});
  EXPECT_TRUE(Ready(run).empty()) << "worker b has time until the grace ends";
  run.ForwardDue(absl::FromUnixNanos(2'000'000'000) + absl::Milliseconds(500));
  std::vector<v1::IntervalReport> up = Ready(run);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].reports_carried(), 4u) << "a's, and the relay below's three";
  EXPECT_EQ(up[0].reports_owed(), 6u) << "b's and the relay's fourth are owed too";
  EXPECT_EQ(up[0].directions(0).ops(), 40u);

  // b's report and the relay below's late one come after: the first says a batch began (once),
  // and they go up together kLateBatch after the run first saw them, carrying 2.
  run.Add(1, {Interval(0, 5)});
  EXPECT_EQ(late_batches, 1);
  const absl::Time seen = absl::FromUnixNanos(2'600'000'000);
  EXPECT_EQ(run.ForwardDue(seen), seen + RelayRun::kLateBatch) << "when the batch is due";
  v1::IntervalReport below_late = Interval(0, 7);
  below_late.set_reports_carried(1);
  run.Add(2, {below_late});
  EXPECT_EQ(late_batches, 1) << "the same batch";
  EXPECT_EQ(run.ForwardDue(seen + RelayRun::kLateBatch / 2), seen + RelayRun::kLateBatch);
  EXPECT_TRUE(Ready(run).empty()) << "the batch gathers";
  EXPECT_EQ(run.ForwardDue(seen + RelayRun::kLateBatch), absl::InfiniteFuture()) << "nothing more is due";
  up = Ready(run);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].interval_index(), 0u);
  EXPECT_EQ(up[0].reports_carried(), 2u);
  EXPECT_EQ(up[0].directions(0).ops(), 12u);

  // Every worker in before the grace: sent up at once, owing nothing more.
  run.Add(0, {Interval(1, 1)});
  run.Add(1, {Interval(1, 1)});
  v1::IntervalReport below_whole = Interval(1, 4);
  below_whole.set_reports_carried(4);
  below_whole.set_reports_owed(4);
  run.Add(2, {below_whole});
  up = Ready(run);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].reports_carried(), 6u);
  EXPECT_EQ(up[0].reports_owed(), 6u);
}

// A late report counts as the controller counts a worker's: once. (A worker sending an interval
// twice made a relay say it carried two, and the controller called the interval complete with
// another worker's report still missing.)
TEST(RelayRun, ALateReportCountsOncePerWorker) {
  RelayRun run(OneJobRun(), {"a:1", "b:2", "c:3"}, {0, 0, 0}, absl::Milliseconds(500));
  run.Add(0, {Interval(0, 1)});
  const absl::Time grace_end = absl::FromUnixNanos(2'000'000'000) + absl::Milliseconds(500);
  run.ForwardDue(grace_end);
  std::vector<v1::IntervalReport> up = Ready(run);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].reports_carried(), 1u);
  EXPECT_EQ(up[0].reports_owed(), 3u);
  // Late: b's report, then b's again and a's again (carrying nothing), then c's.
  const auto late_up = [&](size_t worker, absl::Time at) {
    run.Add(worker, {Interval(0, 1)});
    run.ForwardDue(at);
    run.ForwardDue(at + RelayRun::kLateBatch);
    std::vector<v1::IntervalReport> sent = Ready(run);
    return sent.size() == 1 ? static_cast<int>(sent[0].reports_carried()) : -1;
  };
  EXPECT_EQ(late_up(1, grace_end + absl::Seconds(1)), 1);
  EXPECT_EQ(late_up(1, grace_end + absl::Seconds(2)), 0) << "b's second report of the interval";
  EXPECT_EQ(late_up(0, grace_end + absl::Seconds(3)), 0) << "a's second report of the interval";
  EXPECT_EQ(late_up(2, grace_end + absl::Seconds(4)), 1);
  EXPECT_EQ(late_up(2, grace_end + absl::Seconds(5)), 0) << "every worker in: nothing more counts";
}

}  // namespace
}  // namespace iofleet
