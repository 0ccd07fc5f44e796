// fio's IO priorities: prioclass/prio for a job, and cmdprio_* for some of its IOs — which
// priority each IO of a job gets, as a Linux ioprio value (class << 13 | hint << 3 | level).
#ifndef IOFLEET_JOB_IO_PRIORITY_H_
#define IOFLEET_JOB_IO_PRIORITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace iofleet {

// Distinct priorities of one job whose latency is kept apart (fio's clat_prio), at most.
inline constexpr size_t kMaxJobPriorities = 8;

uint32_t IoprioValue(uint32_t priority_class, uint32_t level, uint32_t hint = 0);
// fio's "class/level" name of a value ("1/0"), and its class and level.
uint32_t IoprioClass(uint32_t ioprio);
uint32_t IoprioLevel(uint32_t ioprio);
uint32_t IoprioHint(uint32_t ioprio);

// Which priority each IO of a job gets.
struct IoPriorities {
  // One rule: of the IOs of `block_size` (0: any), `percent` get `ioprio`.
  struct Rule {
    uint64_t block_size = 0;
    uint32_t percent = 0;
    uint32_t ioprio = 0;
  };
  bool thread_priority = false;  // prioclass/prio given: set on the threads
  uint32_t default_ioprio = 0;   // the IOs no rule picks (0: none, the thread's)
  std::vector<Rule> rules[2];    // [0] reads, [1] writes
  // The distinct priorities IOs get, the default first; empty when the job has no cmdprio
  // (its latency is not kept apart).
  std::vector<uint32_t> distinct;
};

// Resolves and checks a job's priority options (ranges, percentages, what fio refuses).
absl::StatusOr<IoPriorities> ResolveIoPriorities(const v1::JobSpec& job);

}  // namespace iofleet

#endif  // IOFLEET_JOB_IO_PRIORITY_H_
