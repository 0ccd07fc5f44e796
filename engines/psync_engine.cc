// fio's "psync" engine: pread(2)/pwrite(2), one request at a time, no seek.
#include <unistd.h>

#include <cerrno>

#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

class PsyncEngine final : public IoEngine {
 public:
  absl::string_view name() const override { return "psync"; }
  absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) override {
    return OpenPosixFile(path, options);
  }
  absl::Status Close(int file) override { return ClosePosixFile(file); }
  absl::Status Invalidate(int file) override { return InvalidatePosixFile(file); }

  SubmitResult Submit(IoRequest* request) override {
    const off_t offset = static_cast<off_t>(request->offset);
    switch (request->op) {
      case IoOp::kRead: {
        const ssize_t n = ::pread(request->file, request->buffer, request->length, offset);
        request->result = n < 0 ? -errno : n;
        break;
      }
      case IoOp::kWrite: {
        const ssize_t n = ::pwrite(request->file, request->buffer, request->length, offset);
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

std::unique_ptr<IoEngine> MakePsyncEngine(const EngineOptions&) {
  return std::make_unique<PsyncEngine>();
}

}  // namespace iofleet
