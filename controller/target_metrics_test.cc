#include "controller/target_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

TEST(TargetMetricsFlag, NameEqualsUrl) {
  auto ok = ParseTargetMetricsFlag("juicefs=http://127.0.0.1:9567/metrics");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->name, "juicefs");
  EXPECT_EQ(ok->url, "http://127.0.0.1:9567/metrics");
  EXPECT_THAT(std::string(ParseTargetMetricsFlag("http://x:1/metrics").status().message()), HasSubstr("is not NAME=URL"));
  EXPECT_THAT(std::string(ParseTargetMetricsFlag("a b=http://x:1/").status().message()), HasSubstr("use letters, digits"));
  EXPECT_THAT(std::string(ParseTargetMetricsFlag("j=ftp://x/metrics").status().message()), HasSubstr("not an http:// or https:// URL"));
  EXPECT_THAT(std::string(ParseTargetMetricsFlag("j=http:///metrics").status().message()), HasSubstr("has no host"));
}

// A target that does not answer is refused before the run, naming it.
TEST(TargetMetricsScraper, UnreachableEndpointIsAnErrorAtStart) {
  TargetMetricsScraper scraper({{"gone", "http://127.0.0.1:1/metrics"}}, absl::Milliseconds(100));
  const absl::Status started = scraper.Start(nullptr);
  EXPECT_EQ(started.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(started.message()), HasSubstr("--target-metrics gone=http://127.0.0.1:1/metrics"));
}

// A real Prometheus endpoint (prometheus-cpp's exposer) whose counter and histogram move
// while a phase runs: every interval boundary is scraped, each interval holds what changed in
// it, and the run total is the sum.
class Endpoint {
 public:
  Endpoint()
      : exposer_(std::make_unique<prometheus::Exposer>("127.0.0.1:0")),
        registry_(std::make_shared<prometheus::Registry>()),
        ops_(prometheus::BuildCounter().Name("juicefs_fuse_ops_total").Register(*registry_)),
        time_(prometheus::BuildCounter().Name("juicefs_fuse_ops_durations_seconds").Register(*registry_)),
        put_(prometheus::BuildHistogram().Name("juicefs_object_request_durations_histogram_seconds").Register(*registry_)) {
    exposer_->RegisterCollectable(registry_);
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", exposer_->GetListeningPorts().at(0), "/metrics"); }
  void Write(int n) {
    ops_.Add({{"method", "write"}, {"mp", "/mnt/jfs"}}).Increment(n);
    time_.Add({{"method", "write"}, {"mp", "/mnt/jfs"}}).Increment(0.001 * n);
  }
  void Put(double seconds) { put_.Add({{"method", "PUT"}}, prometheus::Histogram::BucketBoundaries{0.01, 0.02, 0.04}).Observe(seconds); }
  void Stop() { exposer_.reset(); }

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& ops_;
  prometheus::Family<prometheus::Counter>& time_;
  prometheus::Family<prometheus::Histogram>& put_;
};

// The interval-log lines a scraper has written, and a wait for the n-th (bounded: 30 s).
class Lines {
 public:
  std::function<void(std::string)> Sink() {
    return [this](std::string line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(std::move(line));
      arrived_.notify_all();
    };
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return arrived_.wait_for(lock, std::chrono::seconds(30), [&] { return lines_.size() >= n; });
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::condition_variable arrived_;
  std::vector<std::string> lines_;
};

TEST(TargetMetricsScraper, ScrapesEachIntervalBoundary) {
  Endpoint endpoint;
  endpoint.Write(5);  // before the run: not in it
  TargetMetricsScraper scraper({{"jfs", endpoint.url()}}, absl::Milliseconds(200));
  Lines lines;
  ASSERT_TRUE(scraper.Start(lines.Sink()).ok());
  scraper.PhaseArmed();  // the baseline, before the instant is picked
  const int64_t start = NowNs() + 100'000'000;
  scraper.PhaseStarted(0, start);
  scraper.PhaseStarted(0, start);  // every job of the phase says so
  // Each batch of writes once the scrape closing the interval before it is in (its log line).
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::nanoseconds(start)));
  endpoint.Write(100);  // interval 0
  endpoint.Put(0.015);
  ASSERT_TRUE(lines.WaitFor(1));
  endpoint.Write(40);  // interval 1
  ASSERT_TRUE(lines.WaitFor(2));
  endpoint.Write(7);  // interval 2, the last (partial)
  endpoint.Put(0.03);
  scraper.PhaseEnded();
  v1::RunReport report;
  scraper.Finish(report.mutable_target_metrics());
  ASSERT_EQ(report.target_metrics_size(), 1);
  const v1::TargetMetricsResult& t = report.target_metrics(0);
  EXPECT_EQ(t.name(), "jfs");
  EXPECT_EQ(t.failed_scrapes(), 0u);
  EXPECT_TRUE(t.problems().empty()) << t.problems(0);
  ASSERT_EQ(t.intervals_size(), 3);
  const double want[] = {100, 40, 7};
  for (int i = 0; i < 3; ++i) {
    const v1::TargetMetricsInterval& in = t.intervals(i);
    EXPECT_EQ(in.phase(), 0u);
    EXPECT_EQ(in.index(), static_cast<uint32_t>(i));
    double writes = 0;
    for (const v1::TargetMetricSeries& s : in.series()) {
      if (s.name() == "juicefs_fuse_ops_total") writes = s.value();
    }
    EXPECT_EQ(writes, want[i]) << "interval " << i;
  }
  // The boundaries are the workers' interval clock: never before start + 200 ms, + 400 ms.
  EXPECT_GE(t.intervals(0).end_unix_ns(), start + 200'000'000);
  EXPECT_GE(t.intervals(1).end_unix_ns(), start + 400'000'000);
  double total_writes = 0, puts = 0;
  for (const v1::TargetMetricSeries& s : t.run_total()) {
    if (s.name() == "juicefs_fuse_ops_total") total_writes = s.value();
    if (s.kind() == v1::TargetMetricSeries::HISTOGRAM) puts = s.count();
  }
  EXPECT_EQ(total_writes, 147);
  EXPECT_EQ(puts, 2);
  EXPECT_THAT(t.highlights(), Contains(HasSubstr("JuiceFS FUSE operations: write 147 (mean 1.00ms)")));
  EXPECT_THAT(t.highlights(), Contains(HasSubstr("JuiceFS object PUT: 2 requests, p50 20.0ms")));
  // One interval-log line per interval, the endpoint named.
  const std::vector<std::string> logged = lines.Get();
  ASSERT_EQ(logged.size(), 3u);
  EXPECT_THAT(logged[1], HasSubstr("{\"scope\":\"target\",\"target\":\"jfs\",\"phase\""));
  EXPECT_THAT(logged[1], HasSubstr("\"index\":1"));
}

// What intervals keep is bounded (per interval, and over the run), each bound said once; the
// run totals still cover every series.
TEST(TargetMetricsScraper, IntervalRecordsAreBounded) {
  Endpoint endpoint;
  TargetMetricsScraper scraper({{"jfs", endpoint.url()}}, absl::Milliseconds(100), {.series_per_interval = 3, .series_records = 7});
  Lines lines;
  ASSERT_TRUE(scraper.Start(lines.Sink()).ok());
  scraper.PhaseArmed();
  scraper.PhaseStarted(0, NowNs() + 20'000'000);
  for (size_t i = 1; i <= 4; ++i) {
    endpoint.Write(1);  // with the exposer's own counters, more than 3 series move each interval
    ASSERT_TRUE(lines.WaitFor(i));
  }
  endpoint.Write(1);
  scraper.PhaseEnded();
  v1::RunReport report;
  scraper.Finish(report.mutable_target_metrics());
  const v1::TargetMetricsResult& t = report.target_metrics(0);
  ASSERT_GE(t.intervals_size(), 4);
  int kept = 0;
  for (const v1::TargetMetricsInterval& in : t.intervals()) {
    EXPECT_LE(in.series_size(), 3);
    kept += in.series_size();
  }
  EXPECT_EQ(kept, 7);
  ASSERT_EQ(t.problems_size(), 2) << "each bound said once";
  EXPECT_THAT(t.problems(0), HasSubstr("the first 3 kept"));
  EXPECT_THAT(t.problems(1), HasSubstr("intervals keep no more series (7 kept in all"));
  double writes = 0;
  for (const v1::TargetMetricSeries& s : t.run_total()) writes += s.name() == "juicefs_fuse_ops_total" ? s.value() : 0;
  EXPECT_EQ(writes, 5);
}

// An endpoint that goes away mid-run is a problem of its result; the run goes on.
TEST(TargetMetricsScraper, EndpointThatDisappearsIsAProblemNotAFailure) {
  Endpoint endpoint;
  TargetMetricsScraper scraper({{"jfs", endpoint.url()}}, absl::Milliseconds(100));
  Lines lines;
  ASSERT_TRUE(scraper.Start(lines.Sink()).ok());
  scraper.PhaseArmed();
  scraper.PhaseStarted(0, NowNs() + 20'000'000);
  ASSERT_TRUE(lines.WaitFor(1));  // an interval in
  endpoint.Stop();
  scraper.PhaseEnded();  // its closing scrape fails
  scraper.PhaseArmed();  // and the next phase's baseline
  scraper.PhaseStarted(1, NowNs() + 20'000'000);
  scraper.PhaseEnded();
  v1::RunReport report;
  scraper.Finish(report.mutable_target_metrics());
  ASSERT_EQ(report.target_metrics_size(), 1);
  const v1::TargetMetricsResult& t = report.target_metrics(0);
  EXPECT_GE(t.intervals_size(), 1);
  EXPECT_GE(t.failed_scrapes(), 2u);
  ASSERT_EQ(t.problems_size(), 1) << "named once, not at every failed scrape";
  EXPECT_THAT(t.problems(0), HasSubstr("a scrape closing interval"));
  EXPECT_TRUE(report.problems().empty());
}

}  // namespace
}  // namespace iofleet
