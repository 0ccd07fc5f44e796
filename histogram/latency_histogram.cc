#include "histogram/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <new>

#include <sys/mman.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace iofleet {

void LatencyHistogram::RecordN(uint64_t ns, uint64_t n) {
  if (n == 0) return;
  const uint32_t index = HistogramLayout::BucketIndex(ns);
  if (index >= counts_.size()) counts_.resize(index + 1, 0);
  counts_[index] += n;
  count_ += n;
  sum_ns_ += ns * n;
  sum_squares_ += static_cast<double>(ns) * static_cast<double>(ns) * static_cast<double>(n);
  min_ns_ = std::min(min_ns_, ns);
  max_ns_ = std::max(max_ns_, ns);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  sum_squares_ += other.sum_squares_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::MergeProto(const LatencyHistogramProto& proto) {
  if (proto.count() == 0) return;
  const int n = std::min(proto.bucket_index_size(), proto.bucket_count_size());
  // Raw arrays: protobuf's element accessors are not inlined here (its RepeatedField
  // instantiations live in libprotobuf), and this loop is most of what a relay does per report.
  const uint32_t* indexes = proto.bucket_index().data();
  const uint64_t* counts = proto.bucket_count().data();
  if (n > 0) {
    const uint32_t highest = std::min(indexes[n - 1], HistogramLayout::kBucketCount - 1);  // indexes increase
    if (highest >= counts_.size()) counts_.resize(highest + 1, 0);
  }
  uint64_t* into = counts_.data();
  const size_t size = counts_.size();
  for (int i = 0; i < n; ++i) {
    const uint32_t index = indexes[i];
    if (index < size) into[index] += counts[i];
  }
  count_ += proto.count();
  sum_ns_ += proto.sum_ns();
  sum_squares_ += proto.sum_squares_ns2();
  min_ns_ = std::min(min_ns_, proto.min_ns());
  max_ns_ = std::max(max_ns_, proto.max_ns());
}

double MeanNs(uint64_t count, uint64_t sum_ns) { return count ? static_cast<double>(sum_ns) / static_cast<double>(count) : 0.0; }

double StddevNs(uint64_t count, uint64_t sum_ns, double sum_squares_ns2) {
  if (count < 2) return 0.0;
  const double n = static_cast<double>(count);
  const double mean = MeanNs(count, sum_ns);
  const double variance = (sum_squares_ns2 - n * mean * mean) / (n - 1);
  return variance > 0 ? std::sqrt(variance) : 0.0;
}

double LatencyHistogram::mean_ns() const { return MeanNs(count_, sum_ns_); }

double LatencyHistogram::stddev_ns() const { return StddevNs(count_, sum_ns_, sum_squares_); }

namespace {

// The rank (1..count) of the sample at `percentile`: ceil(p/100 * count).
uint64_t PercentileRank(double percentile, uint64_t count) {
  const double p = std::clamp(percentile, 0.0, 100.0);
  return std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count))), 1, count);
}

// The value reported for the sample of `rank` that lies in bucket `index`: the extreme ranks
// are the extreme samples, known exactly; others the bucket's midpoint within [min, max].
uint64_t RankValue(uint64_t rank, uint64_t count, uint32_t index, uint64_t min_ns, uint64_t max_ns) {
  if (rank == 1) return min_ns;
  if (rank == count) return max_ns;
  return std::clamp(HistogramLayout::BucketMidpoint(index), min_ns, max_ns);
}

}  // namespace

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  const uint64_t rank = PercentileRank(percentile, count_);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return RankValue(rank, count_, i, min_ns_, max_ns_);
  }
  return max_ns_;
}

std::vector<uint64_t> ValuesAtPercentiles(const LatencyHistogramProto& proto, const std::vector<double>& percentiles) {
  std::vector<uint64_t> values(percentiles.size(), proto.count() ? proto.max_ns() : 0);
  if (proto.count() == 0) return values;
  // Ranks in increasing order, so that one walk over the buckets finds them all.
  std::vector<std::pair<uint64_t, size_t>> ranks;
  for (size_t i = 0; i < percentiles.size(); ++i) ranks.emplace_back(PercentileRank(percentiles[i], proto.count()), i);
  std::sort(ranks.begin(), ranks.end());
  size_t next = 0;
  uint64_t seen = 0;
  ForEachBucket(proto, [&](uint32_t index, uint64_t count) {
    seen += count;
    for (; next < ranks.size() && seen >= ranks[next].first; ++next) {
      values[ranks[next].second] = RankValue(ranks[next].first, proto.count(), index, proto.min_ns(), proto.max_ns());
    }
  });
  return values;
}

LatencyHistogramProto LatencyHistogram::ToProto() const {
  LatencyHistogramProto proto;
  for (uint32_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    proto.add_bucket_index(i);
    proto.add_bucket_count(counts_[i]);
  }
  proto.set_count(count_);
  proto.set_sum_ns(sum_ns_);
  proto.set_sum_squares_ns2(sum_squares_);
  proto.set_min_ns(min_ns());
  proto.set_max_ns(max_ns());
  return proto;
}

absl::Status ValidateHistogramProto(const LatencyHistogramProto& proto) {
  if (proto.bucket_index_size() != proto.bucket_count_size()) {
    return absl::InvalidArgumentError(absl::StrCat("histogram has ", proto.bucket_index_size(), " bucket indexes but ",
                                                   proto.bucket_count_size(), " bucket counts"));
  }
  uint64_t total = 0;
  int64_t previous = -1;
  const uint32_t* indexes = proto.bucket_index().data();  // (raw arrays: see MergeProto)
  const uint64_t* counts = proto.bucket_count().data();
  for (int i = 0; i < proto.bucket_index_size(); ++i) {
    const uint32_t index = indexes[i];
    if (index >= HistogramLayout::kBucketCount || static_cast<int64_t>(index) <= previous) {
      return absl::InvalidArgumentError(absl::StrCat("histogram bucket index ", index, " is out of range or out of order"));
    }
    previous = index;
    if (__builtin_add_overflow(total, counts[i], &total)) {
      return absl::InvalidArgumentError("histogram bucket counts overflow 64 bits");
    }
  }
  if (total != proto.count()) {
    return absl::InvalidArgumentError(absl::StrCat("histogram buckets add up to ", total,
                                                   " samples but its count says ", proto.count()));
  }
  return absl::OkStatus();
}

absl::StatusOr<LatencyHistogram> LatencyHistogram::FromProto(const LatencyHistogramProto& proto) {
  if (absl::Status valid = ValidateHistogramProto(proto); !valid.ok()) return valid;
  LatencyHistogram h;
  if (proto.bucket_index_size() > 0) h.counts_.resize(proto.bucket_index(proto.bucket_index_size() - 1) + 1, 0);
  for (int i = 0; i < proto.bucket_index_size(); ++i) h.counts_[proto.bucket_index(i)] = proto.bucket_count(i);
  const uint64_t total = proto.count();
  h.count_ = total;
  h.sum_ns_ = proto.sum_ns();
  h.sum_squares_ = proto.sum_squares_ns2();
  if (total > 0) {
    h.min_ns_ = proto.min_ns();
    h.max_ns_ = proto.max_ns();
  }
  return h;
}

LatencyHistogram LatencyHistogram::FromParts(std::vector<uint64_t> counts, uint64_t count,
                                             uint64_t sum_ns, double sum_squares, uint64_t min_ns,
                                             uint64_t max_ns) {
  LatencyHistogram h;
  h.counts_ = std::move(counts);
  h.count_ = count;
  h.sum_ns_ = sum_ns;
  h.sum_squares_ = sum_squares;
  h.min_ns_ = count ? min_ns : UINT64_MAX;
  h.max_ns_ = count ? max_ns : 0;
  return h;
}

LatencyHistogram LatencyHistogram::Since(const LatencyHistogram& earlier) const {
  LatencyHistogram delta;
  delta.counts_.assign(counts_.size(), 0);
  uint32_t lowest = UINT32_MAX, highest = 0;
  for (uint32_t i = 0; i < counts_.size(); ++i) {
    const uint64_t before = earlier.BucketCount(i);
    const uint64_t now = counts_[i];
    delta.counts_[i] = now > before ? now - before : 0;
    if (delta.counts_[i] == 0) continue;
    delta.count_ += delta.counts_[i];
    lowest = std::min(lowest, i);
    highest = i;
  }
  if (delta.count_ == 0) {
    delta.counts_.clear();
    return delta;
  }
  delta.sum_ns_ = sum_ns_ >= earlier.sum_ns_ ? sum_ns_ - earlier.sum_ns_ : 0;
  delta.sum_squares_ = std::max(0.0, sum_squares_ - earlier.sum_squares_);
  // Every sample of the delta lies within the cumulative extremes, and a cumulative extreme
  // that moved since `earlier` was recorded in the delta, so these bounds are exact then.
  delta.min_ns_ = std::max(HistogramLayout::BucketLower(lowest), min_ns_);
  delta.max_ns_ = std::min(HistogramLayout::BucketUpper(highest), max_ns_);
  if (delta.min_ns_ > delta.max_ns_) delta.min_ns_ = delta.max_ns_;
  return delta;
}

bool operator==(const LatencyHistogram& a, const LatencyHistogram& b) {
  if (a.count_ != b.count_ || a.sum_ns_ != b.sum_ns_ || a.min_ns() != b.min_ns() ||
      a.max_ns() != b.max_ns()) {
    return false;
  }
  const size_t n = std::max(a.counts_.size(), b.counts_.size());
  for (uint32_t i = 0; i < n; ++i) {
    if (a.BucketCount(i) != b.BucketCount(i)) return false;
  }
  // Sums of squares are doubles added in different orders: equal up to rounding.
  return std::abs(a.sum_squares_ - b.sum_squares_) <= 1e-9 * std::max(1.0, std::abs(a.sum_squares_));
}

namespace {

// Adds `from`'s buckets into `into`'s in place, both sorted by index: the buckets `into` lacks
// are inserted by merging from the back into arrays grown to the union's size (no copy of
// either aside). Raw arrays: protobuf's element accessors are not inlined here (its
// RepeatedField instantiations live in libprotobuf).
void MergeBuckets(const LatencyHistogramProto& from, int from_size, int into_size, LatencyHistogramProto* into) {
  const uint32_t* from_index = from.bucket_index().data();
  const uint64_t* from_count = from.bucket_count().data();
  // How many of from's buckets into lacks (binary searches: a total of hundreds of buckets
  // that has them all is added to in place, in O(k log n)).
  int added = 0;
  {
    const uint32_t* into_index = into->bucket_index().data();
    const uint32_t* into_end = into_index + into_size;
    const uint32_t* at = into_index;
    for (int a = 0; a < from_size; ++a) {
      at = std::lower_bound(at, into_end, from_index[a]);
      added += at == into_end || *at != from_index[a];
    }
    if (added == 0) {
      uint64_t* count = into->mutable_bucket_count()->mutable_data();
      at = into_index;
      for (int a = 0; a < from_size; ++a) {
        at = std::lower_bound(at, into_end, from_index[a]);
        count[at - into_index] += from_count[a];
      }
      return;
    }
  }
  const int size = into_size + added;
  into->mutable_bucket_index()->Resize(size, 0);
  into->mutable_bucket_count()->Resize(size, 0);
  uint32_t* index = into->mutable_bucket_index()->mutable_data();
  uint64_t* count = into->mutable_bucket_count()->mutable_data();
  int a = from_size - 1, b = into_size - 1;
  for (int out = size - 1; a >= 0; --out) {
    if (b >= 0 && index[b] > from_index[a]) {
      index[out] = index[b];
      count[out] = count[b];
      --b;
    } else if (b >= 0 && index[b] == from_index[a]) {
      index[out] = index[b];
      count[out] = count[b] + from_count[a];
      --a, --b;
    } else {
      index[out] = from_index[a];
      count[out] = from_count[a];
      --a;
    }
  }
  // (What is left of into's, below every one of from's, is where it was.)
}

}  // namespace

void MergeHistogramProto(const LatencyHistogramProto& from, LatencyHistogramProto* into) {
  if (from.count() == 0) return;
  const bool into_empty = into->count() == 0;
  // (Arrays of unequal length are cut to the shorter: merging never reads past one; the
  // controller validates what comes from the wire before it merges.)
  const int from_size = std::min(from.bucket_index_size(), from.bucket_count_size());
  const int into_size = std::min(into->bucket_index_size(), into->bucket_count_size());
  // A controller merges thousands of these a second: a report of a few buckets into a total of
  // hundreds that has them all already (the cluster's interval: each is found and added in
  // place), or into a worker's own total that lacks some (MergeBuckets inserts them).
  if (into->bucket_index_size() != into_size) into->mutable_bucket_index()->Truncate(into_size);
  if (into->bucket_count_size() != into_size) into->mutable_bucket_count()->Truncate(into_size);
  MergeBuckets(from, from_size, into_size, into);
  into->set_count(into->count() + from.count());
  into->set_sum_ns(into->sum_ns() + from.sum_ns());
  into->set_sum_squares_ns2(into->sum_squares_ns2() + from.sum_squares_ns2());
  into->set_min_ns(into_empty ? from.min_ns() : std::min(into->min_ns(), from.min_ns()));
  into->set_max_ns(std::max(into->max_ns(), from.max_ns()));
}

namespace {
constexpr size_t kLiveBucketBytes = HistogramLayout::kBucketCount * sizeof(uint64_t);
}  // namespace

LiveLatencyHistogram::LiveLatencyHistogram() {
  void* pages = mmap(nullptr, kLiveBucketBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  // Without address space there is nothing sensible to record into; as with operator new.
  if (pages == MAP_FAILED) throw std::bad_alloc();
  buckets_ = static_cast<uint64_t*>(pages);
}

LiveLatencyHistogram::~LiveLatencyHistogram() { munmap(buckets_, kLiveBucketBytes); }

void LiveLatencyHistogram::Prefault(uint64_t lo_ns, uint64_t hi_ns) {
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older kernels refuse it (EINVAL): no harm
#endif
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = reinterpret_cast<uintptr_t>(&buckets_[HistogramLayout::BucketIndex(lo_ns)]) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(&buckets_[HistogramLayout::BucketIndex(std::max(lo_ns, hi_ns))]) + sizeof(uint64_t);
  (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
}

LatencyHistogram LiveLatencyHistogram::Snapshot() const {
  // Buckets first (acquire), then the sums and extremes: every sample seen in a bucket is
  // then also in them (the writer stores the bucket last, with release).
  std::vector<uint64_t> counts(HistogramLayout::kBucketCount);
  uint64_t count = 0;
  uint32_t used = 0;
  for (uint32_t i = 0; i < HistogramLayout::kBucketCount; ++i) {
    counts[i] = std::atomic_ref<uint64_t>(buckets_[i]).load(std::memory_order_acquire);
    count += counts[i];
    if (counts[i]) used = i + 1;
  }
  counts.resize(used);
  return LatencyHistogram::FromParts(std::move(counts), count, sum_ns_.load(std::memory_order_relaxed),
                                     sum_squares_.load(std::memory_order_relaxed), min_ns_.load(std::memory_order_relaxed),
                                     max_ns_.load(std::memory_order_relaxed));
}

LatencyHistogram LiveLatencyHistogram::Take() {
  std::vector<uint64_t> counts;
  uint64_t count = 0;
  // With the writer gone the extremes are exact: only the buckets between theirs can hold
  // samples (an empty histogram has min > max and scans nothing). A worker takes tens of these
  // a second, most of them empty or narrow.
  const uint64_t min_ns = min_ns_.load(std::memory_order_relaxed), max_ns = max_ns_.load(std::memory_order_relaxed);
  const uint32_t first = min_ns <= max_ns ? HistogramLayout::BucketIndex(min_ns) : HistogramLayout::kBucketCount;
  const uint32_t last = min_ns <= max_ns ? HistogramLayout::BucketIndex(max_ns) : 0;
  for (uint32_t i = first; i <= last && i < HistogramLayout::kBucketCount; ++i) {
    std::atomic_ref<uint64_t> bucket(buckets_[i]);
    const uint64_t n = bucket.load(std::memory_order_acquire);
    if (n == 0) continue;  // untouched pages stay uncommitted
    if (counts.empty()) counts.reserve(last + 1);
    counts.resize(i + 1, 0);
    counts[i] = n;
    count += n;
    bucket.store(0, std::memory_order_relaxed);
  }
  LatencyHistogram taken = LatencyHistogram::FromParts(std::move(counts), count, sum_ns_.load(std::memory_order_relaxed),
                                                       sum_squares_.load(std::memory_order_relaxed), min_ns_.load(std::memory_order_relaxed),
                                                       max_ns_.load(std::memory_order_relaxed));
  sum_ns_.store(0, std::memory_order_relaxed);
  sum_squares_.store(0, std::memory_order_relaxed);
  min_ns_.store(UINT64_MAX, std::memory_order_relaxed);
  max_ns_.store(0, std::memory_order_relaxed);
  return taken;
}

}  // namespace iofleet
