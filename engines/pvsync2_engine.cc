// fio's "pvsync2" engine: preadv2(2)/pwritev2(2), one request at a time; with hipri=1 each
// request carries RWF_HIPRI (polled completion, effective with O_DIRECT on polling devices);
// with atomic=1 each write carries RWF_ATOMIC.
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

class Pvsync2Engine final : public PosixFileEngine {
 public:
  explicit Pvsync2Engine(const EngineOptions& options)
      : flags_(options.hipri ? RWF_HIPRI : 0), write_flags_(flags_ | (options.atomic_writes ? kRwfAtomic : 0)) {}
  absl::string_view name() const override { return "pvsync2"; }

  SubmitResult Submit(IoRequest* request) override {
    if (CompleteWithoutData(request)) return SubmitResult::kCompleted;  // fsync, fdatasync, trim: at once
    struct iovec iov = {request->buffer, request->length};
    const off_t offset = static_cast<off_t>(request->offset);
    const ssize_t n = request->op == IoOp::kRead ? ::preadv2(request->file, &iov, 1, offset, flags_)
                                                 : ::pwritev2(request->file, &iov, 1, offset, write_flags_);
    request->result = n < 0 ? -errno : n;
    return SubmitResult::kCompleted;
  }

 private:
  const int flags_;
  const int write_flags_;  // atomic=1 adds RWF_ATOMIC to writes only
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakePvsync2Engine(const EngineOptions& options) {
  return std::unique_ptr<IoEngine>(std::make_unique<Pvsync2Engine>(options));
}

}  // namespace iofleet
