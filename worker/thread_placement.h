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

// The CPUs of NUMA node `node` (from /sys/devices/system/node/nodeN/cpulist, below `sysfs`).
absl::StatusOr<std::vector<uint32_t>> NumaNodeCpus(uint32_t node, const std::string& sysfs = "/sys/devices/system/node");

// Binds the calling thread (the job's thread `jobnum` on this worker) as `job` says; OK and
// nothing done when the job says nothing.
absl::Status PlaceThisThread(const v1::JobSpec& job, uint32_t jobnum);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_THREAD_PLACEMENT_H_
