// Reads the facts of this host and of a target path from /proc and /sys: CPU, memory, the
// mount holding the path with its options (NFS version, rsize/wsize, actimeo, proto; the FUSE
// daemon), and for block-backed paths the device's queue settings.
#ifndef IOFLEET_WORKER_HOST_FACTS_H_
#define IOFLEET_WORKER_HOST_FACTS_H_

#include <string>

#include "proto/host_facts.pb.h"

namespace iofleet {

// Host-wide facts (no targets).
v1::HostFacts CollectHostFacts();

// The mount holding `path` (the longest mount point containing it) and its device.
// `mountinfo` and `sys_block` are for tests; by default /proc/self/mountinfo and /sys/block.
v1::TargetFacts DescribeTarget(const std::string& path, const std::string& mountinfo = "/proc/self/mountinfo",
                               const std::string& sys_block = "/sys/block");

}  // namespace iofleet

#endif  // IOFLEET_WORKER_HOST_FACTS_H_
