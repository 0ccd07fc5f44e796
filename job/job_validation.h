// Checks that a RunSpec describes runnable work. Run by the controller before any worker is
// contacted and again by each worker on Prepare, so a spec from any front end (or an older
// controller) is held to the same rules.
#ifndef IOFLEET_JOB_JOB_VALIDATION_H_
#define IOFLEET_JOB_JOB_VALIDATION_H_

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace iofleet {

// kInvalidArgument naming the job, its file:line when known, the option and the problem.
absl::Status ValidateRunSpec(const v1::RunSpec& spec);

}  // namespace iofleet

#endif  // IOFLEET_JOB_JOB_VALIDATION_H_
