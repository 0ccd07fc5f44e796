#include "worker/request_validation.h"

#include "job/job_validation.h"
#include "job/run_limits.h"

namespace iofleet {

absl::Status ValidatePrepareRequest(const v1::PrepareRequest& request) {
  if (absl::Status s = CheckRunId(request.run_id()); !s.ok()) return s;
  // The run group names the worker's kept zone state: the same bounds as a run id.
  if (!request.spec().run_group().empty()) {
    if (absl::Status s = CheckRunId(request.spec().run_group(), "run_group"); !s.ok()) return s;
  }
  if (absl::Status s = CheckWorkerPlace(request.worker_index(), request.worker_count()); !s.ok()) return s;
  // 0 is "the default" (1 s interval, 5 s lease) for older controllers.
  if (request.interval_ns() != 0) {
    if (absl::Status s = CheckIntervalNs(request.interval_ns(), "interval_ns"); !s.ok()) return s;
  }
  if (request.lease_ns() != 0) {
    if (absl::Status s = CheckLeaseNs(request.lease_ns(), "lease_ns"); !s.ok()) return s;
  }
  if (absl::Status s = CheckReportRate(static_cast<size_t>(request.spec().jobs_size()),
                                      request.interval_ns() ? request.interval_ns() : 1'000'000'000);
      !s.ok()) {
    return s;
  }
  return ValidateRunSpec(request.spec());
}

absl::Status ValidateStartRequest(const v1::StartRequest& request, int64_t now_unix_ns) {
  if (absl::Status s = CheckRunId(request.run_id()); !s.ok()) return s;
  return CheckStartInstant(request.start_unix_ns(), now_unix_ns);
}

}  // namespace iofleet
