#include "worker/control_threads.h"

#include <sched.h>
#include <unistd.h>

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

void CpuHandOff::Register() {
  CPU_ZERO(&allowed_);
  if (::sched_getaffinity(0, sizeof(allowed_), &allowed_) != 0) return;
  tid_.store(static_cast<int>(::gettid()), std::memory_order_release);
}

void CpuHandOff::SteerHere() {
  const int tid = tid_.load(std::memory_order_acquire);
  const int cpu = ::sched_getcpu();
  if (tid == 0 || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed_)) return;
  cpu_set_t here;
  CPU_ZERO(&here);
  CPU_SET(cpu, &here);
  if (::sched_setaffinity(tid, sizeof(here), &here) == 0) steered_.store(true, std::memory_order_release);
}

void CpuHandOff::Release() {
  if (steered_.exchange(false, std::memory_order_acq_rel)) ::sched_setaffinity(0, sizeof(allowed_), &allowed_);
}

}  // namespace iofleet
