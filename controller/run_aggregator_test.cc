#include "controller/run_aggregator.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "controller/report_html.h"
#include "controller/report_text.h"
#include "gtest/gtest.h"
#include "job/block_sizes.h"
#include "histogram/latency_histogram.h"

namespace iofleet {
namespace {


v1::IntervalReport MakeReport(uint32_t interval, LatencyHistogram& h, uint64_t bytes, bool final) {
  v1::IntervalReport r;
  r.set_job_index(0);
  r.set_interval_index(interval);
  r.set_start_unix_ns(1'000'000'000 * (interval + 1));
  r.set_end_unix_ns(1'000'000'000 * (interval + 2));
  auto* d = r.add_directions();
  d->set_direction(v1::WRITE);
  d->set_ops(h.count());
  d->set_bytes(bytes);
  *d->mutable_latency() = h.ToProto();
  if (final) {
    r.set_final(true);
    r.set_elapsed_ns(2'000'000'000);
  }
  return r;
}

// One 4 KiB random-write job named "j", what MakeReport's reports belong to.
v1::RunSpec RandomWriteSpec() {
  v1::RunSpec spec;
  auto* job = spec.add_jobs();
  job->set_name("j");
  job->set_rw(v1::RAND_WRITE);
  SetFixedBlockSize(job, 4096);
  return spec;
}

// A histogram that does not decode (buckets that do not add up to its count, as a buggy or
// hostile worker might send) is not merged into anything: the run's latencies are those of
// the well-formed reports, its counts are kept, and the report names the worker and interval.
TEST(RunAggregator, MalformedHistogramIsLeftOutAndNamed) {
  RunAggregator aggregator(RandomWriteSpec(), {"a:1", "b:2"});
  LatencyHistogram good, bad;
  for (uint64_t v = 1000; v < 2000; ++v) good.Record(v);
  for (uint64_t v = 900'000'000; v < 900'000'100; ++v) bad.Record(v);
  aggregator.Add(0, {MakeReport(0, good, 1000 * 4096, true)});
  v1::IntervalReport broken = MakeReport(0, bad, 100 * 4096, true);
  broken.mutable_directions(0)->mutable_latency()->set_count(7);  // buckets add up to 100
  aggregator.Add(1, {broken});

  v1::RunReport report;
  aggregator.FillReport(&report);
  ASSERT_EQ(report.cluster_size(), 1);
  EXPECT_EQ(report.cluster(0).ops(), 1100u) << "the counts of the malformed report are kept";
  EXPECT_EQ(report.cluster(0).histogram().count(), 1000u) << "its histogram is not";
  EXPECT_LT(report.cluster(0).latency().max_ns(), 2000u);
  ASSERT_EQ(report.problems_size(), 1);
  EXPECT_NE(report.problems(0).find("worker b:2 sent a malformed latency histogram (job j, interval 0, direction write)"), std::string::npos)
      << report.problems(0);
  EXPECT_NE(report.problems(0).find("add up to 100 samples but its count says 7"), std::string::npos) << report.problems(0);
}

// The cluster's interval of a phase is every report of every job in the phase at that index,
// merged: here two jobs on two workers, four reports, their latencies far apart.
TEST(RunAggregator, ClusterIntervalMergesEveryJobOfThePhase) {
  v1::RunSpec spec = RandomWriteSpec();
  *spec.add_jobs() = spec.jobs(0);
  spec.mutable_jobs(1)->set_name("k");
  RunAggregator aggregator(spec, {"a:1", "b:2"});
  LatencyHistogram h[4];
  uint64_t ops = 0;
  for (int i = 0; i < 4; ++i) {
    for (uint64_t v = 0; v < 100u * (i + 1); ++v) h[i].Record(1000 * (i + 1) * (i + 1) + v);
    ops += h[i].count();
  }
  for (size_t worker = 0; worker < 2; ++worker) {
    for (uint32_t job = 0; job < 2; ++job) {
      v1::IntervalReport r = MakeReport(0, h[worker * 2 + job], 4096 * h[worker * 2 + job].count(), false);
      r.set_job_index(job);
      aggregator.Add(worker, {r});
    }
  }
  LatencyHistogram all;
  for (const LatencyHistogram& one : h) all.Merge(one);
  std::vector<PublishedInterval> due = aggregator.TakeDue(/*now_unix_ns=*/0, /*grace_ns=*/0);
  int clusters = 0;
  for (const PublishedInterval& p : due) {
    if (p.scope != PublishedInterval::Scope::kCluster) continue;
    ++clusters;
    EXPECT_TRUE(p.complete);
    EXPECT_EQ(p.workers_reporting, 2u);
    EXPECT_EQ(p.directions[1].ops(), ops);
    EXPECT_EQ(p.directions[1].bytes(), 4096 * ops);
    EXPECT_EQ(p.directions[1].latency().count(), ops);
    EXPECT_EQ(p.directions[1].latency().min_ns(), all.min_ns());
    EXPECT_EQ(p.directions[1].latency().max_ns(), all.max_ns());
    EXPECT_EQ(p.directions[1].latency().sum_ns(), all.sum_ns());
    EXPECT_EQ(p.directions[1].latency().bucket_index_size(), all.ToProto().bucket_index_size());
  }
  EXPECT_EQ(clusters, 1);
}

// With an observer (the live view), each worker's own interval goes to it once, as its report is
// added, whole; TakeDue then has only the cluster's and the jobs'. Without one again, they wait
// for TakeDue as before.
TEST(RunAggregator, WorkerIntervalsGoToTheObserverAsTheyArrive) {
  RunAggregator aggregator(RandomWriteSpec(), {"a:1", "b:2"});
  LatencyHistogram a, b;
  for (uint64_t v = 1000; v < 2000; ++v) a.Record(v);
  for (uint64_t v = 50000; v < 50100; ++v) b.Record(v);
  std::vector<std::pair<int, uint64_t>> observed;  // (worker, write ops)
  aggregator.ObserveWorkerIntervals([&](const PublishedInterval& in) {
    EXPECT_EQ(in.scope, PublishedInterval::Scope::kWorker);
    observed.emplace_back(in.worker, in.directions[1].ops());
  });
  aggregator.Add(0, {MakeReport(0, a, 1000 * 4096, false)});
  aggregator.Add(1, {MakeReport(0, b, 100 * 4096, false)});
  EXPECT_EQ(observed, (std::vector<std::pair<int, uint64_t>>{{0, 1000}, {1, 100}}));
  const int64_t end = 2'000'000'000;
  for (const PublishedInterval& p : aggregator.TakeDue(end + 500'000'000, 1'000'000'000)) {
    EXPECT_NE(p.scope, PublishedInterval::Scope::kWorker) << "handed to the observer already";
    EXPECT_EQ(p.directions[1].ops(), 1100u);
  }
  aggregator.ObserveWorkerIntervals(nullptr);
  aggregator.Add(0, {MakeReport(1, a, 1000 * 4096, false)});
  EXPECT_EQ(observed.size(), 2u);
  std::vector<PublishedInterval> due = aggregator.TakeDue(end + 600'000'000, 1'000'000'000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].scope, PublishedInterval::Scope::kWorker);
  EXPECT_EQ(due[0].index, 1u);
}

// A late worker does not hold an interval back: after the grace it is published with the
// workers that are in, marked incomplete and naming the late one, then published again
// (amended, now complete) when the late report arrives; the merge stays exact.
TEST(RunAggregator, LateIntervalIsPublishedIncompleteThenAmended) {
  RunAggregator aggregator(RandomWriteSpec(), {"a:1", "b:2"});
  LatencyHistogram a, b;
  for (uint64_t v = 1000; v < 2000; ++v) a.Record(v);
  for (uint64_t v = 50000; v < 50100; ++v) b.Record(v);
  aggregator.Add(0, {MakeReport(0, a, 1000 * 4096, false)});
  const int64_t end = 2'000'000'000;  // interval 0 ends at 2 s (MakeReport)
  // Worker a's own interval is published as it arrives; the job's and the cluster's wait, since
  // worker b still has time.
  auto due = aggregator.TakeDue(end + 500'000'000, 1'000'000'000);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].scope, PublishedInterval::Scope::kWorker);
  EXPECT_EQ(due[0].worker, 0);
  EXPECT_EQ(due[0].directions[1].ops(), 1000u);

  due = aggregator.TakeDue(end + 1'000'000'000, 1'000'000'000);
  int job_scope = 0, cluster_scope = 0, worker_scope = 0;
  for (const PublishedInterval& p : due) {
    EXPECT_FALSE(p.amended);
    if (p.scope == PublishedInterval::Scope::kWorker) {
      ++worker_scope;
      EXPECT_EQ(p.worker, 0);
      continue;
    }
    (p.scope == PublishedInterval::Scope::kJob ? job_scope : cluster_scope)++;
    EXPECT_FALSE(p.complete);
    EXPECT_EQ(p.workers_reporting, 1u);
    EXPECT_EQ(p.workers_expected, 2u);
    ASSERT_EQ(p.late_workers.size(), 1u);
    EXPECT_EQ(p.late_workers[0], 1u);
    EXPECT_EQ(p.directions[1].ops(), 1000u);
  }
  EXPECT_EQ(job_scope, 1);
  EXPECT_EQ(cluster_scope, 1);
  EXPECT_EQ(worker_scope, 0) << "published once, when it arrived";
  EXPECT_TRUE(aggregator.TakeDue(end + 1'100'000'000, 1'000'000'000).empty()) << "published once";

  aggregator.Add(1, {MakeReport(0, b, 100 * 4096, false)});
  due = aggregator.TakeDue(end + 1'200'000'000, 1'000'000'000);
  bool amended_job = false;
  for (const PublishedInterval& p : due) {
    if (p.scope != PublishedInterval::Scope::kJob) continue;
    amended_job = true;
    EXPECT_TRUE(p.amended);
    EXPECT_TRUE(p.complete);
    EXPECT_EQ(p.workers_reporting, 2u);
    EXPECT_EQ(p.directions[1].ops(), 1100u);
    LatencyHistogram both = a;
    both.Merge(b);
    EXPECT_EQ(LatencyHistogram::FromProto(p.directions[1].latency())->ValueAtPercentile(99), both.ValueAtPercentile(99));
    // The whole histogram: what was published before (a's) and what came after (b's), exact.
    EXPECT_TRUE(*LatencyHistogram::FromProto(p.directions[1].latency()) == both);
  }
  EXPECT_TRUE(amended_job);
  // A complete interval is published at once, without waiting for the grace.
  aggregator.Add(0, {MakeReport(1, a, 1000 * 4096, false)});
  aggregator.Add(1, {MakeReport(1, b, 100 * 4096, false)});
  due = aggregator.TakeDue(0, 1'000'000'000);
  ASSERT_FALSE(due.empty());
  for (const PublishedInterval& p : due) {
    EXPECT_EQ(p.index, 1u);
    EXPECT_TRUE(p.complete);
  }
}

// What lets the live view publish an interval the moment it can be: the aggregator says when
// a job interval has just got its last worker's report (once, not for a repeat), and when the
// earliest interval still waiting for reports reaches the end of its grace.
TEST(RunAggregator, SaysWhenAnIntervalIsFullAndWhenTheNextGraceEnds) {
  RunAggregator aggregator(RandomWriteSpec(), {"a:1", "b:2"});
  int full = 0;
  aggregator.ObserveFullIntervals([&full] { ++full; });
  LatencyHistogram a, b;
  a.Record(1000);
  b.Record(2000);
  EXPECT_EQ(aggregator.NextGraceEndUnixNs(), INT64_MAX) << "nothing waiting before any report";
  aggregator.Add(0, {MakeReport(0, a, 4096, false)});
  EXPECT_EQ(full, 0) << "worker b has not reported interval 0";
  // Interval 0 ends at 2 s (MakeReport); with a 1 s grace it is published without b at 3 s.
  EXPECT_TRUE(aggregator.TakeDue(2'500'000'000, 1'000'000'000).size() == 1u) << "only a's own interval";
  EXPECT_EQ(aggregator.NextGraceEndUnixNs(), 3'000'000'000);
  aggregator.Add(1, {MakeReport(0, b, 4096, false)});
  EXPECT_EQ(full, 1) << "b's report made interval 0 full";
  aggregator.Add(1, {MakeReport(0, b, 4096, false)});
  EXPECT_EQ(full, 1) << "a repeat of b's interval 0 fills nothing";
  aggregator.TakeDue(2'600'000'000, 1'000'000'000);
  EXPECT_EQ(aggregator.NextGraceEndUnixNs(), INT64_MAX) << "interval 0 published complete; nothing else waits";
  aggregator.Add(1, {MakeReport(1, b, 4096, false)});
  aggregator.TakeDue(2'700'000'000, 1'000'000'000);
  EXPECT_EQ(aggregator.NextGraceEndUnixNs(), 4'000'000'000) << "interval 1 (ends at 3 s) waits for a";
  aggregator.ObserveFullIntervals(nullptr);
  aggregator.Add(0, {MakeReport(1, a, 4096, false)});
  EXPECT_EQ(full, 1) << "no calls once the observer is taken away";
}

TEST(RunAggregator, ClusterIsTheExactMergeOfWorkersAndIntervals) {
  RunAggregator aggregator(RandomWriteSpec(), {"a:1", "b:2"});
  std::mt19937_64 rng(9);
  std::lognormal_distribution<double> fast(8, 0.5), slow(11, 0.5);
  LatencyHistogram everything, worker_b;
  for (uint32_t interval = 0; interval < 2; ++interval) {
    LatencyHistogram a, b;
    for (int i = 0; i < 1000; ++i) a.Record(static_cast<uint64_t>(fast(rng)));
    for (int i = 0; i < 500; ++i) b.Record(static_cast<uint64_t>(slow(rng)));
    everything.Merge(a);
    everything.Merge(b);
    worker_b.Merge(b);
    aggregator.Add(0, {MakeReport(interval, a, 1000 * 4096, interval == 1)});
    aggregator.Add(1, {MakeReport(interval, b, 500 * 4096, interval == 1)});
  }
  EXPECT_TRUE(aggregator.WorkerComplete(0));
  v1::RunReport report;
  aggregator.FillReport(&report);
  ASSERT_EQ(report.jobs_size(), 1);
  const v1::JobResult& result = report.jobs(0);
  ASSERT_EQ(result.directions_size(), 1);
  EXPECT_EQ(result.directions(0).ops(), 3000u);
  EXPECT_EQ(result.directions(0).bytes(), 3000u * 4096);
  EXPECT_DOUBLE_EQ(result.directions(0).iops(), 1500.0);  // over the 2 s elapsed
  EXPECT_EQ(result.directions(0).latency().percentiles(12).percentile(), 99);
  EXPECT_EQ(result.directions(0).latency().percentiles(12).value_ns(), everything.ValueAtPercentile(99));
  EXPECT_EQ(result.workers(1).directions(0).latency().percentiles(12).value_ns(), worker_b.ValueAtPercentile(99));
  ASSERT_EQ(result.intervals_size(), 2);
  EXPECT_EQ(result.intervals(0).workers_reporting(), 2u);
  EXPECT_EQ(result.intervals(0).directions(0).ops(), 1500u);
  EXPECT_EQ(report.cluster(0).ops(), 3000u);
  const std::string text = RenderTextReport(report);
  EXPECT_NE(text.find("IOPS=1.50k"), std::string::npos) << text;
  EXPECT_NE(text.find("b:2"), std::string::npos);
}

TEST(RunAggregator, JobsPercentileListIsUsed) {
  v1::RunSpec spec;
  auto* job = spec.add_jobs();
  job->set_name("p");
  job->set_rw(v1::RAND_READ);
  SetFixedBlockSize(job, 4096);
  job->add_percentile_list(50);
  job->add_percentile_list(99.9);
  RunAggregator aggregator(spec, {"a:1"});
  LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.Record(i * 1000);
  v1::IntervalReport r = MakeReport(0, h, 1000 * 4096, true);
  r.mutable_directions(0)->set_direction(v1::READ);
  aggregator.Add(0, {r});
  v1::RunReport report;
  aggregator.FillReport(&report);
  const auto& percentiles = report.jobs(0).directions(0).latency().percentiles();
  ASSERT_EQ(percentiles.size(), 2);
  EXPECT_EQ(percentiles[1].percentile(), 99.9);
  EXPECT_NEAR(static_cast<double>(percentiles[1].value_ns()), 999'000, 999'000 * 0.01);
}

// With many workers the text report gives each job's spread over the workers and names the
// ones at either end instead of a line per worker; a worker with an error still gets its own
// lines, and the header names a few workers, not all.
// With group_reporting the text shows groups, whose worker table sums jobs; a job's own notes
// (steady state attained, stopped by exitall...) are still printed, under their group.
TEST(TextReport, GroupReportingKeepsTheJobsNotes) {
  v1::RunSpec spec = RandomWriteSpec();
  spec.mutable_jobs(0)->set_group_reporting(true);
  RunAggregator aggregator(spec, {"a:1"});
  LatencyHistogram h;
  for (int i = 0; i < 100; ++i) h.Record(100'000);
  v1::IntervalReport r = MakeReport(0, h, 100 * 4096, true);
  r.add_notes("steady state (iops:10%) attained: largest deviation from the mean 8.98% over 30 samples of 1s, mean 3.778e+06");
  aggregator.Add(0, {r});
  v1::RunReport report;
  report.add_workers()->set_address("a:1");
  report.set_group_reporting(true);
  aggregator.FillReport(&report);
  const std::string text = RenderTextReport(report);
  EXPECT_NE(text.find("    j on a:1: steady state (iops:10%) attained: largest deviation"), std::string::npos) << text;
}

// --target-metrics in the text report: the clients' view in one line (each job's when there are
// several: 4 KiB and 16 MiB writes summed would say nothing), then each endpoint's highlights and
// problems.
TEST(TextReport, TargetMetricsBesideTheClients) {
  v1::RunReport report;
  for (const auto& [name, ops] : {std::pair{"fsync-4k", 3106}, std::pair{"write-16m", 64}}) {
    v1::JobResult* job = report.add_jobs();
    job->set_name(name);
    v1::DirectionResult* d = job->add_directions();
    d->set_direction("write");
    d->set_ops(ops);
    v1::Percentile* p99 = d->mutable_latency()->add_percentiles();
    p99->set_percentile(99);
    p99->set_value_ns(name == std::string("fsync-4k") ? 60'200 : 1'420'000'000);
  }
  v1::TargetMetricsResult* t = report.add_target_metrics();
  t->set_name("juicefs");
  t->set_url("http://127.0.0.1:9567/metrics");
  t->set_scrapes(12);
  t->add_intervals();
  t->add_highlights("JuiceFS object PUT: 3454 requests, p50 <=10.0ms, p99 423.4ms, mean 16.1ms; 1.37GiB in all, mean size 415KiB");
  t->add_problems("http://127.0.0.1:9567/metrics: a scrape closing interval 3 of phase 0 failed: timeout");
  const std::string text = RenderTextReport(report);
  EXPECT_NE(text.find("  clients: fsync-4k: write 3106 ops, p99 60.2us | write-16m: write 64 ops, p99 1.42s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  juicefs (http://127.0.0.1:9567/metrics): 12 scrapes, 1 intervals\n    JuiceFS object PUT: 3454 requests"), std::string::npos) << text;
  EXPECT_NE(text.find("    problem: http://127.0.0.1:9567/metrics: a scrape closing interval 3"), std::string::npos) << text;
  EXPECT_EQ(RenderTextReport(v1::RunReport()).find("Target metrics"), std::string::npos);
}

TEST(TextReport, ManyWorkersBecomeASpreadWithNamedOutliers) {
  constexpr int kWorkers = 40;
  std::vector<std::string> names;
  for (int w = 0; w < kWorkers; ++w) names.push_back(absl::StrCat("10.0.0.", w, ":7420"));
  RunAggregator aggregator(RandomWriteSpec(), names);
  for (int w = 0; w < kWorkers; ++w) {
    LatencyHistogram h;
    const uint64_t ops = 1000 + static_cast<uint64_t>(w) * 10;  // worker 0 the slowest, 39 the fastest
    for (uint64_t i = 0; i < ops; ++i) h.Record(w == 7 ? 5'000'000 : 100'000 + i);
    v1::IntervalReport r = MakeReport(0, h, ops * 4096, true);
    if (w == 12) r.set_error("write of 4096 bytes at offset 0 in /data/j.0: No space left on device");
    aggregator.Add(static_cast<size_t>(w), {r});
  }
  v1::RunReport report;
  for (const std::string& n : names) report.add_workers()->set_address(n);
  // The late are named too: a start command that came late, a stall, a cut session resumed.
  report.mutable_workers(30)->set_start_lead_ns(-350'000'000);
  report.mutable_workers(31)->set_longest_silence_ns(4'200'000'000);
  report.mutable_workers(31)->set_session_resumes(1);
  report.mutable_workers(32)->set_longest_silence_ns(900'000'000);  // under a second apart: not late
  // A host unlike the others is named with its workers' figures, as an error is.
  report.mutable_workers(25)->add_differs("kernel 6.1.0-13 (the others: 6.1.0-21)");
  aggregator.FillReport(&report);
  const std::string text = RenderTextReport(report);
  EXPECT_NE(text.find("started late: 1 worker(s): 10.0.0.30:7420 "), std::string::npos) << text;
  EXPECT_NE(text.find("silent for seconds: 1 worker(s): 10.0.0.31:7420 "), std::string::npos) << text;
  EXPECT_NE(text.find("connection cut and resumed: 1 worker(s): 10.0.0.31:7420 1x"), std::string::npos) << text;
  EXPECT_EQ(text.find("10.0.0.32:7420"), std::string::npos) << text;
  EXPECT_NE(text.find("per worker (40 workers: their spread and outliers; the JSON report lists each)"), std::string::npos) << text;
  EXPECT_NE(text.find("write  IOPS min 500  p10"), std::string::npos) << text;
  EXPECT_NE(text.find("lowest IOPS: 10.0.0.0:7420 500, 10.0.0.1:7420 505, 10.0.0.2:7420 510"), std::string::npos) << text;
  EXPECT_NE(text.find("highest IOPS: 10.0.0.39:7420 695"), std::string::npos) << text;
  EXPECT_NE(text.find("highest p99: 10.0.0.7:7420 5"), std::string::npos) << text;
  EXPECT_NE(text.find("10.0.0.12:7420:\n      error: write of 4096 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("... and 32 more (the JSON report lists each)"), std::string::npos) << text;
  EXPECT_EQ(text.find("10.0.0.20:7420"), std::string::npos) << "no line per worker";
  EXPECT_NE(text.find("10.0.0.25:7420:\n      differs: kernel 6.1.0-13 (the others: 6.1.0-21)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("10.0.0.26:7420"), std::string::npos) << text;
  EXPECT_NE(text.find("(38 other workers' hosts are like the first"), std::string::npos) << text;

  // The HTML report likewise: the per-worker throughput chart is the spread and the lowest
  // three, the hosts table the first host and a count.
  report.set_start_unix_ns(1'000'000'000);
  const std::string html = RenderHtmlReport(report);
  EXPECT_NE(html.find("min of 40 workers"), std::string::npos);
  EXPECT_NE(html.find("median worker"), std::string::npos);
  EXPECT_NE(html.find("10.0.0.0:7420 (lowest)"), std::string::npos);
  EXPECT_NE(html.find("38 other workers' hosts are like the first"), std::string::npos);
  EXPECT_EQ(html.find("10.0.0.20:7420"), std::string::npos) << "no series or row per worker";
}

// A job's slowest requests are the slowest of all its workers' reports, slowest first, each
// named by its worker, and no more than ten; so are a cluster interval's.
TEST(RunAggregator, SlowestRequestsAreTheSlowestOfAllReports) {
  RunAggregator aggregator(RandomWriteSpec(), {"a:1", "b:2"});
  std::vector<uint64_t> all;
  for (uint32_t interval = 0; interval < 4; ++interval) {
    for (size_t w = 0; w < 2; ++w) {
      LatencyHistogram h;
      h.Record(1000);
      v1::IntervalReport r = MakeReport(interval, h, 4096, interval == 3);
      for (uint64_t k = 0; k < 3; ++k) {  // slowest first, as a worker sends them
        const uint64_t latency = 1'000'000 * (10 - 3 * k) + 1000 * interval + w;
        v1::SlowRequest* slow = r.mutable_directions(0)->add_slowest();
        slow->set_latency_ns(latency);
        all.push_back(latency);
      }
      aggregator.Add(w, {r});
    }
  }
  std::sort(all.rbegin(), all.rend());
  all.resize(10);
  v1::RunReport report;
  aggregator.FillReport(&report);
  ASSERT_EQ(report.jobs_size(), 1);
  ASSERT_EQ(report.jobs(0).directions_size(), 1);
  const auto& slowest = report.jobs(0).directions(0).slowest();
  ASSERT_EQ(slowest.size(), 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(slowest.Get(i).latency_ns(), all[i]) << i;
    EXPECT_EQ(slowest.Get(i).worker(), all[i] % 2 == 0 ? "a:1" : "b:2");
  }
  // Interval 1's cluster view: the six of that interval, slowest first.
  int seen = 0;
  for (const PublishedInterval& p : aggregator.TakeDue(INT64_MAX / 2, 0)) {
    if (p.scope != PublishedInterval::Scope::kCluster || p.index != 1) continue;
    ++seen;
    const auto& s = p.directions[1].slowest();
    ASSERT_EQ(s.size(), 6);
    for (int i = 1; i < s.size(); ++i) EXPECT_GE(s.Get(i - 1).latency_ns(), s.Get(i).latency_ns());
    EXPECT_EQ(s.Get(0).latency_ns(), 10'001'001u);
  }
  EXPECT_EQ(seen, 1);
}

// A relay sends an interval it merged without a late worker, then that worker's report as one
// more report of its own for the same interval: the controller adds it and publishes the
// interval again (amended), exact; a relay's final report with nothing in it changes nothing.
TEST(RunAggregator, ARelaysLateReportForAnIntervalItSentIsAnAmendment) {
  RunAggregator aggregator(RandomWriteSpec(), {"relay:1"});
  LatencyHistogram early, late;
  for (uint64_t v = 1000; v < 2000; ++v) early.Record(v);
  for (uint64_t v = 80000; v < 80050; ++v) late.Record(v);
  aggregator.Add(0, {MakeReport(0, early, 1000 * 4096, false)});
  auto due = aggregator.TakeDue(0, 1'000'000'000);
  int first = 0;
  for (const PublishedInterval& p : due) first += p.scope == PublishedInterval::Scope::kJob && p.complete && !p.amended;
  EXPECT_EQ(first, 1);
  aggregator.Add(0, {MakeReport(0, late, 50 * 4096, false)});
  due = aggregator.TakeDue(0, 1'000'000'000);
  int amended = 0;
  for (const PublishedInterval& p : due) {
    if (p.scope != PublishedInterval::Scope::kJob) continue;
    ++amended;
    EXPECT_TRUE(p.amended);
    EXPECT_EQ(p.directions[1].ops(), 1050u);
    LatencyHistogram both = early;
    both.Merge(late);
    EXPECT_EQ(LatencyHistogram::FromProto(p.directions[1].latency())->ValueAtPercentile(99), both.ValueAtPercentile(99));
  }
  EXPECT_EQ(amended, 1);
  v1::IntervalReport final_only;
  final_only.set_job_index(0);
  final_only.set_interval_index(0);
  final_only.set_start_unix_ns(1'000'000'000);
  final_only.set_end_unix_ns(2'000'000'000);
  final_only.set_final(true);
  final_only.set_elapsed_ns(1'000'000'000);
  aggregator.Add(0, {final_only});
  for (const PublishedInterval& p : aggregator.TakeDue(0, 1'000'000'000)) {
    EXPECT_EQ(p.scope, PublishedInterval::Scope::kWorker) << "no cluster or job interval is re-published for an empty final";
  }
  EXPECT_TRUE(aggregator.WorkerComplete(0));
}

// A relay sends an interval up when its grace ends, without the workers not in yet, and their
// reports after it. The controller counts workers, not sessions: the interval is complete (and
// published before the controller's own grace) only once every worker's report is in; counting
// relays, it went out "complete" with a sixth of the operations (10,000 simulated workers
// behind 20 relays).
TEST(RunAggregator, AnIntervalARelaySentWithoutSomeOfItsWorkersWaitsForThem) {
  RunAggregator aggregator(RandomWriteSpec(), {"relay:1", "worker:2"});
  aggregator.SetRelayedWorkers({3, 0});
  int full = 0;
  aggregator.ObserveFullIntervals([&full] { ++full; });
  LatencyHistogram two, one, own;
  for (uint64_t v = 1000; v < 1200; ++v) two.Record(v);
  for (uint64_t v = 90000; v < 90100; ++v) one.Record(v);
  for (uint64_t v = 5000; v < 5050; ++v) own.Record(v);
  const int64_t end = 2'000'000'000;  // of interval 0 (MakeReport)
  const int64_t grace = 2'000'000'000;
  auto relayed = [](v1::IntervalReport r, uint32_t carried, uint32_t owed) {
    r.set_reports_carried(carried);
    r.set_reports_owed(owed);
    return r;
  };
  auto job_and_cluster = [](const std::vector<PublishedInterval>& due) {
    std::vector<PublishedInterval> out;
    for (const PublishedInterval& p : due) {
      if (p.scope != PublishedInterval::Scope::kWorker) out.push_back(p);
    }
    return out;
  };
  // Interval 0: two of the relay's three workers, and the worker beside it.
  aggregator.Add(0, {relayed(MakeReport(0, two, 200 * 4096, false), 2, 3)});
  aggregator.Add(1, {MakeReport(0, own, 50 * 4096, false)});
  EXPECT_EQ(full, 0) << "both sessions are in, but one worker behind the relay is not";
  EXPECT_TRUE(job_and_cluster(aggregator.TakeDue(end + 500'000'000, grace)).empty()) << "waits: the grace is not over";
  EXPECT_EQ(aggregator.NextGraceEndUnixNs(), end + grace);
  // The third worker's report, as the relay sends it late (one report carried).
  aggregator.Add(0, {relayed(MakeReport(0, one, 100 * 4096, false), 1, 0)});
  EXPECT_EQ(full, 1);
  std::vector<PublishedInterval> due = job_and_cluster(aggregator.TakeDue(end + 600'000'000, grace));
  ASSERT_EQ(due.size(), 2u) << "the job's interval and the cluster's";
  LatencyHistogram all = two;
  all.Merge(one);
  all.Merge(own);
  for (const PublishedInterval& p : due) {
    EXPECT_TRUE(p.complete);
    EXPECT_FALSE(p.amended) << "published once, whole";
    EXPECT_EQ(p.workers_reporting, 4u);
    EXPECT_EQ(p.workers_expected, 4u);
    EXPECT_EQ(p.directions[1].ops(), 350u);
    EXPECT_TRUE(*LatencyHistogram::FromProto(p.directions[1].latency()) == all);
  }

  // Interval 1: the late worker's report comes after the controller's grace: published without
  // it (incomplete, 3 of 4 workers), then amended.
  aggregator.Add(0, {relayed(MakeReport(1, two, 200 * 4096, false), 2, 3)});
  aggregator.Add(1, {MakeReport(1, own, 50 * 4096, false)});
  due = job_and_cluster(aggregator.TakeDue(end + 1'000'000'000 + grace, grace));
  ASSERT_EQ(due.size(), 2u);
  for (const PublishedInterval& p : due) {
    EXPECT_FALSE(p.complete);
    EXPECT_EQ(p.workers_reporting, 3u);
    EXPECT_EQ(p.workers_expected, 4u);
    EXPECT_EQ(p.directions[1].ops(), 250u);
  }
  aggregator.Add(0, {relayed(MakeReport(1, one, 100 * 4096, false), 1, 0)});
  due = job_and_cluster(aggregator.TakeDue(end + 1'100'000'000 + grace, grace));
  ASSERT_EQ(due.size(), 2u);
  for (const PublishedInterval& p : due) {
    EXPECT_TRUE(p.amended);
    EXPECT_TRUE(p.complete);
    EXPECT_EQ(p.workers_reporting, 4u);
    EXPECT_EQ(p.directions[1].ops(), 350u);
  }
}

// The job's and the cluster's intervals published at 2 s (each worker's own left out), each
// expected complete with all `workers` of `workers` in; how many there were.
int CompletePublications(RunAggregator& aggregator, uint32_t workers) {
  int published = 0;
  for (const PublishedInterval& p : aggregator.TakeDue(0, 2'000'000'000)) {
    if (p.scope == PublishedInterval::Scope::kWorker) continue;
    ++published;
    EXPECT_TRUE(p.complete);
    EXPECT_EQ(p.workers_reporting, workers);
    EXPECT_EQ(p.workers_expected, workers);
  }
  return published;
}

// A relay built before relays said what they carry (no reports_carried): its first report of an
// interval stands for all of its workers, as it did then.
TEST(RunAggregator, ARelayThatSaysNothingOfItsWorkersCarriesThemAll) {
  RunAggregator aggregator(RandomWriteSpec(), {"old-relay:1"});
  aggregator.SetRelayedWorkers({5});
  LatencyHistogram h;
  h.Record(1000);
  aggregator.Add(0, {MakeReport(0, h, 4096, false)});
  EXPECT_EQ(CompletePublications(aggregator, 5), 2) << "the job's interval and the cluster's, at once";
}

// A relay's counts are taken at most up to its workers: one of 3 claiming thousands carries 3.
TEST(RunAggregator, ARelayCarriesAtMostItsWorkersReports) {
  RunAggregator aggregator(RandomWriteSpec(), {"relay:1"});
  aggregator.SetRelayedWorkers({3});
  LatencyHistogram h;
  h.Record(1000);
  v1::IntervalReport claim = MakeReport(0, h, 4096, false);
  claim.set_reports_carried(4'000'000'000u);
  claim.set_reports_owed(4'000'000'000u);
  aggregator.Add(0, {claim});
  aggregator.Add(0, {claim});  // and again, as an amendment
  EXPECT_EQ(CompletePublications(aggregator, 3), 2);
}

// Behind relays the text report shows the workers' spread and names the outliers, from the
// relays' summaries.
TEST(TextReport, WorkersBehindRelaysAreSummedUpWithTheirOutliers) {
  v1::RunReport report;
  report.set_workers_expected(3);
  report.set_workers_completed(2);
  const struct {
    const char* address;
    uint64_t ops, p99;
    uint32_t late;
    const char* lost;
  } workers[] = {{"10.0.0.1:7420", 1000, 200'000, 0, ""}, {"10.0.0.2:7420", 100, 900'000, 2, ""}, {"10.0.0.3:7420", 900, 300'000, 0, "gone"}};
  for (const auto& w : workers) {
    v1::RelayedWorkerSummary* s = report.add_relayed_workers();
    s->set_address(w.address);
    s->set_ops(w.ops);
    s->set_elapsed_ns(1'000'000'000);
    s->set_latency_p99_ns(w.p99);
    s->set_late_intervals(w.late);
    s->set_lost(w.lost);
  }
  const std::string text = RenderTextReport(report);
  EXPECT_NE(text.find("Workers behind relays (3;"), std::string::npos) << text;
  EXPECT_NE(text.find("lowest IOPS: 10.0.0.2:7420 100"), std::string::npos) << text;
  EXPECT_NE(text.find("highest p99: 10.0.0.2:7420 900"), std::string::npos) << text;
  EXPECT_NE(text.find("1 worker(s) reported intervals after their relay's grace"), std::string::npos) << text;
  EXPECT_NE(text.find("1 worker(s) lost"), std::string::npos) << text;
}

}  // namespace
}  // namespace iofleet
