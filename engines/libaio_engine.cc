// fio's "libaio" engine: Linux native AIO. Requests are prepared into iocbs, sent in one
// io_submit() per batch, and reaped with io_getevents(). Truly asynchronous only with
// direct=1 (buffered AIO completes inside io_submit, as in fio). Syncs are not offered by
// kernel AIO on most filesystems, so fsync/fdatasync run synchronously, as fio's engine does.
#include <libaio.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errno_status.h"
#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

// linux/aio_abi.h's IOCB_FLAG_IOPRIO: aio_reqprio holds the IO's priority.
constexpr unsigned kIocbFlagIoprio = 1u << 1;

class LibaioEngine final : public PosixFileEngine {
 public:
  LibaioEngine(uint32_t iodepth, bool atomic_writes) : iocbs_(iodepth), atomic_writes_(atomic_writes), events_(iodepth) {
    pending_.reserve(iodepth);
  }
  ~LibaioEngine() override {
    if (context_ != nullptr) io_destroy(context_);
  }

  absl::Status Init() {
    const int rc = io_setup(static_cast<int>(iocbs_.size()), &context_);
    if (rc < 0) {
      return ErrnoStatus(-rc, absl::StrCat("io_setup(", iocbs_.size(), ") (see /proc/sys/fs/aio-max-nr)"));
    }
    return absl::OkStatus();
  }

  absl::string_view name() const override { return "libaio"; }

  SubmitResult Submit(IoRequest* request) override {
    if (CompleteWithoutData(request)) return SubmitResult::kCompleted;  // fsync, fdatasync, trim: at once
    struct iocb* cb = &iocbs_[request->tag % iocbs_.size()];
    if (request->op == IoOp::kRead) {
      io_prep_pread(cb, request->file, request->buffer, request->length, static_cast<long long>(request->offset));
    } else {
      io_prep_pwrite(cb, request->file, request->buffer, request->length, static_cast<long long>(request->offset));
      if (atomic_writes_) cb->aio_rw_flags = kRwfAtomic;  // fio's atomic=1
    }
    if (request->ioprio != 0) {
      // fio's cmdprio: the IO's own priority (IOCB_FLAG_IOPRIO, Linux 5.0).
      cb->u.c.flags |= kIocbFlagIoprio;
      cb->aio_reqprio = request->ioprio;
    }
    cb->data = request;
    pending_.push_back(cb);
    return SubmitResult::kQueued;
  }

  absl::Status Commit() override {
    size_t sent = 0;
    while (sent < pending_.size()) {
      const int rc = io_submit(context_, static_cast<long>(pending_.size() - sent), pending_.data() + sent);
      if (rc == -EAGAIN || rc == -EINTR) continue;
      if (rc < 0) {
        // Fail the unsent requests through the normal completion path.
        for (size_t i = sent; i < pending_.size(); ++i) {
          auto* request = static_cast<IoRequest*>(pending_[i]->data);
          request->result = rc;
          failed_.push_back(request);
        }
        break;
      }
      sent += static_cast<size_t>(rc);
    }
    pending_.clear();
    return absl::OkStatus();
  }

  absl::StatusOr<int> Reap(int min_complete, absl::Span<IoRequest*> out, int64_t timeout_ns) override {
    int n = 0;
    while (!failed_.empty() && n < static_cast<int>(out.size())) {
      out[n++] = failed_.back();
      failed_.pop_back();
    }
    if (n >= min_complete && n > 0) return n;
    const long max = std::min<long>(static_cast<long>(out.size()) - n, static_cast<long>(events_.size()));
    struct timespec timeout{.tv_sec = timeout_ns / 1'000'000'000, .tv_nsec = timeout_ns % 1'000'000'000};
    int got;
    do {
      got = io_getevents(context_, std::max(0, min_complete - n), max, events_.data(), timeout_ns >= 0 ? &timeout : nullptr);
    } while (got == -EINTR);
    if (got < 0) return ErrnoStatus(-got, "io_getevents");
    for (int i = 0; i < got; ++i) {
      auto* request = static_cast<IoRequest*>(events_[i].data);
      // res is bytes or -errno, carried in an unsigned long.
      request->result = static_cast<int64_t>(static_cast<long>(events_[i].res));
      out[n++] = request;
    }
    return n;
  }

 private:
  io_context_t context_ = nullptr;
  std::vector<struct iocb> iocbs_;  // one per core slot (IoRequest::tag)
  const bool atomic_writes_;
  std::vector<struct iocb*> pending_;
  std::vector<struct io_event> events_;
  std::vector<IoRequest*> failed_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakeLibaioEngine(const EngineOptions& options) {
  auto engine = std::make_unique<LibaioEngine>(options.iodepth, options.atomic_writes);
  if (absl::Status s = engine->Init(); !s.ok()) return s;
  return std::unique_ptr<IoEngine>(std::move(engine));
}

}  // namespace iofleet
