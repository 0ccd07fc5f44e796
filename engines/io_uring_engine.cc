// fio's "io_uring" engine on liburing. Requests become SQEs (user_data points at the
// request), a batch is sent with one io_uring_submit() in Commit(), and completions are reaped
// with io_uring_for_each_cqe + io_uring_cq_advance. Options: registerfiles (a sparse fixed-file
// table, IOSQE_FIXED_FILE), fixedbufs (registered buffers, READ/WRITE_FIXED), sqthread_poll
// (IORING_SETUP_SQPOLL), hipri (IORING_SETUP_IOPOLL, needs direct=1). Optional setup flags
// the kernel refuses are dropped one by one, and the engine says so in its notes.
#include <liburing.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errno_status.h"
#include "engines/engine_registry.h"
#include "engines/posix_files.h"

namespace iofleet {
namespace {

constexpr unsigned kFixedFileSlots = 64;

class IoUringEngine final : public PosixFileEngine {
 public:
  explicit IoUringEngine(const EngineOptions& options) : options_(options) {}
  ~IoUringEngine() override {
    if (ring_ready_) io_uring_queue_exit(&ring_);
  }

  absl::Status Init() {
    struct Attempt {
      unsigned flags;
      const char* what;
    };
    std::vector<Attempt> attempts;
    unsigned flags = 0;
    if (options_.sqthread_poll) flags |= IORING_SETUP_SQPOLL;
    if (options_.hipri) flags |= IORING_SETUP_IOPOLL;
    // Cheaper completions where the kernel has them (6.1+): one submitting thread, completion
    // work run only when this thread reaps (it always reaps through io_uring_wait_cqe_nr,
    // which enters the kernel when the ring is empty). Not with SQPOLL; silently left out
    // where refused: they change no result.
    const unsigned tuning = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    // Try with everything asked for, then without each optional flag, then with none.
    int rc = -EINVAL;
    for (unsigned drop : {0u, unsigned{IORING_SETUP_SQPOLL}, unsigned{IORING_SETUP_IOPOLL}, flags}) {
      if (drop != 0 && (flags & drop) == 0) continue;
      struct io_uring_params params;
      std::memset(&params, 0, sizeof(params));
      params.flags = (flags & ~drop) | tuning;
      if (io_uring_queue_init_params(std::max(2u, options_.iodepth), &ring_, &params) == 0) {
        flags_ = params.flags;
        rc = 0;
        if (drop != 0) {
          notes_.push_back(absl::StrCat("io_uring: the kernel refused ", Describe(drop & flags), "; running without it"));
        }
        break;
      }
      params.flags = flags & ~drop;
      if (params.flags & IORING_SETUP_SQPOLL) params.sq_thread_idle = 1000;
      rc = io_uring_queue_init_params(std::max(2u, options_.iodepth), &ring_, &params);
      if (rc == 0) {
        if (drop != 0) {
          notes_.push_back(absl::StrCat("io_uring: the kernel refused ", Describe(drop & flags), "; running without it"));
        }
        flags_ = params.flags;
        break;
      }
      if (rc != -EINVAL && rc != -EPERM && rc != -EOPNOTSUPP) break;
    }
    if (rc != 0) return ErrnoStatus(-rc, "io_uring_queue_init (is io_uring disabled? see /proc/sys/kernel/io_uring_disabled)");
    ring_ready_ = true;
    if (options_.registerfiles) {
      const int reg = io_uring_register_files_sparse(&ring_, kFixedFileSlots);
      if (reg < 0) {
        notes_.push_back(absl::StrCat("io_uring: registering files failed (", std::strerror(-reg), "); using plain descriptors"));
      } else {
        fixed_files_ = true;
        slot_of_fd_.assign(1024, -1);
      }
    }
    return absl::OkStatus();
  }

  absl::string_view name() const override { return "io_uring"; }

  absl::Status RegisterBuffers(absl::Span<const std::pair<void*, uint64_t>> buffers) override {
    if (!options_.fixedbufs) return absl::OkStatus();
    std::vector<struct iovec> iovecs;
    for (const auto& [address, length] : buffers) iovecs.push_back({address, length});
    const int rc = io_uring_register_buffers(&ring_, iovecs.data(), static_cast<unsigned>(iovecs.size()));
    if (rc < 0) {
      notes_.push_back(absl::StrCat("io_uring: registering buffers failed (", std::strerror(-rc), "); using plain buffers"));
      return absl::OkStatus();
    }
    fixed_buffers_ = true;
    return absl::OkStatus();
  }

  // Files are opened as usual and, with registerfiles, also put in the fixed-file table.
  absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) override {
    auto fd = PosixFileEngine::Open(path, options);
    if (!fd.ok() || !fixed_files_) return fd;
    int slot = -1;
    for (unsigned i = 0; i < kFixedFileSlots && slot < 0; ++i) {
      if (std::find(slot_of_fd_.begin(), slot_of_fd_.end(), static_cast<int>(i)) == slot_of_fd_.end()) slot = static_cast<int>(i);
    }
    if (slot < 0 || *fd >= static_cast<int>(slot_of_fd_.size())) return fd;  // table full: plain fd
    int value = *fd;
    if (io_uring_register_files_update(&ring_, static_cast<unsigned>(slot), &value, 1) == 1) slot_of_fd_[*fd] = slot;
    return fd;
  }

  SubmitResult Submit(IoRequest* request) override {
    if (request->op == IoOp::kTrim) {  // as fio's io_uring engine: trims are done synchronously
      request->result = TrimRange(request->file, request->offset, request->length);
      return SubmitResult::kCompleted;
    }
    struct io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      // The ring holds iodepth entries, so this means Commit() was skipped: send what is queued.
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) {
        request->result = -EBUSY;
        return SubmitResult::kCompleted;
      }
    }
    int fd = request->file;
    bool fixed_file = false;
    if (fixed_files_ && fd >= 0 && fd < static_cast<int>(slot_of_fd_.size()) && slot_of_fd_[fd] >= 0) {
      fd = slot_of_fd_[fd];
      fixed_file = true;
    }
    const bool fixed_buffer = fixed_buffers_ && request->buffer_index >= 0;
    switch (request->op) {
      case IoOp::kRead:
        if (fixed_buffer) io_uring_prep_read_fixed(sqe, fd, request->buffer, static_cast<unsigned>(request->length), request->offset, request->buffer_index);
        else io_uring_prep_read(sqe, fd, request->buffer, static_cast<unsigned>(request->length), request->offset);
        break;
      case IoOp::kWrite:
        if (fixed_buffer) io_uring_prep_write_fixed(sqe, fd, request->buffer, static_cast<unsigned>(request->length), request->offset, request->buffer_index);
        else io_uring_prep_write(sqe, fd, request->buffer, static_cast<unsigned>(request->length), request->offset);
        if (options_.atomic_writes) sqe->rw_flags = kRwfAtomic;  // fio's atomic=1
        break;
      case IoOp::kFsync:
      case IoOp::kFdatasync:
        io_uring_prep_fsync(sqe, fd, request->op == IoOp::kFdatasync ? IORING_FSYNC_DATASYNC : 0);
        break;
      case IoOp::kTrim: break;  // done before an SQE is taken (above)
    }
    if (request->ioprio != 0) sqe->ioprio = request->ioprio;  // fio's cmdprio
    if (fixed_file) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data(sqe, request);
    return SubmitResult::kQueued;
  }

  absl::Status Commit() override {
    int rc;
    do {
      rc = io_uring_submit(&ring_);
    } while (rc == -EINTR || rc == -EAGAIN);
    if (rc < 0) return ErrnoStatus(-rc, "io_uring_submit");
    return absl::OkStatus();
  }

  absl::StatusOr<int> Reap(int min_complete, absl::Span<IoRequest*> out, int64_t timeout_ns) override {
    if (min_complete > 0 && timeout_ns >= 0) {
      struct io_uring_cqe* cqe = nullptr;
      __kernel_timespec timeout{.tv_sec = timeout_ns / 1'000'000'000, .tv_nsec = timeout_ns % 1'000'000'000};
      int rc;
      do {
        rc = io_uring_wait_cqes(&ring_, &cqe, static_cast<unsigned>(min_complete), &timeout, nullptr);
      } while (rc == -EINTR || rc == -EAGAIN);
      if (rc < 0 && rc != -ETIME) return ErrnoStatus(-rc, "io_uring_wait_cqes");
    } else if (min_complete > 0) {
      struct io_uring_cqe* cqe = nullptr;
      int rc;
      do {
        rc = io_uring_wait_cqe_nr(&ring_, &cqe, static_cast<unsigned>(min_complete));
      } while (rc == -EINTR || rc == -EAGAIN);
      if (rc < 0) return ErrnoStatus(-rc, "io_uring_wait_cqe");
    }
    unsigned head;
    struct io_uring_cqe* cqe;
    int n = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (n == static_cast<int>(out.size())) break;
      auto* request = static_cast<IoRequest*>(io_uring_cqe_get_data(cqe));
      request->result = cqe->res;
      out[n++] = request;
    }
    io_uring_cq_advance(&ring_, static_cast<unsigned>(n));
    return n;
  }

  absl::Status Close(int file) override {
    if (fixed_files_ && file >= 0 && file < static_cast<int>(slot_of_fd_.size()) && slot_of_fd_[file] >= 0) {
      int empty = -1;
      io_uring_register_files_update(&ring_, static_cast<unsigned>(slot_of_fd_[file]), &empty, 1);
      slot_of_fd_[file] = -1;
    }
    return PosixFileEngine::Close(file);
  }

 private:
  static std::string Describe(unsigned flags) {
    std::string out;
    if (flags & IORING_SETUP_SQPOLL) out += "sqthread_poll (IORING_SETUP_SQPOLL)";
    if (flags & IORING_SETUP_IOPOLL) out += std::string(out.empty() ? "" : " and ") + "hipri (IORING_SETUP_IOPOLL)";
    return out;
  }

  const EngineOptions options_;
  struct io_uring ring_;
  bool ring_ready_ = false;
  unsigned flags_ = 0;
  bool fixed_files_ = false;
  bool fixed_buffers_ = false;
  std::vector<int> slot_of_fd_;  // fd -> fixed-file slot, or -1
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakeIoUringEngine(const EngineOptions& options) {
  auto engine = std::make_unique<IoUringEngine>(options);
  if (absl::Status s = engine->Init(); !s.ok()) return s;
  return std::unique_ptr<IoEngine>(std::move(engine));
}

}  // namespace iofleet
