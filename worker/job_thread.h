// One job thread (one of a job's `numjobs`) from start to end: opens its files with its own
// engine instance, waits for the common start instant, runs its passes with up to `iodepth`
// requests in flight, and records every request's lat, slat and clat (as fio defines them)
// into its ThreadStats. What to issue, what writes carry, when, and what to read back come
// from its parts (work_generator, write_buffers, rate_pacer, read_back); engine_queue holds
// its slots.
#ifndef IOFLEET_WORKER_JOB_THREAD_H_
#define IOFLEET_WORKER_JOB_THREAD_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/job.pb.h"
#include "worker/thread_stats.h"

namespace iofleet {

struct JobThreadPlan {
  const v1::JobSpec* job = nullptr;
  std::vector<std::string> paths;  // the files this thread works on (nrfiles)
  uint32_t jobnum = 0;  // index among the job's threads on this worker
  uint32_t rank = 0;    // index among the job's threads on all workers (mdtest's task number)
  uint32_t job_index = 0;     // the job's place in the run (verify headers name it)
  uint32_t worker_index = 0;  // this worker's place in the run
  uint64_t seed = 0;    // random offsets and mixes; distinct per worker and thread
  std::chrono::steady_clock::time_point start;  // the run's common start instant
};

// How a job thread ended.
struct JobThreadOutcome {
  absl::Status status;  // the first IO error (path, offset, op, errno), else OK
  std::chrono::steady_clock::time_point end;
  std::vector<std::string> notes;  // from the engine: features refused, fallbacks taken
  // CPU the thread used from its start to its end (getrusage RUSAGE_THREAD).
  uint64_t cpu_user_ns = 0, cpu_system_ns = 0, context_switches = 0;
  // Metadata tasks: items done, and whether the stonewall time stopped the task.
  uint64_t items = 0;
  bool stonewalled = false;
  // How long after its start instant the thread began (0 if it never did: stopped before).
  int64_t start_late_ns = 0;
};

// Runs until the job's work is done, its runtime has passed, or `stop` becomes true.
JobThreadOutcome RunJobThread(const JobThreadPlan& plan, const std::atomic<bool>& stop,
                              ThreadStats* stats);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_JOB_THREAD_H_
