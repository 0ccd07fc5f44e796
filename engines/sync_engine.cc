// fio's "sync" engine: lseek(2) then read(2)/write(2), one request at a time.
#include <unistd.h>

#include <cerrno>

#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

class SyncEngine final : public IoEngine {
 public:
  absl::string_view name() const override { return "sync"; }
  absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) override {
    return OpenPosixFile(path, options);
  }
  absl::Status Close(int file) override { return ClosePosixFile(file); }
  absl::Status Invalidate(int file) override { return InvalidatePosixFile(file); }

  SubmitResult Submit(IoRequest* request) override {
    switch (request->op) {
      case IoOp::kRead:
      case IoOp::kWrite: {
        if (::lseek(request->file, static_cast<off_t>(request->offset), SEEK_SET) < 0) {
          request->result = -errno;
          break;
        }
        const ssize_t n = request->op == IoOp::kRead
                              ? ::read(request->file, request->buffer, request->length)
                              : ::write(request->file, request->buffer, request->length);
        request->result = n < 0 ? -errno : n;
        break;
      }
      case IoOp::kFsync:
      case IoOp::kFdatasync:
        request->result = SyncPosixFile(*request);
        break;
    }
    return SubmitResult::kCompleted;
  }
};

}  // namespace

std::unique_ptr<IoEngine> MakeSyncEngine(const EngineOptions&) {
  return std::make_unique<SyncEngine>();
}

}  // namespace iofleet
