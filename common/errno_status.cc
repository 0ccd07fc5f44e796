#include "common/errno_status.h"

#include <cerrno>

namespace iofleet {

absl::StatusCode ErrnoStatusCode(int error) {
  switch (error) {
    case EXDEV:
    case ELOOP:
    case EACCES:
    case EPERM:
      return absl::StatusCode::kPermissionDenied;
    case ENOSPC:
    case EDQUOT:
      return absl::StatusCode::kResourceExhausted;
    case EIO:
      return absl::StatusCode::kDataLoss;
    default:
      return absl::ErrnoToStatusCode(error);
  }
}

absl::Status ErrnoStatus(int error, absl::string_view message) {
  // absl's wording ("message: strerror"), under our code.
  const absl::Status worded = absl::ErrnoToStatus(error, message);
  return absl::Status(ErrnoStatusCode(error), worded.message());
}

}  // namespace iofleet
