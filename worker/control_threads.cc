#include "worker/control_threads.h"

#include <sched.h>

#include <atomic>

namespace iofleet {
namespace {

// Set once, before the threads that read it exist.
std::atomic<bool> control_threads_batch{false};

}  // namespace

bool ScheduleControlThreadsAsBatch() {
  if (::sched_getscheduler(0) != SCHED_OTHER) return false;
  const sched_param none{};
  if (::sched_setscheduler(0, SCHED_BATCH, &none) != 0) return false;  // (the calling thread: Linux's)
  control_threads_batch = true;
  return true;
}

void ScheduleThisThreadForWork() {
  if (!control_threads_batch || ::sched_getscheduler(0) != SCHED_BATCH) return;
  const sched_param none{};
  ::sched_setscheduler(0, SCHED_OTHER, &none);
}

}  // namespace iofleet
