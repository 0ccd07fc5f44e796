// Counters one IO thread writes and the run's collector reads: per direction the latency
// histograms (fio's lat, slat and clat; ops are lat's count), bytes and errors. Single writer,
// relaxed atomics, no locks and no allocation on the IO path; the collector turns cumulative
// values into intervals.
#ifndef IOFLEET_WORKER_THREAD_STATS_H_
#define IOFLEET_WORKER_THREAD_STATS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "histogram/latency_histogram.h"

namespace iofleet {

// Indices into ThreadStats::directions; proto Direction values are these + 1.
// kMetaIndex: metadata operations (mkdir, stat, create...) of an mdtest-style phase.
enum DirectionIndex { kReadIndex = 0, kWriteIndex = 1, kTrimIndex = 2, kSyncIndex = 3, kMetaIndex = 4, kDirectionCount = 5 };

// Which request a Record is about, for the slowest-requests list of its interval (interval
// counted from the run's start instant; < 0: not tracked, e.g. metadata operations).
struct RequestIdentity {
  uint64_t offset = 0;  // metadata: the item (or tree directory) number
  uint32_t file = 0;    // index into the thread's files; metadata: the task whose item it is
  int64_t interval = -1;
};

// Which interval a completion falls in, counted from the run's start instant as the collector
// counts them (steady-clock ns). IO thread only; one comparison per request.
class IntervalClock {
 public:
  IntervalClock() = default;
  IntervalClock(uint64_t start_ns, uint64_t interval_ns) : start_ns_(start_ns), interval_ns_(interval_ns) {}
  // -1 when no interval length is known (nothing is tracked).
  int64_t IntervalOf(uint64_t now_ns) {
    if (interval_ns_ == 0) return -1;
    if (now_ns >= next_boundary_ns_) {
      current_ = now_ns > start_ns_ ? static_cast<int64_t>((now_ns - start_ns_) / interval_ns_) : 0;
      next_boundary_ns_ = start_ns_ + (static_cast<uint64_t>(current_) + 1) * interval_ns_;
    }
    return current_;
  }

 private:
  uint64_t start_ns_ = 0, interval_ns_ = 0, next_boundary_ns_ = 0;
  int64_t current_ = 0;
};

// The slowest requests of one interval of one thread and direction: which file and offset,
// when, how slow. The IO thread fills them inside the seqlock window; the collector copies
// them with the histograms. Two of them, by interval parity, so the thread can fill the next
// interval's while the collector reads the last one's.
struct SlowestRequests {
  static constexpr int kSlots = 3;
  struct Slot {
    std::atomic<uint64_t> latency_ns{0}, complete_ns{0}, offset{0}, file{0};
  };
  std::atomic<int64_t> interval{-1};
  Slot slots[kSlots];
};

struct DirectionCounters {
  LiveLatencyHistogram latency;             // issue -> completion (fio lat)
  LiveLatencyHistogram submit_latency;      // issue -> submitted (fio slat), queued requests only
  LiveLatencyHistogram completion_latency;  // submitted -> completion (fio clat)
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> errors{0};
  // A seqlock over one Record: odd while a request's latencies and bytes are being added, so
  // the collector cuts an interval where every request is whole — its op and its bytes in the
  // same interval (see WorkerRun::CutInterval). Without it an interval could show a request's
  // bytes without the request (ops 0, bytes > 0) when the thread was preempted mid-Record.
  std::atomic<uint64_t> sequence{0};
  SlowestRequests slowest[2];  // [interval % 2]

  // IO thread only. `queued`: the request went through a submission queue, so it has a slat.
  void Record(uint64_t issue_ns, uint64_t submit_ns, uint64_t complete_ns, bool queued, uint64_t done_bytes, bool failed,
              const RequestIdentity& request = {}) {
    const uint64_t s = sequence.load(std::memory_order_relaxed);
    sequence.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    latency.Record(complete_ns - issue_ns);
    completion_latency.Record(complete_ns - submit_ns);
    if (queued) submit_latency.Record(submit_ns - issue_ns);
    bytes.store(bytes.load(std::memory_order_relaxed) + done_bytes, std::memory_order_relaxed);
    if (failed) errors.store(errors.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (request.interval >= 0 && (request.interval != slow_interval_ || complete_ns - issue_ns > slow_floor_)) {
      NoteSlow(complete_ns - issue_ns, complete_ns, request);
    }
    sequence.store(s + 2, std::memory_order_release);
  }

 private:
  // Keeps the request if it is among the interval's kSlots slowest (IO thread, in Record).
  void NoteSlow(uint64_t latency_ns, uint64_t complete_ns, const RequestIdentity& request) {
    SlowestRequests& list = slowest[request.interval & 1];
    if (request.interval != slow_interval_) {
      // A new interval: its list starts empty (the collector has read what it held, two
      // intervals ago, or missed it).
      for (auto& slot : list.slots) slot.latency_ns.store(0, std::memory_order_relaxed);
      list.interval.store(request.interval, std::memory_order_relaxed);
      slow_interval_ = request.interval;
    }
    int fastest = 0;
    for (int i = 1; i < SlowestRequests::kSlots; ++i) {
      if (list.slots[i].latency_ns.load(std::memory_order_relaxed) < list.slots[fastest].latency_ns.load(std::memory_order_relaxed)) fastest = i;
    }
    auto& slot = list.slots[fastest];
    slot.latency_ns.store(latency_ns, std::memory_order_relaxed);
    slot.complete_ns.store(complete_ns, std::memory_order_relaxed);
    slot.offset.store(request.offset, std::memory_order_relaxed);
    slot.file.store(request.file, std::memory_order_relaxed);
    slow_floor_ = latency_ns;
    for (const auto& other : list.slots) slow_floor_ = std::min(slow_floor_, other.latency_ns.load(std::memory_order_relaxed));
  }
  // IO thread only: the interval being filled and the smallest latency its list holds (a
  // request must beat it to get in: one comparison per request).
  int64_t slow_interval_ = -1;
  uint64_t slow_floor_ = 0;
};

// fio's "IO depths" (in flight when a request is issued: 1, 2, 4, 8, 16, 32, >=64) and
// "submit"/"complete" (requests per submission or reap: 0, 4, 8, 16, 32, 64, >=64).
inline constexpr int kDepthBuckets = 7;
// fio's io_u_mark_depth: [1,2) [2,4) [4,8) [8,16) [16,32) [32,64) [64,...).
inline int DepthBucket(uint32_t depth) {
  int bucket = 0;
  while (bucket < kDepthBuckets - 1 && depth >= (2u << bucket)) ++bucket;
  return bucket;
}
// fio's io_u_mark_submit/complete: 0, 1-4, 5-8, 9-16, 17-32, 33-64, more.
inline int BatchBucket(uint32_t n) {
  if (n == 0) return 0;
  int bucket = 1;
  for (uint32_t limit = 4; bucket < kDepthBuckets - 1 && n > limit; limit <<= 1) ++bucket;
  return bucket;
}

struct ThreadStats {
  DirectionCounters directions[kDirectionCount];
  std::atomic<uint64_t> depth[kDepthBuckets] = {};
  std::atomic<uint64_t> submit[kDepthBuckets] = {};
  std::atomic<uint64_t> complete[kDepthBuckets] = {};

  // IO thread only.
  static void Add(std::atomic<uint64_t>& cell, uint64_t n) { cell.store(cell.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_THREAD_STATS_H_
