// fio's "psync" engine: pread(2)/pwrite(2), one request at a time, no seek.
#include <unistd.h>

#include <cerrno>

#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

class PsyncEngine final : public PosixFileEngine {
 public:
  absl::string_view name() const override { return "psync"; }

  SubmitResult Submit(IoRequest* request) override {
    if (CompleteWithoutData(request)) return SubmitResult::kCompleted;  // fsync, fdatasync, trim: at once
    const off_t offset = static_cast<off_t>(request->offset);
    const ssize_t n = request->op == IoOp::kRead ? ::pread(request->file, request->buffer, request->length, offset)
                                                 : ::pwrite(request->file, request->buffer, request->length, offset);
    request->result = n < 0 ? -errno : n;
    return SubmitResult::kCompleted;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakePsyncEngine(const EngineOptions&) {
  return std::unique_ptr<IoEngine>(std::make_unique<PsyncEngine>());
}

}  // namespace iofleet
