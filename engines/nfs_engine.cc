// fio's "nfs" engine: a userspace NFSv3 client (libnfs), no kernel mount and no root needed.
// Files are nfs:// URLs. Each engine (one per job thread) has its own libnfs context, and
// requests really overlap: Commit() sends every queued READ/WRITE/COMMIT at once through
// libnfs's asynchronous calls and Reap() services the socket until enough replies arrived,
// so iodepth=N keeps N requests in flight on the wire. fsync/fdatasync are NFS COMMITs
// (fio's own nfs engine fails them). There is no client cache to drop: every read goes to
// the server, unlike a kernel mount (results differ from one; the server's cache remains).
#include <fcntl.h>
#include <nfsc/libnfs.h>
#include <poll.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/confined_path.h"
#include "common/errno_status.h"
#include "common/nfs_url.h"
#include "engines/engine_registry.h"
#include "nfs/nfs_connection.h"
#include "nfs/nfs_tree.h"

namespace iofleet {
namespace {

// How long Reap() waits for a server that answers nothing before failing the run.
constexpr auto kNoReplyLimit = std::chrono::seconds(30);

class NfsEngine final : public IoEngine {
 public:
  explicit NfsEngine(uint32_t iodepth) : slots_(iodepth) { queued_.reserve(iodepth); }
  ~NfsEngine() override {
    if (connection_ == nullptr) return;
    // Replies still owed would call back into requests the core is freeing: wait for them
    // (bounded), then make any late callback (libnfs cancels pending calls when the context
    // is destroyed) a no-op, while every member it might touch is still alive.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (in_flight_ > 0 && !broken_ && std::chrono::steady_clock::now() < until && ServiceOnce(100).ok()) {
    }
    for (Slot& slot : slots_) slot.request = nullptr;
    for (nfsfh* handle : handles_) {
      if (handle != nullptr && in_flight_ == 0 && !broken_) nfs_close(connection_->context(), handle);
    }
    tree_.reset();
    connection_.reset();
  }

  absl::string_view name() const override { return "nfs"; }

  absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) override {
    auto url = ParseNfsUrl(path);
    if (!url.ok()) return url.status();
    if (connection_ == nullptr) {
      // The connection mounts the file's directory; every file of the thread lives there.
      NfsUrl directory = *url;
      directory.path = directory.path.substr(0, std::max<size_t>(directory.path.rfind('/'), 1));
      auto connected = NfsConnection::Connect(directory);
      if (!connected.ok()) return connected.status();
      auto tree = NfsTree::Open(connected->get());
      if (!tree.ok()) return tree.status();
      connection_ = std::move(*connected);
      tree_ = std::move(*tree);
      if (options.direct) notes_.push_back("nfs: direct=1 changes nothing (libnfs has no client cache; every IO goes to the server)");
    }
    auto inside = connection_->PathOf(path);
    if (!inside.ok()) return inside.status();
    const int access = options.read && options.write ? O_RDWR : options.write ? O_WRONLY : O_RDONLY;
    nfsfh* handle = nullptr;
    // Reached by file handle with no symlink followed, then opened (see nfs/nfs_tree.h).
    const int rc = tree_->OpenFile(*inside, access, options.create, &handle);
    if (rc == -ELOOP || rc == -EXDEV) return ConfinedPathError(rc, "open", path);
    if (rc != 0) return connection_->Error(rc, absl::StrCat("open ", path));
    handles_.push_back(handle);
    writable_.push_back(options.write);
    return static_cast<int>(handles_.size() - 1);
  }

  absl::Status Close(int file) override {
    if (file < 0 || file >= static_cast<int>(handles_.size()) || handles_[file] == nullptr) {
      return absl::InvalidArgumentError("nfs: close of a file that is not open");
    }
    nfsfh* handle = handles_[file];
    handles_[file] = nullptr;
    // Closing may talk to the server (a COMMIT of unstable writes): not to a dead one, whose
    // every call would wait out the timeout. The handle is freed with the context.
    if (broken_) return absl::OkStatus();
    const int rc = nfs_close(connection_->context(), handle);
    return rc == 0 ? absl::OkStatus() : connection_->Error(rc, "close");
  }

  SubmitResult Submit(IoRequest* request) override {
    queued_.push_back(request);
    return SubmitResult::kQueued;
  }

  absl::Status Commit() override {
    for (IoRequest* request : queued_) {
      nfsfh* handle = handles_[request->file];
      nfs_context* context = connection_->context();
      Slot* slot = &slots_[request->tag % slots_.size()];
      *slot = Slot{this, request};
      if (request->op != IoOp::kRead && !writable_[request->file]) {
        // NFSv3 has no open state: the server would take the write; POSIX would not.
        request->result = -EBADF;
        completed_.push_back(request);
        continue;
      }
      if (request->op == IoOp::kTrim) {
        // NFSv3 has no deallocate (NFSv4.2's DEALLOCATE is not in libnfs): as a file system
        // without hole punching would answer.
        request->result = -EOPNOTSUPP;
        completed_.push_back(request);
        continue;
      }
      int rc;
      switch (request->op) {
        case IoOp::kRead: rc = nfs_pread_async(context, handle, request->offset, request->length, &OnReply, slot); break;
        case IoOp::kWrite:
          rc = nfs_pwrite_async(context, handle, request->offset, request->length, request->buffer, &OnReply, slot);
          break;
        default: rc = nfs_fsync_async(context, handle, &OnReply, slot); break;
      }
      if (rc != 0) {
        // Not sent: it fails through the normal completion path.
        request->result = -EIO;
        completed_.push_back(request);
      } else {
        // The no-reply clock starts when the queue goes from empty to busy.
        if (in_flight_++ == 0) last_reply_ = std::chrono::steady_clock::now();
      }
    }
    queued_.clear();
    return absl::OkStatus();
  }

  absl::StatusOr<int> Reap(int min_complete, absl::Span<IoRequest*> out, int64_t timeout_ns) override {
    const auto give_up = timeout_ns >= 0 ? std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns)
                                         : std::chrono::steady_clock::time_point::max();
    while (static_cast<int>(completed_.size()) < min_complete) {
      const auto before = std::chrono::steady_clock::now();
      if (before >= give_up) break;
      const int wait_ms = timeout_ns >= 0 ? static_cast<int>(std::clamp<int64_t>(
                                                std::chrono::duration_cast<std::chrono::milliseconds>(give_up - before).count(), 0, 1000))
                                          : 1000;
      if (absl::Status serviced = ServiceOnce(wait_ms); !serviced.ok()) return serviced;
      const auto after = std::chrono::steady_clock::now();
      if (static_cast<int>(completed_.size()) >= min_complete) break;
      if (after - last_reply_ > kNoReplyLimit) {
        broken_ = true;
        return absl::DeadlineExceededError(absl::StrCat("nfs: ", connection_->root().server, " answered none of ", in_flight_,
                                                        " requests in ", kNoReplyLimit.count(), " s (", connection_->LastError(), ")"));
      }
      // Disconnected (libnfs reconnecting): no socket to wait on, so do not spin.
      if (after - before < std::chrono::milliseconds(1)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    int n = 0;
    while (n < static_cast<int>(out.size()) && !completed_.empty()) {
      out[n++] = completed_.front();
      completed_.pop_front();
    }
    return n;
  }

 private:
  // libnfs's completion callback: `status` is bytes (read/write), 0 (commit) or -errno.
  static void OnReply(int status, nfs_context* context, void* data, void* private_data) {
    (void)context;
    auto* slot = static_cast<Slot*>(private_data);
    IoRequest* request = slot->request;
    NfsEngine* self = slot->engine;
    if (request == nullptr) return;  // the engine is going away (see the destructor)
    self->last_reply_ = std::chrono::steady_clock::now();
    if (status < 0) {
      // libnfs cancels requests (-EINTR) when it loses the server's connection; to the core
      // EINTR means "issue again", which would spin against a dead server.
      request->result = status == -EINTR || status == -EAGAIN ? -ECONNRESET : status;
      if (request->result == -ECONNRESET || request->result == -ETIMEDOUT) self->broken_ = true;
    } else if (request->op == IoOp::kRead) {
      // libnfs 4.0 reads into its own buffer.
      const size_t n = std::min<size_t>(static_cast<size_t>(status), request->length);
      std::memcpy(request->buffer, data, n);
      request->result = static_cast<int64_t>(n);
    } else if (request->op == IoOp::kWrite) {
      request->result = status;
    } else {
      request->result = 0;
    }
    --self->in_flight_;
    self->completed_.push_back(request);
  }

  // One poll of the connection's socket and one nfs_service(): sends what is queued and runs
  // the callbacks of the replies that arrived.
  absl::Status ServiceOnce(int timeout_ms) {
    nfs_context* context = connection_->context();
    pollfd fd{nfs_get_fd(context), static_cast<short>(nfs_which_events(context)), 0};
    const int ready = ::poll(&fd, 1, timeout_ms);
    if (ready < 0 && errno != EINTR) return ErrnoStatus(errno, "nfs: poll");
    if (nfs_service(context, ready > 0 ? fd.revents : 0) < 0) {
      broken_ = true;
      return absl::UnavailableError(absl::StrCat("nfs: connection to ", connection_->root().server, " failed: ", connection_->LastError()));
    }
    return absl::OkStatus();
  }

  // What a reply's callback needs: one per request slot (IoRequest::tag < iodepth).
  struct Slot {
    NfsEngine* engine = nullptr;
    IoRequest* request = nullptr;
  };

  std::vector<Slot> slots_;
  std::unique_ptr<NfsConnection> connection_;
  std::unique_ptr<NfsTree> tree_;  // on connection_
  std::vector<nfsfh*> handles_;
  std::vector<bool> writable_;  // opened for writing, per handle
  std::vector<IoRequest*> queued_;
  std::deque<IoRequest*> completed_;
  int in_flight_ = 0;
  bool broken_ = false;  // the server stopped answering: no more calls to it, even to close
  std::chrono::steady_clock::time_point last_reply_ = std::chrono::steady_clock::now();
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakeNfsEngine(const EngineOptions& options) {
  return std::make_unique<NfsEngine>(options.iodepth);
}

}  // namespace iofleet
