// Decides which file each job thread uses on this worker and lays the files out before the
// run starts (so the measured run does no layout): read jobs get files filled with data to
// `size`, write jobs get files allocated to `size`. Paths must pass the worker's PathPolicy.
#ifndef IOFLEET_WORKER_FILE_LAYOUT_H_
#define IOFLEET_WORKER_FILE_LAYOUT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/worker_service.pb.h"
#include "worker/path_policy.h"

namespace iofleet {

struct RunLayout {
  // The jobs as they run here: sizes given as a percentage (size=50%) resolved against the
  // files on this worker.
  std::vector<v1::JobSpec> jobs;
  // paths[job][jobnum][filenum]: the files of each job thread.
  std::vector<std::vector<std::vector<std::string>>> paths;
  v1::PrepareResponse response;  // the distinct files, as reported to the controller
};

// The file-naming rule: a job with `filename=` (one name, or a colon-separated list) shares
// those files among all its threads on all workers; otherwise each thread gets nrfiles files
// "<directory>/<job>.w<worker>.<jobnum>.<filenum>" — with verify_across_workers, a read job
// takes the names of worker (worker+1) mod N instead, and of job files_of_job when set.
// `cancelled` (may be empty): asked while files are filled; the layout stops with kCancelled
// once it says so (the controller went away or gave the run up).
absl::StatusOr<RunLayout> LayOutRunFiles(const v1::PrepareRequest& request, const PathPolicy& policy,
                                         const std::function<bool()>& cancelled = nullptr);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_FILE_LAYOUT_H_
