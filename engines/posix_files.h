// The part every file-descriptor engine shares: open(2)/close(2), cache invalidation and
// fsync/fdatasync. Engines derive from PosixFileEngine and implement only how they move data.
#ifndef IOFLEET_ENGINES_POSIX_FILES_H_
#define IOFLEET_ENGINES_POSIX_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "engines/io_engine.h"

namespace iofleet {

// A kTrim on a file descriptor: BLKDISCARD on a block device (fio's trim), a punched hole
// (fallocate PUNCH_HOLE|KEEP_SIZE) in a regular file — where fio 3.33 fails with ENOTTY.
// Returns the bytes trimmed or -errno.
int64_t TrimRange(int fd, uint64_t offset, uint64_t length);

class PosixFileEngine : public IoEngine {
 public:
  // open(2) with flags from `options`; errors name the path and errno.
  absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) override;
  absl::Status Close(int file) override;
  // posix_fadvise(POSIX_FADV_DONTNEED) over the whole file.
  absl::Status Invalidate(int file) final;

 protected:
  // The requests that move no data — kFsync, kFdatasync (fsync(2), fdatasync(2)) and kTrim
  // (TrimRange) — carried out at once, their result set; false for a read or a write.
  static bool CompleteWithoutData(IoRequest* request);
};

}  // namespace iofleet

#endif  // IOFLEET_ENGINES_POSIX_FILES_H_
