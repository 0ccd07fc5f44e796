#include "engines/posix_files.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "common/confined_path.h"
#include "common/errno_status.h"

namespace iofleet {

absl::StatusOr<int> PosixFileEngine::Open(const std::string& path, const OpenOptions& options) {
  int flags = 0;
  if (options.read && options.write) flags |= O_RDWR;
  else if (options.write) flags |= O_WRONLY;
  else flags |= O_RDONLY;
  if (options.create) flags |= O_CREAT;
  if (options.direct) flags |= O_DIRECT;
  // Confined to the worker's allowed roots at every open (openat2 RESOLVE_BENEATH).
  const int fd = OpenConfined(path, flags);
  if (fd < 0) {
    if (fd == -EINVAL && options.direct) {
      return absl::InvalidArgumentError(absl::StrCat("open ", path, " (this filesystem does not support O_DIRECT; use direct=0)"));
    }
    return ConfinedPathError(fd, "open", path);
  }
  // As fio does by default: no readahead for random access (it would turn later random reads
  // into cache hits), aggressive readahead for sequential access.
  if (options.pattern != AccessPattern::kNormal) {
    const int advice = options.pattern == AccessPattern::kRandom ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL;
    // ESPIPE: a FIFO or socket, which has no page cache for the hint to be about.
    if (const int rc = ::posix_fadvise(fd, 0, 0, advice); rc != 0 && rc != ESPIPE) {
      ::close(fd);
      return ErrnoStatus(rc, absl::StrCat("posix_fadvise ", path));
    }
  }
  return fd;
}

absl::Status PosixFileEngine::Close(int file) {
  if (::close(file) != 0) return ErrnoStatus(errno, "close");
  return absl::OkStatus();
}

absl::Status PosixFileEngine::Invalidate(int file) {
  const int rc = ::posix_fadvise(file, 0, 0, POSIX_FADV_DONTNEED);
  if (rc != 0) return ErrnoStatus(rc, "posix_fadvise(DONTNEED) for invalidate=1");
  return absl::OkStatus();
}

int64_t TrimRange(int fd, uint64_t offset, uint64_t length) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return -errno;
  if (S_ISBLK(st.st_mode)) {
    uint64_t range[2] = {offset, length};
    if (::ioctl(fd, BLKDISCARD, range) != 0) return -errno;
  } else if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(length)) != 0) {
    return -errno;
  }
  return static_cast<int64_t>(length);
}

bool PosixFileEngine::CompleteWithoutData(IoRequest* request) {
  switch (request->op) {
    case IoOp::kFsync:
    case IoOp::kFdatasync: {
      const int rc = request->op == IoOp::kFsync ? ::fsync(request->file) : ::fdatasync(request->file);
      request->result = rc == 0 ? 0 : -errno;
      return true;
    }
    case IoOp::kTrim: request->result = TrimRange(request->file, request->offset, request->length); return true;
    case IoOp::kRead:
    case IoOp::kWrite: return false;
  }
  return false;
}

}  // namespace iofleet
