// Lists of CPU and NUMA-node numbers as fio's options (cpus_allowed=0-3,8) and the kernel's
// sysfs files (/sys/devices/system/node/node0/cpulist) write them: numbers and ascending
// ranges, comma-separated.
#ifndef IOFLEET_COMMON_INDEX_LIST_H_
#define IOFLEET_COMMON_INDEX_LIST_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace iofleet {

// The numbers `text` lists, ascending and without repeats, each below `limit`; kInvalidArgument
// naming the part that is not a number or an ascending range, or that goes above limit - 1.
absl::StatusOr<std::vector<uint32_t>> ParseIndexList(absl::string_view text, uint32_t limit);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_INDEX_LIST_H_
