// What the job-thread tests share: a thread's recorded totals and a scratch path.
#ifndef IOFLEET_WORKER_JOB_THREAD_TEST_UTIL_H_
#define IOFLEET_WORKER_JOB_THREAD_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "worker/thread_stats.h"

namespace iofleet {

// What a thread recorded for one direction, read once it has ended (both interval buffers;
// nothing is cut, so it can be read any number of times).
struct Totals {
  uint64_t ops = 0, completions = 0, submits = 0, bytes = 0, errors = 0;
};
inline Totals Of(const DirectionCounters& c) {
  Totals t;
  for (const IntervalBuffer& b : c.buffers) {
    t.ops += b.latency.Snapshot().count();
    t.completions += b.completion_latency.Snapshot().count();
    t.submits += b.submit_latency.Snapshot().count();
    t.bytes += b.bytes.load();
    t.errors += b.errors.load();
  }
  return t;
}

inline std::string TempFile(const std::string& name) { return std::string(std::getenv("TEST_TMPDIR")) + "/" + name; }

}  // namespace iofleet

#endif  // IOFLEET_WORKER_JOB_THREAD_TEST_UTIL_H_
