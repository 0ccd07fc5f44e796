// Counters one IO thread writes and the run's collector reads: per direction the latency
// histograms (fio's lat, slat and clat; ops are lat's count), bytes, errors and the slowest
// requests, per interval. Single writer, relaxed atomics, no locks, no allocation and no waiting
// on the IO path; the collector takes whole intervals (worker/interval_cut.h).
#ifndef IOFLEET_WORKER_THREAD_STATS_H_
#define IOFLEET_WORKER_THREAD_STATS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "histogram/latency_histogram.h"

namespace iofleet {

// Indices into ThreadStats::directions; proto Direction values are these + 1.
// kMetaIndex: metadata operations (mkdir, stat, create...) of an mdtest-style phase.
enum DirectionIndex { kReadIndex = 0, kWriteIndex = 1, kTrimIndex = 2, kSyncIndex = 3, kMetaIndex = 4, kDirectionCount = 5 };

// Which request a Record is about, for the slowest-requests list of its interval (not tracked:
// e.g. an mdtest task's clean-up of leftovers).
struct RequestIdentity {
  uint64_t offset = 0;  // metadata: the item (or tree directory) number
  uint32_t file = 0;    // index into the thread's files; metadata: the task whose item it is
  bool tracked = false;
};

// The slowest requests of one interval of one thread and direction: which file and offset,
// when, how slow.
struct SlowestRequests {
  static constexpr int kSlots = 3;
  struct Slot {
    std::atomic<uint64_t> latency_ns{0}, complete_ns{0}, offset{0}, file{0};
  };
  Slot slots[kSlots];
};

// What one IO thread recorded for one direction during one interval: not cumulative, so an
// interval is whatever the buffer holds when the collector takes it.
struct IntervalBuffer {
  LiveLatencyHistogram latency;             // issue -> completion (fio lat)
  LiveLatencyHistogram submit_latency;      // issue -> submitted (fio slat), queued requests only
  LiveLatencyHistogram completion_latency;  // submitted -> completion (fio clat)
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> errors{0};
  SlowestRequests slowest;
  // fio's clat per IO priority (cmdprio jobs only; made before the threads start): index i is
  // the job's i-th distinct priority (job/io_priority.h).
  std::unique_ptr<LiveLatencyHistogram[]> priority_completion;
};

// Makes the IO thread's "I am recording" store visible before it reads which buffer to record
// into, against the collector's flip (see DirectionCounters). With membarrier(2) the collector
// pays for that (one syscall per cut) and the IO path needs only a compiler barrier; without it
// (an old kernel, a seccomp filter) the IO path takes a full fence.
extern bool g_collector_has_membarrier;
inline void IoPathBarrier() {
  if (g_collector_has_membarrier) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// One IO thread's counters for one direction, double-buffered: the thread records into
// buffers[epoch % 2]; the collector cuts an interval by advancing `epoch` and, once the Record
// that may have been under way has ended (`sequence` odd while one is), takes the other buffer
// whole (worker/interval_cut.h). The cut costs the same whatever the IO rate, the IO thread never
// waits and takes no lock, and every request lands in exactly one interval, with its bytes.
struct DirectionCounters {
  // IO thread only. `queued`: the request went through a submission queue, so it has a slat.
  // `priority`: the request's index among the job's priorities, or -1.
  void Record(uint64_t issue_ns, uint64_t submit_ns, uint64_t complete_ns, bool queued, uint64_t done_bytes, bool failed,
              const RequestIdentity& request = {}, int priority = -1) {
    uint64_t s;
    IntervalBuffer& b = Begin(&s);
    b.latency.Record(complete_ns - issue_ns);
    b.completion_latency.Record(complete_ns - submit_ns);
    if (priority >= 0 && static_cast<uint32_t>(priority) < priorities) b.priority_completion[priority].Record(complete_ns - submit_ns);
    if (queued) b.submit_latency.Record(submit_ns - issue_ns);
    Bump(b.bytes, done_bytes);
    if (failed) Bump(b.errors, 1);
    if (request.tracked && (slow_epoch_ != epoch_seen_ || complete_ns - issue_ns > slow_floor_)) {
      NoteSlow(b, complete_ns - issue_ns, complete_ns, request);
    }
    End(s);
  }
  // Any thread: commits the histogram pages of latencies lo_ns..hi_ns in both interval buffers
  // (LiveLatencyHistogram::Prefault), for a thread whose first operations are timed alone.
  void Prefault(uint64_t lo_ns, uint64_t hi_ns) {
    for (IntervalBuffer& b : buffers) {
      b.latency.Prefault(lo_ns, hi_ns);
      b.completion_latency.Prefault(lo_ns, hi_ns);
    }
  }
  // IO thread only: a failure found after its request was recorded (a verify mismatch).
  void AddError() {
    uint64_t s;
    Bump(Begin(&s).errors, 1);
    End(s);
  }

  // Odd while a Record is under way (the collector waits that one out after a flip).
  std::atomic<uint64_t> sequence{0};
  // Intervals cut so far; written by the collector only.
  std::atomic<uint64_t> epoch{0};
  IntervalBuffer buffers[2];
  // How many priorities have their own completion latency (set before the threads start).
  uint32_t priorities = 0;
  void KeepPriorities(uint32_t n) {
    priorities = n;
    for (IntervalBuffer& b : buffers) b.priority_completion = n ? std::make_unique<LiveLatencyHistogram[]>(n) : nullptr;
  }

 private:
  static void Bump(std::atomic<uint64_t>& cell, uint64_t n) { cell.store(cell.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  IntervalBuffer& Begin(uint64_t* s) {
    *s = sequence.load(std::memory_order_relaxed);
    sequence.store(*s + 1, std::memory_order_release);
    IoPathBarrier();
    epoch_seen_ = epoch.load(std::memory_order_relaxed);
    return buffers[epoch_seen_ & 1];
  }
  void End(uint64_t s) { sequence.store(s + 2, std::memory_order_release); }
  // Keeps the request if it is among the interval's kSlots slowest (IO thread, in Record).
  void NoteSlow(IntervalBuffer& b, uint64_t latency_ns, uint64_t complete_ns, const RequestIdentity& request) {
    if (slow_epoch_ != epoch_seen_) {
      // A new interval: the collector emptied this buffer's list when it took the buffer.
      slow_epoch_ = epoch_seen_;
      slow_floor_ = 0;
    }
    auto& slots = b.slowest.slots;
    int fastest = 0;
    for (int i = 1; i < SlowestRequests::kSlots; ++i) {
      if (slots[i].latency_ns.load(std::memory_order_relaxed) < slots[fastest].latency_ns.load(std::memory_order_relaxed)) fastest = i;
    }
    auto& slot = slots[fastest];
    slot.latency_ns.store(latency_ns, std::memory_order_relaxed);
    slot.complete_ns.store(complete_ns, std::memory_order_relaxed);
    slot.offset.store(request.offset, std::memory_order_relaxed);
    slot.file.store(request.file, std::memory_order_relaxed);
    slow_floor_ = latency_ns;
    for (const auto& other : slots) slow_floor_ = std::min(slow_floor_, other.latency_ns.load(std::memory_order_relaxed));
  }
  // IO thread only: the epoch of the Record under way, the interval whose list is being filled
  // and the smallest latency it holds (a request must beat it to get in: one comparison).
  uint64_t epoch_seen_ = 0;
  uint64_t slow_epoch_ = UINT64_MAX;
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
  ThreadStats() = default;
  // A job whose IOs carry `priorities` different priorities (fio's cmdprio): their completion
  // latencies are kept apart too (reads, writes and trims).
  explicit ThreadStats(uint32_t priorities) {
    for (int d = kReadIndex; d <= kTrimIndex; ++d) directions[d].KeepPriorities(priorities);
  }
  DirectionCounters directions[kDirectionCount];
  std::atomic<uint64_t> depth[kDepthBuckets] = {};
  std::atomic<uint64_t> submit[kDepthBuckets] = {};
  std::atomic<uint64_t> complete[kDepthBuckets] = {};

  // IO thread only.
  static void Add(std::atomic<uint64_t>& cell, uint64_t n) { cell.store(cell.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_THREAD_STATS_H_
