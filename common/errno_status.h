// absl::Status from an errno with the code a caller of a worker should see. absl's own
// mapping gives UNKNOWN for EIO and ELOOP and UNIMPLEMENTED for EXDEV, so a refused symlink
// or a device error reached the controller under a code that says nothing; here a path the
// worker refuses (EXDEV, ELOOP, EACCES, EPERM) is PERMISSION_DENIED, a full filesystem or
// quota (ENOSPC, EDQUOT) RESOURCE_EXHAUSTED, and an IO error (EIO) DATA_LOSS.
#ifndef IOFLEET_COMMON_ERRNO_STATUS_H_
#define IOFLEET_COMMON_ERRNO_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace iofleet {

absl::StatusCode ErrnoStatusCode(int error);

// "<message>: <strerror>" under ErrnoStatusCode(error), as absl::ErrnoToStatus words it.
absl::Status ErrnoStatus(int error, absl::string_view message);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_ERRNO_STATUS_H_
