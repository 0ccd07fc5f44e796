#include "common/errno_status.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(ErrnoStatus, RefusalsFullDisksAndDeviceErrorsGetCodesThatSayWhat) {
  EXPECT_EQ(ErrnoStatus(EXDEV, "open x").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(ELOOP, "unlink x").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(ENOSPC, "create x").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(EIO, "read x").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ErrnoStatus(ENOENT, "stat x").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(ENOSPC, "create x").message(), "create x: No space left on device");
}

}  // namespace
}  // namespace iofleet
