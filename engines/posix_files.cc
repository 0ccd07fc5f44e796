#include "engines/posix_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace iofleet {

absl::StatusOr<int> PosixFileEngine::Open(const std::string& path, const OpenOptions& options) {
  int flags = O_CLOEXEC;
  if (options.read && options.write) flags |= O_RDWR;
  else if (options.write) flags |= O_WRONLY;
  else flags |= O_RDONLY;
  if (options.create) flags |= O_CREAT;
  if (options.direct) flags |= O_DIRECT;
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    const int err = errno;
    std::string hint;
    if (err == EINVAL && options.direct) hint = " (this filesystem does not support O_DIRECT; use direct=0)";
    return absl::ErrnoToStatus(err, absl::StrCat("open ", path, hint));
  }
  // As fio does by default: no readahead for random access (it would turn later random reads
  // into cache hits), aggressive readahead for sequential access.
  if (options.pattern != AccessPattern::kNormal) {
    const int advice = options.pattern == AccessPattern::kRandom ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL;
    if (const int rc = ::posix_fadvise(fd, 0, 0, advice); rc != 0) {
      ::close(fd);
      return absl::ErrnoToStatus(rc, absl::StrCat("posix_fadvise ", path));
    }
  }
  return fd;
}

absl::Status PosixFileEngine::Close(int file) {
  if (::close(file) != 0) return absl::ErrnoToStatus(errno, "close");
  return absl::OkStatus();
}

absl::Status PosixFileEngine::Invalidate(int file) {
  const int rc = ::posix_fadvise(file, 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) return absl::ErrnoToStatus(rc, "posix_fadvise(DONTNEED) for invalidate=1");
  return absl::OkStatus();
}

int64_t PosixFileEngine::Sync(const IoRequest& request) {
  const int rc = request.op == IoOp::kFsync ? ::fsync(request.file) : ::fdatasync(request.file);
  return rc == 0 ? 0 : -errno;
}

}  // namespace iofleet
