#include "job/job_phases.h"

#include <algorithm>

namespace iofleet {

JobPhases SplitIntoPhases(const v1::RunSpec& spec) {
  JobPhases out;
  uint32_t current = 0;  // the phase jobs without stonewall or wait_for join
  for (int j = 0; j < spec.jobs_size(); ++j) {
    const v1::JobSpec& job = spec.jobs(j);
    if (j == 0) {
      out.phases = out.groups = 1;
    } else {
      if (job.stonewall()) current = out.phases++;  // after every job so far
      if (job.stonewall() || job.new_group()) ++out.groups;
    }
    uint32_t phase = current;
    if (!job.wait_for().empty()) {
      // After the named job's phase (validation makes sure it is an earlier job).
      for (int k = 0; k < j; ++k) {
        if (spec.jobs(k).name() == job.wait_for()) phase = std::max(phase, out.phase_of[k] + 1);
      }
      out.phases = std::max(out.phases, phase + 1);
    }
    out.phase_of.push_back(phase);
    out.group_of.push_back(out.groups - 1);
  }
  return out;
}

}  // namespace iofleet
