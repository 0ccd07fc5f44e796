// fio's "sync" engine: lseek(2) then read(2)/write(2), one request at a time.
#include <unistd.h>

#include <cerrno>

#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

class SyncEngine final : public PosixFileEngine {
 public:
  absl::string_view name() const override { return "sync"; }

  SubmitResult Submit(IoRequest* request) override {
    if (CompleteWithoutData(request)) return SubmitResult::kCompleted;  // fsync, fdatasync, trim: at once
    if (::lseek(request->file, static_cast<off_t>(request->offset), SEEK_SET) < 0) {
      request->result = -errno;
    } else {
      const ssize_t n = request->op == IoOp::kRead ? ::read(request->file, request->buffer, request->length)
                                                   : ::write(request->file, request->buffer, request->length);
      request->result = n < 0 ? -errno : n;
    }
    return SubmitResult::kCompleted;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakeSyncEngine(const EngineOptions&) {
  return std::unique_ptr<IoEngine>(std::make_unique<SyncEngine>());
}

}  // namespace iofleet
