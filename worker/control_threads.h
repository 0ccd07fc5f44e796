// Which of a worker's threads may preempt the others: the control threads (gRPC's, the
// sessions', the lease watchdog, the metrics server) run SCHED_BATCH, the threads that do or pace
// the measured work do not.
#ifndef IOFLEET_WORKER_CONTROL_THREADS_H_
#define IOFLEET_WORKER_CONTROL_THREADS_H_

#include <sched.h>

#include <atomic>

namespace iofleet {

// The worker's control threads (gRPC's, the sessions', the lease watchdog, the metrics server)
// run SCHED_BATCH: woken by a message, such a thread takes a CPU that is free, or the running
// thread's at its next tick, instead of preempting it there and then. A controller's probe or
// window update then does not interrupt an IO thread in the middle of a request on the worker's
// host; and where controller and workers share a host (local workers, bench/scale_bench.sh), a
// write the controller makes does not hand its CPU over to the worker it wakes (1,024 workers
// on 2 cores, bench/scale_bench.sh: the controller's CPU 11.0-11.7% -> 9.4-9.6% of a core over
// the whole command, three interleaved pairs). The worker's
// main calls this before any thread starts: threads inherit their creator's policy. A process
// started under another policy than SCHED_OTHER (chrt --fifo, --idle) is left as it is. Whether
// it switched.
bool ScheduleControlThreadsAsBatch();

// Called by a thread whose timing is measured or paces the measurement (IO threads, mdtest
// tasks, the interval collector; verifiers inherit it from their IO thread): SCHED_OTHER again
// when ScheduleControlThreadsAsBatch switched the process; nothing otherwise.
void ScheduleThisThreadForWork();

// A thread that is woken by threads that are about to stop (the interval collector, woken by a
// job's last thread to close the job) runs on the CPU the waker leaves: the waker calls
// SteerHere before it wakes it, the woken thread Release once it runs. Left to the scheduler,
// such a thread was woken on the CPU of a thread still in its timed work and took it there and
// then (mdtest with a worker per task on one host, a 2-vCPU VM: one worker's last task ending the
// tree removal put its collector on the other worker's task, still removing). Does nothing
// before the thread has called Register, or where it may not run on the waker's CPU.
class CpuHandOff {
 public:
  // By the thread to steer, once: it may be steered from now on.
  void Register();
  // By a waker, before it wakes the registered thread: that thread's next run is on the
  // caller's CPU.
  void SteerHere();
  // By the registered thread, once woken: it may run on its own CPUs again.
  void Release();

 private:
  std::atomic<int> tid_{0};
  std::atomic<bool> steered_{false};
  cpu_set_t allowed_{};  // the registered thread's own (written by Register, before tid_)
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_CONTROL_THREADS_H_
