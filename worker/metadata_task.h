// One task (an MPI rank in mdtest terms) of an mdtest-style metadata phase: waits for the
// common start instant, performs the phase's operation on each of its items, timing every
// operation into ThreadStats' metadata direction, and honours the stonewall (-W) time.
#ifndef IOFLEET_WORKER_METADATA_TASK_H_
#define IOFLEET_WORKER_METADATA_TASK_H_

#include <atomic>

#include "worker/job_thread.h"
#include "worker/thread_stats.h"

namespace iofleet {

// `plan.rank` is the task's number among all tasks of the cluster.
JobThreadOutcome RunMetadataTask(const JobThreadPlan& plan, const StopSignal& stop, ThreadStats* stats);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_METADATA_TASK_H_
