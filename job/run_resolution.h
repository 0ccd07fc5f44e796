// The one stage between a front end and the workers: every RunSpec — from a fio job file,
// fio's command line, `iofleet mdtest` or a `compare` target — goes through ResolveRunSpec,
// which places its files (--directory, a compare target, a temporary directory for a local
// run), expands verify_across_workers into its write and read-back jobs, and validates the
// result completely. What leaves it is what the workers get; nothing downstream adjusts it.
// (size=N% stays a worker's decision: only the worker sees the file or device it is N% of.)
#ifndef IOFLEET_JOB_RUN_RESOLUTION_H_
#define IOFLEET_JOB_RUN_RESOLUTION_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace iofleet {

// Where the run's files go, as the command line said.
struct RunPlacement {
  // --directory: the directory of every job that names none (and whose filename is not a
  // path). Must be absolute.
  std::string default_directory;
  // A compare target: every job runs there, its own directory= replaced. An nfs:// URL makes
  // every job use the nfs engine (libnfs, no mount); a local path refuses ioengine=nfs.
  std::string target;
  // No --hosts: the workers are local, and a job with no place for its files gets
  // `temporary_directory()` (called once, on first need). With --hosts a job that does file
  // IO with no place for its files is refused.
  bool local_workers = false;
  std::function<absl::StatusOr<std::string>()> temporary_directory;
};

struct ResolvedRun {
  v1::RunSpec spec;
  // What the resolution changed that the user should hear about (e.g. an engine switched).
  std::vector<std::string> notes;
};

// Whether `target` can be a compare target: an absolute path or a well-formed nfs:// URL.
absl::Status CheckTarget(const std::string& target);

// kInvalidArgument naming the job (and its file:line when known) when the spec cannot run.
absl::StatusOr<ResolvedRun> ResolveRunSpec(v1::RunSpec spec, const RunPlacement& placement);

}  // namespace iofleet

#endif  // IOFLEET_JOB_RUN_RESOLUTION_H_
