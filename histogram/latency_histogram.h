// Log-linear latency histogram in nanoseconds: values below 128 ns get one bucket each, above
// that every power of two is split into 64 buckets, so a bucket's midpoint is within 1/128
// (0.78%) of any value in it. The layout spans the whole uint64 range (no 17 s cap as in fio),
// and two histograms merge exactly by adding counts of equal bucket indices — which is what
// lets the controller build exact cluster percentiles from many workers.
#ifndef IOFLEET_HISTOGRAM_LATENCY_HISTOGRAM_H_
#define IOFLEET_HISTOGRAM_LATENCY_HISTOGRAM_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/histogram.pb.h"

namespace iofleet {

using v1::LatencyHistogramProto;

// Bucket layout, shared by the recorder, the wire format and every reader.
struct HistogramLayout {
  static constexpr int kSubBucketBits = 6;                    // 64 buckets per power of two
  static constexpr uint64_t kExactLimit = 128;                // values below get exact buckets
  static constexpr uint32_t kBucketCount = 64 * 58 + 64;      // covers all of uint64

  static uint32_t BucketIndex(uint64_t ns) {
    if (ns < kExactLimit) return static_cast<uint32_t>(ns);
    const int shift = 63 - __builtin_clzll(ns) - kSubBucketBits;  // >= 1
    return (static_cast<uint32_t>(shift) << kSubBucketBits) + static_cast<uint32_t>(ns >> shift);
  }
  // Smallest value that falls in bucket `index`.
  static uint64_t BucketLower(uint32_t index) {
    if (index < kExactLimit) return index;
    const int shift = static_cast<int>(index >> kSubBucketBits) - 1;
    return static_cast<uint64_t>(index - (static_cast<uint32_t>(shift) << kSubBucketBits)) << shift;
  }
  // Largest value that falls in bucket `index`.
  static uint64_t BucketUpper(uint32_t index) {
    if (index < kExactLimit) return index;
    const int shift = static_cast<int>(index >> kSubBucketBits) - 1;
    return BucketLower(index) + ((uint64_t{1} << shift) - 1);
  }
  // The value reported for samples in bucket `index`: its midpoint.
  static uint64_t BucketMidpoint(uint32_t index) {
    return BucketLower(index) + (BucketUpper(index) - BucketLower(index)) / 2;
  }
};

// A plain (single-threaded) histogram value: record, merge, subtract, query, encode.
class LatencyHistogram {
 public:
  LatencyHistogram() = default;

  void Record(uint64_t ns) { RecordN(ns, 1); }
  void RecordN(uint64_t ns, uint64_t n);
  // Adds every sample of `other` (exact).
  void Merge(const LatencyHistogram& other);
  // Adds a histogram in its wire form, bucket by bucket (indexed adds: what a relay does to
  // each of its workers' reports). `proto` must be valid (ValidateHistogramProto); buckets out
  // of range are ignored, never written.
  void MergeProto(const LatencyHistogramProto& proto);

  uint64_t count() const { return count_; }
  uint64_t sum_ns() const { return sum_ns_; }
  double sum_squares_ns2() const { return sum_squares_; }
  // 0 when empty.
  uint64_t min_ns() const { return count_ ? min_ns_ : 0; }
  uint64_t max_ns() const { return count_ ? max_ns_ : 0; }
  double mean_ns() const;
  // Sample standard deviation (n - 1), as fio reports it.
  double stddev_ns() const;
  // The value at `percentile` (0..100]: the midpoint of the bucket holding the sample of rank
  // ceil(p/100 * count), clamped to [min, max] so no percentile exceeds the maximum.
  uint64_t ValueAtPercentile(double percentile) const;
  uint64_t BucketCount(uint32_t index) const {
    return index < counts_.size() ? counts_[index] : 0;
  }

  LatencyHistogramProto ToProto() const;
  // Rejects out-of-range or unordered buckets and counts that do not add up.
  static absl::StatusOr<LatencyHistogram> FromProto(const LatencyHistogramProto& proto);

  // Builds a histogram from raw parts (used by the concurrent recorder's snapshots).
  static LatencyHistogram FromParts(std::vector<uint64_t> counts, uint64_t count, uint64_t sum_ns,
                                    double sum_squares, uint64_t min_ns, uint64_t max_ns);

  // The samples recorded after `earlier` was taken from the same cumulative source:
  // bucket-wise difference; min/max are the exact extremes when they were set in between,
  // else the bounds of the extreme buckets (kept within the cumulative extremes).
  LatencyHistogram Since(const LatencyHistogram& earlier) const;

  friend bool operator==(const LatencyHistogram& a, const LatencyHistogram& b);

 private:
  std::vector<uint64_t> counts_;  // grown on demand up to the highest bucket used
  uint64_t count_ = 0;
  uint64_t sum_ns_ = 0;
  double sum_squares_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
  uint64_t max_ns_ = 0;
};

// A histogram's mean and sample standard deviation (n - 1, as fio) from its sums.
double MeanNs(uint64_t count, uint64_t sum_ns);
double StddevNs(uint64_t count, uint64_t sum_ns, double sum_squares_ns2);

// The values at `percentiles` of a histogram in its wire form, exactly as
// LatencyHistogram::ValueAtPercentile gives them, in one walk over its non-empty buckets (no
// dense copy: reports summarize tens of thousands of these). `proto` must be valid.
std::vector<uint64_t> ValuesAtPercentiles(const LatencyHistogramProto& proto, const std::vector<double>& percentiles);

// Calls fn(index, count) for each non-empty bucket of `proto`, in increasing index order
// (never past the shorter of its two arrays).
template <typename Fn>
void ForEachBucket(const LatencyHistogramProto& proto, Fn&& fn) {
  const int n = std::min(proto.bucket_index_size(), proto.bucket_count_size());
  for (int i = 0; i < n; ++i) fn(proto.bucket_index(i), proto.bucket_count(i));
}

// Whether a histogram from the wire is well formed: as many counts as indexes, indexes in
// range and increasing, counts that add up to its count.
absl::Status ValidateHistogramProto(const LatencyHistogramProto& proto);

// Adds `from` into `into` bucket by bucket, keeping both sparse (for the many per-interval
// histograms the controller holds, where a dense copy each would cost ~30 KiB).
void MergeHistogramProto(const LatencyHistogramProto& from, LatencyHistogramProto* into);

// A histogram with one writer thread and any number of reader threads: the IO thread records
// with relaxed atomic loads and stores (plain moves on x86, no lock prefix, no allocation); a
// reader may take a Snapshot whenever it likes, and once the writer has moved on (the worker's
// counters switch buffers per interval) the collector Takes it whole and empty.
//
// The 30 KiB of buckets are mapped zero pages, committed only where samples land: a job thread
// holds 30 of these (5 directions x 3 latencies x 2 interval buffers) but its latencies fall in
// a few powers of two, so it commits a few pages instead of 900 KiB — which is what lets a
// thousand workers share one host.
class LiveLatencyHistogram {
 public:
  LiveLatencyHistogram();
  ~LiveLatencyHistogram();
  LiveLatencyHistogram(const LiveLatencyHistogram&) = delete;
  LiveLatencyHistogram& operator=(const LiveLatencyHistogram&) = delete;

  // Writer thread only. The bucket is stored last, with release: a reader that sees the
  // sample in its bucket (acquire) also sees it in the sums and extremes.
  void Record(uint64_t ns) {
    Bump(sum_ns_, ns);
    sum_squares_.store(sum_squares_.load(std::memory_order_relaxed) +
                           static_cast<double>(ns) * static_cast<double>(ns),
                       std::memory_order_relaxed);
    if (ns < min_ns_.load(std::memory_order_relaxed)) min_ns_.store(ns, std::memory_order_relaxed);
    if (ns > max_ns_.load(std::memory_order_relaxed)) max_ns_.store(ns, std::memory_order_relaxed);
    std::atomic_ref<uint64_t> bucket(buckets_[HistogramLayout::BucketIndex(ns)]);
    bucket.store(bucket.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Any thread. The count is the sum of the buckets read; the sums and extremes cover at least
  // those samples (maybe one more, whose bucket was not stored yet), and are exact once the
  // writer has stopped.
  LatencyHistogram Snapshot() const;
  // Everything recorded, leaving the histogram empty. Only while no writer records into it
  // (the worker's counters hand a histogram over to the collector before it takes it).
  LatencyHistogram Take();
  // Any thread, any time: commits the pages that hold the buckets of latencies lo_ns..hi_ns
  // (MADV_POPULATE_WRITE: no value changes), so that the first samples there take no page
  // faults: a phase of ten operations is timed, and a fault costs as much as an operation.
  void Prefault(uint64_t lo_ns, uint64_t hi_ns);

 private:
  static void Bump(std::atomic<uint64_t>& cell, uint64_t by) {
    cell.store(cell.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  // kBucketCount counters, only ever accessed atomically (std::atomic_ref): an array of plain
  // words is what an anonymous mapping's zero pages can be without writing every one.
  uint64_t* buckets_;
  std::atomic<uint64_t> sum_ns_{0};
  std::atomic<double> sum_squares_{0};
  std::atomic<uint64_t> min_ns_{UINT64_MAX};
  std::atomic<uint64_t> max_ns_{0};
};


}  // namespace iofleet

#endif  // IOFLEET_HISTOGRAM_LATENCY_HISTOGRAM_H_
