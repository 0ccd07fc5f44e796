// Which block devices really get the requests for IO under a path: the file system's device,
// resolved through sysfs — a partition to its whole disk (the block layer's requests are the
// disk's), device-mapper and md to the devices beneath them (they pass bios on and have no
// requests of their own). What --block-stages traces.
#ifndef IOFLEET_WORKER_BLOCK_DEVICES_H_
#define IOFLEET_WORKER_BLOCK_DEVICES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace iofleet {

struct BlockDevice {
  uint32_t major = 0, minor = 0;  // the whole disk's
  std::string name;               // loop0, vda, nvme0n1
  std::string scheduler;          // the active one (none, mq-deadline, kyber, bfq); "" if unknown
  std::string backing;            // a loop device's backing file
  bool io_stats = false;          // queue/iostats: the block layer times its requests
  uint32_t hardware_queues = 0;   // mq/* (blk-mq hardware contexts)
  uint32_t tags = 0;              // the largest mq/*/nr_tags: driver tags per hardware queue
  friend bool operator==(const BlockDevice& a, const BlockDevice& b) { return a.major == b.major && a.minor == b.minor; }
};

struct ResolvedDevices {
  std::vector<BlockDevice> devices;
  // Set when the path has no block device beneath it: why ("tmpfs has no block device").
  std::string none_reason;
};

// The devices beneath the file `fd` is open on (a file, a directory, or a block device node
// itself: the worker opens its targets beneath its roots and asks about the descriptor).
// `sys_root` is where sysfs is mounted (tests give a fake tree).
absl::StatusOr<ResolvedDevices> ResolveBlockDevices(int fd, const std::string& sys_root = "/sys");

// The same from a device number (a file system's st_dev, a device node's st_rdev).
absl::StatusOr<std::vector<BlockDevice>> ResolveDeviceNumber(uint32_t major, uint32_t minor, const std::string& sys_root = "/sys");

}  // namespace iofleet

#endif  // IOFLEET_WORKER_BLOCK_DEVICES_H_
