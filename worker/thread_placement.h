// Where a job thread runs and where its memory comes from, on the worker's own host: fio's
// cpus_allowed (shared or split), numa_cpu_nodes and numa_mem_policy. Applied by the thread to
// itself before it allocates its buffers, so they follow the memory policy. CPU and node numbers
// are the host's; one the host lacks is an error that names what the host has.
#ifndef IOFLEET_WORKER_THREAD_PLACEMENT_H_
#define IOFLEET_WORKER_THREAD_PLACEMENT_H_

#include <sched.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace iofleet {

// Holds the calling thread on one CPU (of those it may run on) while it lives; the thread's
// own set of CPUs again after. (mdtest's tasks: as mpirun binds its ranks to cores.)
class CpuPin {
 public:
  // The rank-th allowed CPU (modulo their number); nothing when the thread may run on one only.
  static std::optional<CpuPin> Rank(uint32_t rank) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return std::nullopt;
    const int count = CPU_COUNT(&allowed);
    if (count < 2) return std::nullopt;
    int nth = static_cast<int>(rank % static_cast<uint32_t>(count));
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed) || nth-- > 0) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (::sched_setaffinity(0, sizeof(one), &one) != 0) return std::nullopt;
      return std::optional<CpuPin>(std::in_place, allowed);
    }
    return std::nullopt;
  }
  explicit CpuPin(const cpu_set_t& allowed) : allowed_(allowed) {}
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;
  ~CpuPin() { ::sched_setaffinity(0, sizeof(allowed_), &allowed_); }

 private:
  cpu_set_t allowed_;
};

// The worker's control threads (gRPC's, the sessions', the lease watchdog, the metrics server)
// run SCHED_BATCH: woken by a message, such a thread takes a CPU that is free, or the running
// thread's at its next tick, instead of preempting it there and then. A controller's probe or
// window update then does not interrupt an IO thread in the middle of a request on the worker's
// host; and where controller and workers share a host (local workers, bench/scale_bench.sh), a
// write the controller makes does not hand its CPU over to the worker it wakes (1,024 workers
// on 2 cores: the controller's CPU 12.2-12.5% -> 9.8-10.0% of a core, two pairs). The worker's
// main calls this before any thread starts: threads inherit their creator's policy. A process
// started under another policy than SCHED_OTHER (chrt --fifo, --idle) is left as it is. Whether
// it switched.
bool ScheduleControlThreadsAsBatch();

// Called by a thread whose timing is measured or paces the measurement (IO threads, mdtest
// tasks, the interval collector; verifiers inherit it from their IO thread): SCHED_OTHER again
// when ScheduleControlThreadsAsBatch switched the process; nothing otherwise.
void ScheduleThisThreadForWork();

// The CPUs of NUMA node `node` (from /sys/devices/system/node/nodeN/cpulist, below `sysfs`).
absl::StatusOr<std::vector<uint32_t>> NumaNodeCpus(uint32_t node, const std::string& sysfs = "/sys/devices/system/node");

// Binds the calling thread (the job's thread `jobnum` on this worker) as `job` says; OK and
// nothing done when the job says nothing.
absl::Status PlaceThisThread(const v1::JobSpec& job, uint32_t jobnum);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_THREAD_PLACEMENT_H_
