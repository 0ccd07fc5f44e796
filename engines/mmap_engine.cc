// fio's "mmap" engine: the file is mapped shared, reads and writes are memcpy to and from the
// mapping, fsync is msync(MS_SYNC). The file must already have its full size (the worker lays
// files out before the run); IO past the end of the mapping is a short read or -EINVAL.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/errno_status.h"
#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

class MmapEngine final : public IoEngine {
 public:
  absl::string_view name() const override { return "mmap"; }

  absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) override {
    OpenOptions posix = options;
    posix.read = true;  // a writable shared mapping needs O_RDWR
    auto fd = files_.Open(path, posix);
    if (!fd.ok()) return fd.status();
    struct stat st;
    if (::fstat(*fd, &st) != 0 || st.st_size == 0) {
      const int err = st.st_size == 0 ? EINVAL : errno;
      (void)files_.Close(*fd);
      return ErrnoStatus(err, absl::StrCat("mmap ", path, ": the file is empty or cannot be sized"));
    }
    const int protection = PROT_READ | (options.write ? PROT_WRITE : 0);
    void* address = ::mmap(nullptr, static_cast<size_t>(st.st_size), protection, MAP_SHARED, *fd, 0);
    if (address == MAP_FAILED) {
      const int err = errno;
      (void)files_.Close(*fd);
      return ErrnoStatus(err, absl::StrCat("mmap ", path));
    }
    if (options.pattern != AccessPattern::kNormal) {
      ::madvise(address, static_cast<size_t>(st.st_size), options.pattern == AccessPattern::kRandom ? MADV_RANDOM : MADV_SEQUENTIAL);
    }
    maps_[*fd] = Mapping{static_cast<char*>(address), static_cast<uint64_t>(st.st_size), options.write};
    return *fd;
  }

  absl::Status Close(int file) override {
    auto it = maps_.find(file);
    if (it != maps_.end()) {
      ::munmap(it->second.address, it->second.length);
      maps_.erase(it);
    }
    return files_.Close(file);
  }

  absl::Status Invalidate(int file) override {
    auto it = maps_.find(file);
    if (it == maps_.end()) return absl::InvalidArgumentError("mmap: unknown file");
    ::msync(it->second.address, it->second.length, MS_SYNC);
    ::madvise(it->second.address, it->second.length, MADV_DONTNEED);
    return files_.Invalidate(file);
  }

  SubmitResult Submit(IoRequest* request) override {
    auto it = maps_.find(request->file);
    if (it == maps_.end()) {
      request->result = -EBADF;
      return SubmitResult::kCompleted;
    }
    const Mapping& map = it->second;
    switch (request->op) {
      case IoOp::kRead:
      case IoOp::kWrite: {
        if (request->op == IoOp::kWrite && !map.writable) {
          request->result = -EBADF;  // as write(2) on a read-only descriptor
          break;
        }
        if (request->offset >= map.length) {
          request->result = request->op == IoOp::kRead ? 0 : -EINVAL;
          break;
        }
        const uint64_t n = std::min(request->length, map.length - request->offset);
        if (request->op == IoOp::kRead) std::memcpy(request->buffer, map.address + request->offset, n);
        else std::memcpy(map.address + request->offset, request->buffer, n);
        request->result = static_cast<int64_t>(n);
        break;
      }
      case IoOp::kFsync:
      case IoOp::kFdatasync:
        request->result = ::msync(map.address, map.length, MS_SYNC) == 0 ? 0 : -errno;
        break;
      case IoOp::kTrim:  // the handle is the file's descriptor
        request->result = TrimRange(request->file, request->offset, request->length);
        break;
    }
    return SubmitResult::kCompleted;
  }

 private:
  // Opening, closing and invalidating go through the plain file engine.
  class Files final : public PosixFileEngine {
   public:
    absl::string_view name() const override { return "mmap-files"; }
    SubmitResult Submit(IoRequest* request) override {
      request->result = -EINVAL;
      return SubmitResult::kCompleted;
    }
  };
  struct Mapping {
    char* address;
    uint64_t length;
    bool writable;
  };
  Files files_;
  std::map<int, Mapping> maps_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakeMmapEngine(const EngineOptions&) {
  return std::unique_ptr<IoEngine>(std::make_unique<MmapEngine>());
}

}  // namespace iofleet
