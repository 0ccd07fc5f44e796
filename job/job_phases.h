// How a job file's jobs are sequenced and grouped: fio's stonewall splits them into phases
// that run one after another (on the cluster: each phase starts together on every worker once
// the previous one has ended everywhere), wait_for=NAME puts a job in a phase after NAME's,
// and stonewall or new_group start reporting groups.
#ifndef IOFLEET_JOB_JOB_PHASES_H_
#define IOFLEET_JOB_JOB_PHASES_H_

#include <cstdint>
#include <vector>

#include "proto/job.pb.h"

namespace iofleet {

struct JobPhases {
  std::vector<uint32_t> phase_of;  // per job
  std::vector<uint32_t> group_of;  // per job
  uint32_t phases = 0;
  uint32_t groups = 0;
};

JobPhases SplitIntoPhases(const v1::RunSpec& spec);

}  // namespace iofleet

#endif  // IOFLEET_JOB_JOB_PHASES_H_
