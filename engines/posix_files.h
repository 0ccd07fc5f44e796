// Opening and closing files with open(2), shared by the engines that work on file descriptors.
#ifndef IOFLEET_ENGINES_POSIX_FILES_H_
#define IOFLEET_ENGINES_POSIX_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "engines/io_engine.h"

namespace iofleet {

// open(2) with flags from `options`; errors name the path and errno.
absl::StatusOr<int> OpenPosixFile(const std::string& path, const OpenOptions& options);
absl::Status ClosePosixFile(int fd);
// posix_fadvise(POSIX_FADV_DONTNEED) over the whole file.
absl::Status InvalidatePosixFile(int fd);
// fsync(2) or fdatasync(2) as a request result (0 or -errno).
int64_t SyncPosixFile(const IoRequest& request);

}  // namespace iofleet

#endif  // IOFLEET_ENGINES_POSIX_FILES_H_
