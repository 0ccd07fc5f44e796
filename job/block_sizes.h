// Block-size helpers over the job model: fio's per-direction sizes and ranges, in one place so
// the parser, validation, the IO loop and the reports agree.
#ifndef IOFLEET_JOB_BLOCK_SIZES_H_
#define IOFLEET_JOB_BLOCK_SIZES_H_

#include <cstdint>
#include <string>

#include "job/rw_mode.h"
#include "proto/job.pb.h"

namespace iofleet {

// The largest IO the job can issue in any direction (its buffer size).
uint64_t MaxBlockSize(const v1::JobSpec& job);
// The smallest IO in any direction the job uses.
uint64_t MinBlockSize(const v1::JobSpec& job);
// The offset granularity: blockalign, or else the smallest block size.
uint64_t OffsetUnit(const v1::JobSpec& job);
// The size of one IO in a direction, from a uniformly random 64-bit number: a bssplit entry
// by its weight, or a size in [min, max] in multiples of min (any size with bs_unaligned).
// (Trims have no bssplit.)
uint64_t PickBlockSize(const v1::JobSpec& job, DataDirection direction, uint64_t random);
// Sets one block size for reads, writes and trims (fio's plain bs=N).
void SetFixedBlockSize(v1::JobSpec* job, uint64_t bs);
// The size of each of the job's files: filesize, or size split over nrfiles.
uint64_t FileSize(const v1::JobSpec& job);
// "4KiB", "4KiB-64KiB", "4KiB,8KiB" (read,write) as fio would write it.
std::string DescribeBlockSizes(const v1::JobSpec& job);

}  // namespace iofleet

#endif  // IOFLEET_JOB_BLOCK_SIZES_H_
