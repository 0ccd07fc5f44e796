#include "metrics/prometheus_text.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;
using Kind = PrometheusSeries::Kind;

const PrometheusSeries* Find(const PrometheusScrape& scrape, const std::string& key) {
  for (const PrometheusSeries& s : scrape.series) {
    if (s.Key() == key) return &s;
  }
  return nullptr;
}

// The shapes JuiceFS (client_golang) exposes: HELP/TYPE lines, labelled counters, a histogram
// with +Inf, a gauge in exponent notation, a summary.
constexpr char kGoExposition[] = R"(# HELP juicefs_fuse_ops_total Total number of operations.
# TYPE juicefs_fuse_ops_total counter
juicefs_fuse_ops_total{method="write",mp="/mnt/jfs",vol_name="iofleet"} 512
juicefs_fuse_ops_total{vol_name="iofleet",mp="/mnt/jfs",method="flush"} 3
# HELP juicefs_object_request_durations_histogram_seconds Object requests latency distributions.
# TYPE juicefs_object_request_durations_histogram_seconds histogram
juicefs_object_request_durations_histogram_seconds_bucket{method="PUT",le="0.01"} 2
juicefs_object_request_durations_histogram_seconds_bucket{method="PUT",le="0.015"} 6
juicefs_object_request_durations_histogram_seconds_bucket{method="PUT",le="+Inf"} 8
juicefs_object_request_durations_histogram_seconds_sum{method="PUT"} 0.104
juicefs_object_request_durations_histogram_seconds_count{method="PUT"} 8
# TYPE juicefs_used_space gauge
juicefs_used_space 1.048576e+06
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 3.1e-05
go_gc_duration_seconds_sum 0.0012
go_gc_duration_seconds_count 17
untyped_thing{path="a \"quoted\\ name\"\n"} NaN 1700000000000
)";

TEST(PrometheusText, ReadsWhatClientGolangExposes) {
  auto scrape = ParsePrometheusText(kGoExposition);
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  ASSERT_EQ(scrape->series.size(), 8u);
  // Labels in canonical order whatever order they were exposed in.
  const PrometheusSeries* writes = Find(*scrape, R"(juicefs_fuse_ops_total{method="write",mp="/mnt/jfs",vol_name="iofleet"})");
  ASSERT_NE(writes, nullptr);
  EXPECT_EQ(writes->kind, Kind::kCounter);
  EXPECT_EQ(writes->value, 512);
  ASSERT_NE(Find(*scrape, R"(juicefs_fuse_ops_total{method="flush",mp="/mnt/jfs",vol_name="iofleet"})"), nullptr);
  const PrometheusSeries* put = Find(*scrape, R"(juicefs_object_request_durations_histogram_seconds{method="PUT"})");
  ASSERT_NE(put, nullptr);
  EXPECT_EQ(put->kind, Kind::kHistogram);
  ASSERT_EQ(put->buckets.size(), 3u);
  EXPECT_EQ(put->buckets[1], std::make_pair(0.015, 6.0));
  EXPECT_TRUE(std::isinf(put->buckets[2].first));
  EXPECT_EQ(put->count, 8);
  EXPECT_DOUBLE_EQ(put->sum, 0.104);
  EXPECT_EQ(Find(*scrape, "juicefs_used_space")->value, 1048576);
  EXPECT_EQ(Find(*scrape, R"(go_gc_duration_seconds{quantile="0.5"})")->kind, Kind::kGauge);
  EXPECT_EQ(Find(*scrape, "go_gc_duration_seconds_count")->kind, Kind::kCounter);
  EXPECT_EQ(Find(*scrape, "go_gc_duration_seconds_count")->value, 17);
  const PrometheusSeries* odd = Find(*scrape, R"(untyped_thing{path="a \"quoted\\ name\"\n"})");
  ASSERT_NE(odd, nullptr);
  EXPECT_TRUE(std::isnan(odd->value));
}

// OpenMetrics-style counters: TYPE names the family, samples end in _total.
TEST(PrometheusText, CounterFamilyWithTotalSuffix) {
  auto scrape = ParsePrometheusText("# TYPE requests counter\nrequests_total{code=\"200\"} 7\n");
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  ASSERT_EQ(scrape->series.size(), 1u);
  EXPECT_EQ(scrape->series[0].kind, Kind::kCounter);
  EXPECT_EQ(scrape->series[0].Key(), "requests_total{code=\"200\"}");
}

TEST(PrometheusText, ErrorsNameTheLine) {
  EXPECT_THAT(std::string(ParsePrometheusText("ok 1\nbad{a=\"x\" 2\n").status().message()), HasSubstr("line 2: "));
  EXPECT_THAT(std::string(ParsePrometheusText("a{b=c} 1\n").status().message()), HasSubstr("line 1: label b's value must be quoted"));
  EXPECT_THAT(std::string(ParsePrometheusText("a 1\na 2\n").status().message()), HasSubstr("line 2: a: a series given twice"));
  EXPECT_THAT(std::string(ParsePrometheusText("a one\n").status().message()), HasSubstr("'one' is not a number"));
  EXPECT_THAT(std::string(ParsePrometheusText("# TYPE a histogram\na_bucket 1\n").status().message()), HasSubstr("numeric le label"));
  EXPECT_THAT(std::string(ParsePrometheusText("# TYPE a wobble\n").status().message()), HasSubstr("unknown metric type 'wobble'"));
  EXPECT_THAT(std::string(ParsePrometheusText("a{b=\"x\",b=\"y\"} 1\n").status().message()), HasSubstr("label b given twice"));
  EXPECT_FALSE(ParsePrometheusText("a 1 2 3\n").ok());
  EXPECT_FALSE(ParsePrometheusText("{a=\"b\"} 1\n").ok());
  EXPECT_FALSE(ParsePrometheusText("a{b=\"\\q\"} 1\n").ok());
}

TEST(PrometheusText, LimitsBoundWhatIsKept) {
  std::string many;
  for (int i = 0; i < 20; ++i) many += "m" + std::to_string(i) + " 1\n";
  EXPECT_EQ(ParsePrometheusText(many, {.max_series = 10}).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ParsePrometheusText(many, {.max_bytes = 16}).status().code(), absl::StatusCode::kResourceExhausted);
  std::string buckets = "# TYPE h histogram\n";
  for (int i = 0; i < 20; ++i) buckets += "h_bucket{le=\"" + std::to_string(i) + "\"} 1\n";
  EXPECT_FALSE(ParsePrometheusText(buckets, {.max_buckets = 10}).ok());
}

TEST(PrometheusText, IncreaseBetweenScrapes) {
  auto before = ParsePrometheusText(
      "# TYPE c counter\nc{m=\"w\"} 10\nc{m=\"r\"} 4\n# TYPE g gauge\ng 5\nsame 1\n"
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"2\"} 3\nh_bucket{le=\"+Inf\"} 3\nh_sum 4\nh_count 3\n");
  auto after = ParsePrometheusText(
      "# TYPE c counter\nc{m=\"w\"} 25\nc{m=\"r\"} 4\nc{m=\"new\"} 2\n# TYPE g gauge\ng 7\nsame 1\n"
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"2\"} 7\nh_bucket{le=\"+Inf\"} 8\nh_sum 14\nh_count 8\n");
  ASSERT_TRUE(before.ok() && after.ok());
  const std::vector<PrometheusSeries> d = PrometheusIncrease(*before, *after);
  // Unchanged counters and gauges are left out; a counter that appears counts from 0.
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].Key(), "c{m=\"w\"}");
  EXPECT_EQ(d[0].value, 15);
  EXPECT_EQ(d[1].Key(), "c{m=\"new\"}");
  EXPECT_EQ(d[1].value, 2);
  EXPECT_EQ(d[2].Key(), "g");
  EXPECT_EQ(d[2].value, 7);
  EXPECT_EQ(d[3].count, 5);
  EXPECT_EQ(d[3].sum, 10);
  EXPECT_EQ(d[3].buckets[0].second, 1);
  EXPECT_EQ(d[3].buckets[1].second, 4);
  EXPECT_EQ(d[3].buckets[2].second, 5);
  EXPECT_EQ(PrometheusIncrease(*before, *after, /*keep_unchanged=*/true).size(), 6u);
  // A restart: counters went down, so all of the new value is the increase.
  auto restarted = ParsePrometheusText("# TYPE c counter\nc{m=\"w\"} 3\n");
  ASSERT_TRUE(restarted.ok());
  const std::vector<PrometheusSeries> r = PrometheusIncrease(*after, *restarted);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].value, 3);
}

TEST(PrometheusText, QuantilesAsHistogramQuantile) {
  const std::vector<std::pair<double, double>> b = {{0.01, 2}, {0.015, 6}, {0.02, 6}, {INFINITY, 8}};
  EXPECT_DOUBLE_EQ(HistogramQuantile(b, 0.25), 0.01);         // rank 2: the first bucket's bound
  EXPECT_DOUBLE_EQ(HistogramQuantile(b, 0.5), 0.0125);        // rank 4: halfway through (0.01, 0.015]
  EXPECT_DOUBLE_EQ(HistogramQuantile(b, 0.99), 0.02);         // in +Inf: the largest finite bound
  EXPECT_DOUBLE_EQ(HistogramQuantile({{1, 4}, {INFINITY, 4}}, 0.5), 0.5);  // from 0 to the first bound
  EXPECT_TRUE(std::isnan(HistogramQuantile({{1, 0}, {INFINITY, 0}}, 0.5)));
  EXPECT_TRUE(std::isnan(HistogramQuantile({}, 0.5)));
}

// Real scrapes, kept as test data: JuiceFS 1.3.1's /metrics during a write job, and
// prometheus-cpp's (the worker's own /metrics).
TEST(PrometheusText, RealScrapes) {
  for (const std::string file : {"metrics/testdata/juicefs-1.3.1.prom", "metrics/testdata/iofleet-worker.prom"}) {
    std::ifstream in(file);
    ASSERT_TRUE(in.good()) << file;
    std::stringstream text;
    text << in.rdbuf();
    auto scrape = ParsePrometheusText(text.str());
    ASSERT_TRUE(scrape.ok()) << file << ": " << scrape.status();
    EXPECT_GT(scrape->series.size(), 10u) << file;
    size_t histograms = 0;
    for (const PrometheusSeries& s : scrape->series) {
      if (s.kind != Kind::kHistogram) continue;
      ++histograms;
      ASSERT_FALSE(s.buckets.empty()) << s.Key();
      EXPECT_TRUE(std::isinf(s.buckets.back().first)) << s.Key();
      EXPECT_EQ(s.buckets.back().second, s.count) << s.Key();
    }
    EXPECT_GT(histograms, 0u) << file;
  }
}

}  // namespace
}  // namespace iofleet
