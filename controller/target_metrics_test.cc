#include "controller/target_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
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

TEST(TargetMetricsScraper, ScrapesEachIntervalBoundary) {
  Endpoint endpoint;
  endpoint.Write(5);  // before the run: not in it
  TargetMetricsScraper scraper({{"jfs", endpoint.url()}}, absl::Milliseconds(200));
  std::vector<std::string> lines;
  std::mutex mu;
  ASSERT_TRUE(scraper.Start([&](std::string line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.push_back(std::move(line));
  }).ok());
  const int64_t start = NowNs() + 100'000'000;
  scraper.PhaseStarted(0, start);
  scraper.PhaseStarted(0, start);  // every job of the phase says so
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::nanoseconds(start + 50'000'000)));
  endpoint.Write(100);  // interval 0
  endpoint.Put(0.015);
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::nanoseconds(start + 250'000'000)));
  endpoint.Write(40);  // interval 1
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::nanoseconds(start + 450'000'000)));
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
  // The boundaries are the workers' interval clock: start + 200 ms, + 400 ms.
  EXPECT_NEAR(static_cast<double>(t.intervals(0).end_unix_ns() - start), 200e6, 60e6);
  EXPECT_NEAR(static_cast<double>(t.intervals(1).end_unix_ns() - start), 400e6, 60e6);
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
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_THAT(lines[1], HasSubstr("{\"scope\":\"target\",\"target\":\"jfs\",\"phase\""));
  EXPECT_THAT(lines[1], HasSubstr("\"index\":1"));
}

// An endpoint that goes away mid-run is a problem of its result; the run goes on.
TEST(TargetMetricsScraper, EndpointThatDisappearsIsAProblemNotAFailure) {
  Endpoint endpoint;
  TargetMetricsScraper scraper({{"jfs", endpoint.url()}}, absl::Milliseconds(100));
  ASSERT_TRUE(scraper.Start(nullptr).ok());
  const int64_t start = NowNs() + 20'000'000;
  scraper.PhaseStarted(0, start);
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::nanoseconds(start + 150'000'000)));
  endpoint.Stop();
  std::this_thread::sleep_until(std::chrono::system_clock::time_point(std::chrono::nanoseconds(start + 350'000'000)));
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
