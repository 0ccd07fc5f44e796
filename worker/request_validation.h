// The worker's own check of every field of the requests that create work, by the rules the
// controller applies to what it sends (job/run_limits.h, job/job_validation.h): a request may
// come from anything that holds the token, so nothing in it is trusted.
#ifndef IOFLEET_WORKER_REQUEST_VALIDATION_H_
#define IOFLEET_WORKER_REQUEST_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "proto/worker_service.pb.h"

namespace iofleet {

// Run id, this worker's place, interval and lease (0: the defaults), and the whole RunSpec.
absl::Status ValidatePrepareRequest(const v1::PrepareRequest& request);

// Run id and the start instant against this worker's wall clock `now_unix_ns`.
absl::Status ValidateStartRequest(const v1::StartRequest& request, int64_t now_unix_ns);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_REQUEST_VALIDATION_H_
