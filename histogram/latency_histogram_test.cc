#include "histogram/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

// The exact p-th percentile as fio defines it: the sample of rank ceil(p/100 * n).
uint64_t ExactPercentile(std::vector<uint64_t> sorted, double p) {
  uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * sorted.size()));
  rank = std::clamp<uint64_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void ExpectPercentilesWithinOnePercent(std::vector<uint64_t> samples, const char* what) {
  LatencyHistogram h;
  for (uint64_t s : samples) h.Record(s);
  std::sort(samples.begin(), samples.end());
  for (double p : {1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0}) {
    const double exact = static_cast<double>(ExactPercentile(samples, p));
    const double got = static_cast<double>(h.ValueAtPercentile(p));
    EXPECT_LE(std::abs(got - exact), 0.01 * exact) << what << " p" << p << " exact " << exact << " got " << got;
  }
  EXPECT_EQ(h.min_ns(), samples.front()) << what;
  EXPECT_EQ(h.max_ns(), samples.back()) << what;
  EXPECT_EQ(h.count(), samples.size());
  double sum = 0;
  for (uint64_t s : samples) sum += s;
  EXPECT_NEAR(h.mean_ns(), sum / samples.size(), 1e-6 * sum / samples.size());
}

TEST(LatencyHistogram, PercentilesWithinOnePercentOnSyntheticDistributions) {
  std::mt19937_64 rng(42);
  std::vector<uint64_t> uniform, lognormal, bimodal, exponential;
  std::uniform_int_distribution<uint64_t> u(1'000, 5'000'000);
  std::lognormal_distribution<double> ln(11.0, 1.5);  // ~60 us median, long tail
  std::exponential_distribution<double> ex(1.0 / 200'000);
  for (int i = 0; i < 200'000; ++i) {
    uniform.push_back(u(rng));
    lognormal.push_back(static_cast<uint64_t>(ln(rng)) + 1);
    bimodal.push_back(i % 10 == 0 ? 80'000'000 + u(rng) : 20'000 + u(rng) / 100);
    exponential.push_back(static_cast<uint64_t>(ex(rng)));
  }
  ExpectPercentilesWithinOnePercent(uniform, "uniform");
  ExpectPercentilesWithinOnePercent(lognormal, "lognormal");
  ExpectPercentilesWithinOnePercent(bimodal, "bimodal");
  ExpectPercentilesWithinOnePercent(exponential, "exponential");
}

TEST(LatencyHistogram, StddevMatchesSampleStddev) {
  LatencyHistogram h;
  std::vector<double> xs = {100, 200, 300, 400, 1000};
  for (double x : xs) h.Record(static_cast<uint64_t>(x));
  // mean 400, sample variance = (90000+40000+10000+0+360000)/4 = 125000
  EXPECT_NEAR(h.stddev_ns(), std::sqrt(125000.0), 1e-6);
}

TEST(LatencyHistogram, EveryBucketBoundIsWithinTheErrorBound) {
  for (uint32_t i = 0; i + 1 < HistogramLayout::kBucketCount; ++i) {
    const uint64_t lo = HistogramLayout::BucketLower(i), hi = HistogramLayout::BucketUpper(i);
    ASSERT_EQ(HistogramLayout::BucketIndex(lo), i);
    ASSERT_EQ(HistogramLayout::BucketIndex(hi), i);
    ASSERT_EQ(HistogramLayout::BucketLower(i + 1), hi + 1) << "gap after bucket " << i;
    const uint64_t mid = HistogramLayout::BucketMidpoint(i);
    ASSERT_LE(static_cast<double>(mid - lo), 0.0079 * static_cast<double>(lo) + 0.5);
    ASSERT_LE(static_cast<double>(hi - mid), 0.0079 * static_cast<double>(lo) + 0.5);
  }
  EXPECT_EQ(HistogramLayout::BucketIndex(UINT64_MAX), HistogramLayout::kBucketCount - 1);
}

// `proto` decodes to exactly the samples of `expected`.
void ExpectHolds(const LatencyHistogramProto& proto, const LatencyHistogram& expected) {
  auto decoded = LatencyHistogram::FromProto(proto);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, expected);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingIntoOne) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ln(10.0, 2.0);
  LatencyHistogram a, b, all;
  for (int i = 0; i < 50'000; ++i) {
    uint64_t v = static_cast<uint64_t>(ln(rng));
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  LatencyHistogram merged = a;
  merged.Merge(b);
  EXPECT_EQ(merged, all);
  for (double p : {50.0, 99.0, 99.99}) EXPECT_EQ(merged.ValueAtPercentile(p), all.ValueAtPercentile(p));

  // The sparse wire-level merge gives the same histogram.
  LatencyHistogramProto sparse = a.ToProto();
  MergeHistogramProto(b.ToProto(), &sparse);
  ExpectHolds(sparse, all);
}

TEST(LatencyHistogram, ManySmallMergesIntoOneTotalStayExact) {
  // As the controller does: many reports of a few buckets each into one total, most of them
  // adding to buckets it has (merged in place), some bringing new ones (merged anew).
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> ln(9.0, 1.5);
  LatencyHistogram all;
  LatencyHistogramProto total;
  for (int report = 0; report < 500; ++report) {
    LatencyHistogram one;
    for (int i = 0; i < 1 + report % 7; ++i) one.Record(static_cast<uint64_t>(ln(rng)));
    all.Merge(one);
    MergeHistogramProto(one.ToProto(), &total);
    ASSERT_TRUE(ValidateHistogramProto(total).ok()) << "after report " << report;
  }
  ExpectHolds(total, all);
}

TEST(LatencyHistogram, WireFormsMergedIntoADenseHistogramAreExact) {
  // As a relay does: many workers' reports, in their wire form, added into one dense total.
  std::mt19937_64 rng(13);
  std::lognormal_distribution<double> ln(10.0, 2.0);
  LatencyHistogram all, merged;
  for (int report = 0; report < 200; ++report) {
    LatencyHistogram one;
    for (int i = 0; i < report % 50; ++i) one.Record(static_cast<uint64_t>(ln(rng)));
    all.Merge(one);
    merged.MergeProto(one.ToProto());
  }
  EXPECT_EQ(merged, all);
  EXPECT_EQ(merged.ToProto().SerializeAsString(), all.ToProto().SerializeAsString());
  // A bucket past the layout (never from a validated report) is not written.
  LatencyHistogramProto bad;
  bad.add_bucket_index(HistogramLayout::kBucketCount + 5);
  bad.add_bucket_count(1);
  bad.set_count(1);
  LatencyHistogram sink;
  sink.MergeProto(bad);
  for (uint32_t i = 0; i < HistogramLayout::kBucketCount; ++i) ASSERT_EQ(sink.BucketCount(i), 0u);
}

TEST(LatencyHistogram, PercentilesOfTheWireFormAreThoseOfTheHistogram) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> ln(11.0, 2.5);
  const std::vector<double> percentiles = {0, 1, 50, 90, 99, 99.9, 99.99, 100, 37.5};
  for (int samples : {1, 2, 3, 10, 1000, 100'000}) {
    LatencyHistogram h;
    for (int i = 0; i < samples; ++i) h.Record(static_cast<uint64_t>(ln(rng)));
    const std::vector<uint64_t> values = ValuesAtPercentiles(h.ToProto(), percentiles);
    for (size_t i = 0; i < percentiles.size(); ++i) {
      EXPECT_EQ(values[i], h.ValueAtPercentile(percentiles[i])) << samples << " samples, p" << percentiles[i];
    }
  }
  EXPECT_EQ(ValuesAtPercentiles(LatencyHistogramProto(), {50, 99}), (std::vector<uint64_t>{0, 0}));
}

TEST(LatencyHistogram, EncodeDecodeRoundTrip) {
  LatencyHistogram h;
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 5'000ull, 123'456'789ull, 7'200'000'000'000ull}) h.Record(v);
  LatencyHistogramProto proto = h.ToProto();
  EXPECT_EQ(proto.bucket_index_size(), 7);  // sparse: only non-empty buckets travel
  EXPECT_EQ(proto.bucket_count_size(), 7);
  std::string wire;
  ASSERT_TRUE(proto.SerializeToString(&wire));
  LatencyHistogramProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  auto back = LatencyHistogram::FromProto(parsed);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, h);
}

TEST(LatencyHistogram, FromProtoRejectsInconsistentInput) {
  LatencyHistogramProto bad;
  bad.add_bucket_index(5);
  bad.add_bucket_count(3);
  bad.set_count(4);
  EXPECT_EQ(LatencyHistogram::FromProto(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.set_count(3);
  ASSERT_TRUE(LatencyHistogram::FromProto(bad).ok());
  bad.add_bucket_index(HistogramLayout::kBucketCount);
  bad.add_bucket_count(0);
  EXPECT_FALSE(LatencyHistogram::FromProto(bad).ok());
  LatencyHistogramProto uneven;  // an index without its count
  uneven.add_bucket_index(5);
  EXPECT_THAT(std::string(LatencyHistogram::FromProto(uneven).status().message()), ::testing::HasSubstr("1 bucket indexes but 0 bucket counts"));
}

TEST(LatencyHistogram, Extremes) {
  LatencyHistogram h;
  h.Record(0);
  h.Record(1);
  const uint64_t two_hours = 2ull * 3600 * 1'000'000'000;
  h.Record(two_hours);
  EXPECT_EQ(h.min_ns(), 0u);
  EXPECT_EQ(h.max_ns(), two_hours);
  EXPECT_EQ(h.ValueAtPercentile(1), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 1u);  // exact below 128 ns
  const double top = static_cast<double>(h.ValueAtPercentile(100));
  EXPECT_EQ(top, static_cast<double>(two_hours));  // clamped to the max: never above it
  EXPECT_NEAR(static_cast<double>(h.ValueAtPercentile(99)), two_hours, 0.01 * two_hours);
  LatencyHistogram empty;
  EXPECT_EQ(empty.ValueAtPercentile(99), 0u);
  EXPECT_EQ(empty.min_ns(), 0u);
  EXPECT_EQ(empty.stddev_ns(), 0.0);
}

// Take hands over everything recorded and leaves the histogram empty, so the next interval
// has its own count, sums and extremes (the worker's counters take a buffer once its writer
// has moved to the other; worker/interval_cut_test.cc checks that hand-over under load).
TEST(LiveLatencyHistogram, TakeHandsOverEverythingAndEmpties) {
  LiveLatencyHistogram live;
  LatencyHistogram expected;
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> ln(9.0, 1.0);
  for (int i = 0; i < 300'000; ++i) {
    const uint64_t v = static_cast<uint64_t>(ln(rng));
    live.Record(v);
    expected.Record(v);
  }
  const LatencyHistogram taken = live.Take();
  EXPECT_EQ(taken.count(), expected.count());
  EXPECT_EQ(taken.sum_ns(), expected.sum_ns());
  EXPECT_EQ(taken.min_ns(), expected.min_ns());
  EXPECT_EQ(taken.max_ns(), expected.max_ns());
  for (uint32_t i = 0; i < HistogramLayout::kBucketCount; ++i) {
    ASSERT_EQ(taken.BucketCount(i), expected.BucketCount(i)) << i;
  }
  EXPECT_EQ(live.Take().count(), 0u) << "a second take finds nothing";
  live.Record(7);
  const LatencyHistogram next = live.Take();
  EXPECT_EQ(next.count(), 1u);
  EXPECT_EQ(next.min_ns(), 7u) << "extremes are the interval's own";
  EXPECT_EQ(next.max_ns(), 7u);
}

TEST(LatencyHistogram, SinceKeepsExtremesWithinTheInterval) {
  LatencyHistogram cumulative;
  cumulative.Record(1000);
  LatencyHistogram first = cumulative;
  cumulative.Record(5000);
  cumulative.Record(700);  // new cumulative minimum, set in this interval: exact
  LatencyHistogram delta = cumulative.Since(first);
  EXPECT_EQ(delta.count(), 2u);
  EXPECT_EQ(delta.min_ns(), 700u);
  EXPECT_EQ(delta.max_ns(), 5000u);
  EXPECT_EQ(delta.sum_ns(), 5700u);
}

}  // namespace
}  // namespace iofleet
