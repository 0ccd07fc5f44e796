#include "controller/compare_command.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

v1::CompareEntry* Entry(v1::CompareMetric* m, const std::string& target, std::vector<double> samples) {
  v1::CompareEntry* e = m->add_entries();
  e->set_target(target);
  for (double v : samples) e->add_samples(v);
  return e;
}

TEST(Compare, MediansRatiosAndSignificance) {
  v1::CompareReport report;
  v1::CompareMetric* m = report.add_metrics();
  Entry(m, "local", {100, 110, 90});
  Entry(m, "nfs", {50, 52, 48});     // clearly slower
  Entry(m, "fuse", {95, 120, 105});  // overlaps local's range
  Summarize(&report);
  EXPECT_DOUBLE_EQ(m->entries(0).median(), 100);
  EXPECT_DOUBLE_EQ(m->entries(1).ratio(), 0.5);
  EXPECT_TRUE(m->entries(1).significant());
  EXPECT_FALSE(m->entries(2).significant());
  EXPECT_DOUBLE_EQ(m->entries(2).min(), 95);
}

TEST(Compare, AMetricSomeRunsDidNotHaveIsNeverShownAsZero) {
  v1::CompareReport report;
  report.set_repeat(3);
  report.add_targets("none");
  report.add_targets("mq-deadline");
  v1::CompareMetric* m = report.add_metrics();
  m->set_name("block write D2C p50");
  m->set_unit("ns");
  Entry(m, "none", {177'000});  // one run of three had journal writes
  Entry(m, "mq-deadline", {});
  Summarize(&report);
  const std::string text = RenderCompareText(report);
  EXPECT_THAT(text, ::testing::HasSubstr("(1 of 3 runs)"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("0.00x")));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("0ns")));
}

TEST(Compare, BlockStageRowsPerDirectionAndNoSizeForFlushes) {
  v1::RunReport run;
  v1::BlockDeviceStages* device = run.add_block_devices();
  for (const char* direction : {"read", "flush"}) {
    v1::BlockStageDirection* d = device->add_directions();
    d->set_direction(direction);
    for (v1::LatencyHistogramProto* h : {d->mutable_dispatch_to_complete(), d->mutable_request_bytes()}) {
      h->set_count(1);
      h->add_bucket_index(100);
      h->add_bucket_count(1);
      h->set_sum_ns(100);
      h->set_min_ns(100);
      h->set_max_ns(100);
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : RunMetrics(run)) names.push_back(name);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"block read D2C p50", "block read request size", "block read sequential", "block flush D2C p99"}));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("block flush request size")));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("block flush sequential")));
}

TEST(Compare, MetricsOfARun) {
  v1::RunReport run;
  auto* d = run.add_cluster();
  d->set_direction("read");
  d->set_iops(1000);
  d->set_bandwidth_bytes_per_sec(4096000);
  auto* p = d->mutable_completion_latency()->add_percentiles();
  p->set_percentile(99);
  p->set_value_ns(123);
  auto metrics = RunMetrics(run);
  ASSERT_GE(metrics.size(), 4u);
  EXPECT_EQ(metrics[0].first, "read IOPS");
  EXPECT_EQ(metrics[0].second, 1000);
  bool found = false;
  for (const auto& [name, value] : metrics) found |= name == "read p99" && value == 123;
  EXPECT_TRUE(found);
}

// Several jobs (fio's examples and the field report's jobs have them): each job's own figures,
// named, not the cluster's sum of unlike jobs.
TEST(Compare, MetricsOfARunOfSeveralJobs) {
  v1::RunReport run;
  run.add_cluster()->set_direction("write");
  for (const auto& [name, iops] : {std::pair{"fsync-4k", 500.0}, std::pair{"write-16m", 12.0}}) {
    v1::JobResult* job = run.add_jobs();
    job->set_name(name);
    auto* d = job->add_directions();
    d->set_direction("write");
    d->set_iops(iops);
  }
  auto metrics = RunMetrics(run);
  std::vector<std::string> names;
  for (const auto& [name, value] : metrics) {
    if (absl::EndsWith(name, " IOPS")) names.push_back(name);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("fsync-4k write IOPS", "write-16m write IOPS"));
  EXPECT_EQ(metrics[0].second, 500);
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// compare reads the flags every command shares through the same table and rules; the ones
// whose output each run keeps in its own results directory are refused, not silently shared.
TEST(RunCompare, SharedFlagsAreCheckedAndPerRunOutputsRefused) {
  const std::vector<std::string> base = {"job.fio", "--target", "a=/tmp/a", "--target", "b=/tmp/b"};
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--report", "r.html"}, {"--interval-log", "i.ndjson"}, {"--local-workers", "65"}, {"--hosts", "a:1", "--local-workers", "2"},
           {"--target", "a=/tmp/c"}, {"--repeat", "0"}, {"--output-format", "xml"}, {"--mdtest", "-n 10 -Q"}}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(RunCompare(args), 2) << extra[0];
  }
}

}  // namespace
}  // namespace iofleet
