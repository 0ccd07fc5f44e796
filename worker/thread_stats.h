// Counters one IO thread writes and the run's collector reads: per direction the latency
// histograms (fio's lat, slat and clat; ops are lat's count), bytes and errors. Single writer,
// relaxed atomics, no locks and no allocation on the IO path; the collector turns cumulative
// values into intervals.
#ifndef IOFLEET_WORKER_THREAD_STATS_H_
#define IOFLEET_WORKER_THREAD_STATS_H_

#include <atomic>
#include <cstdint>

#include "histogram/latency_histogram.h"

namespace iofleet {

// Indices into ThreadStats::directions; proto Direction values are these + 1.
enum DirectionIndex { kReadIndex = 0, kWriteIndex = 1, kTrimIndex = 2, kSyncIndex = 3, kDirectionCount = 4 };

struct DirectionCounters {
  LiveLatencyHistogram latency;             // issue -> completion (fio lat)
  LiveLatencyHistogram submit_latency;      // issue -> submitted (fio slat), queued requests only
  LiveLatencyHistogram completion_latency;  // submitted -> completion (fio clat)
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> errors{0};

  // IO thread only. `queued`: the request went through a submission queue, so it has a slat.
  void Record(uint64_t issue_ns, uint64_t submit_ns, uint64_t complete_ns, bool queued, uint64_t done_bytes, bool failed) {
    latency.Record(complete_ns - issue_ns);
    completion_latency.Record(complete_ns - submit_ns);
    if (queued) submit_latency.Record(submit_ns - issue_ns);
    bytes.store(bytes.load(std::memory_order_relaxed) + done_bytes, std::memory_order_relaxed);
    if (failed) errors.store(errors.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

struct ThreadStats {
  DirectionCounters directions[kDirectionCount];
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_THREAD_STATS_H_
