#include "job/job_phases.h"

namespace iofleet {

JobPhases SplitIntoPhases(const v1::RunSpec& spec) {
  JobPhases out;
  for (int j = 0; j < spec.jobs_size(); ++j) {
    const v1::JobSpec& job = spec.jobs(j);
    if (j == 0) {
      out.phases = out.groups = 1;
    } else {
      if (job.stonewall()) ++out.phases;
      if (job.stonewall() || job.new_group()) ++out.groups;
    }
    out.phase_of.push_back(out.phases - 1);
    out.group_of.push_back(out.groups - 1);
  }
  return out;
}

}  // namespace iofleet
