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

// Whether a file IO job names no place for its files: no directory=, and a filename that is not
// a path (an mdtest task works in its own tree, metadata.root, and always has one).
bool NamesNoPlaceForFiles(const v1::JobSpec& job);
// Whether the job does file IO with no place named for its files (no directory=, a filename
// that is not a path): a local run gives it a temporary directory, a run on --hosts refuses it.
bool NeedsDirectory(const v1::JobSpec& job);

}  // namespace iofleet

#endif  // IOFLEET_JOB_JOB_VALIDATION_H_
