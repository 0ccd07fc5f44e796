// Where a job thread runs and where its memory comes from, on the worker's own host: fio's
// cpus_allowed (shared or split), numa_cpu_nodes and numa_mem_policy. Applied by the thread to
// itself before it allocates its buffers, so they follow the memory policy. CPU and node numbers
// are the host's; one the host lacks is an error that names what the host has.
#ifndef IOFLEET_WORKER_THREAD_PLACEMENT_H_
#define IOFLEET_WORKER_THREAD_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace iofleet {

// The CPUs of NUMA node `node` (from /sys/devices/system/node/nodeN/cpulist, below `sysfs`).
absl::StatusOr<std::vector<uint32_t>> NumaNodeCpus(uint32_t node, const std::string& sysfs = "/sys/devices/system/node");

// Binds the calling thread (the job's thread `jobnum` on this worker) as `job` says; OK and
// nothing done when the job says nothing.
absl::Status PlaceThisThread(const v1::JobSpec& job, uint32_t jobnum);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_THREAD_PLACEMENT_H_
