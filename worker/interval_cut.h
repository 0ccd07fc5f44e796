// The collector's side of the IO threads' double-buffered counters (worker/thread_stats.h):
// closing an interval on many counters at once and taking what each recorded in it.
#ifndef IOFLEET_WORKER_INTERVAL_CUT_H_
#define IOFLEET_WORKER_INTERVAL_CUT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "histogram/latency_histogram.h"
#include "worker/thread_stats.h"

namespace iofleet {

struct SlowSample {
  uint64_t latency_ns, complete_ns, offset, file;
};

// What one counter (one thread, one direction) recorded during the interval just closed.
struct DirectionCut {
  LatencyHistogram latency, submit, completion;
  std::vector<LatencyHistogram> priority_completion;  // per job priority (cmdprio jobs)
  uint64_t bytes = 0, errors = 0;
  std::vector<SlowSample> slowest;
};

// Sets up the collector's cheap side of the flip (membarrier registration). Call once per
// process before any IO thread records; later calls do nothing.
void PrepareIntervalCuts();

// Closes the current interval of every counter and returns what each recorded in it, in
// order. Collector thread only (one per set of counters). Its cost does not depend on the IO
// rate: one flip per counter, one barrier for all, then a wait for at most the one Record each
// IO thread may be in the middle of, then a copy of each buffer.
std::vector<DirectionCut> CutIntervals(absl::Span<DirectionCounters* const> counters);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_INTERVAL_CUT_H_
