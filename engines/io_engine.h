// The IO engine interface: how a worker thread performs IO, one engine instance per thread.
// Modelled on fio's engine table and on io_uring: requests are submitted, then reaped;
// a result is bytes done or a negative errno, like a CQE. The core (worker/job_thread.cc), not
// the engine, times requests, resubmits short transfers and counts errors, so every engine
// stays small. Synchronous engines complete requests inside Submit(); asynchronous ones queue
// them, send them on Commit() and hand completions back from Reap().
#ifndef IOFLEET_ENGINES_IO_ENGINE_H_
#define IOFLEET_ENGINES_IO_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace iofleet {

// kTrim: `length` bytes at `offset` are no longer wanted (fio rw=trim): discarded on a block
// device, a hole punched in a file.
enum class IoOp : uint8_t { kRead, kWrite, kFsync, kFdatasync, kTrim };

struct IoRequest {
  IoOp op = IoOp::kRead;
  int file = -1;             // a handle returned by IoEngine::Open
  void* buffer = nullptr;    // kRead/kWrite only
  uint64_t length = 0;
  uint64_t offset = 0;
  int64_t result = 0;        // set on completion: bytes transferred, or -errno
  int buffer_index = -1;     // index into RegisterBuffers() buffers, or -1
  uint32_t tag = 0;          // owned by the core (its slot index, < iodepth)
  uint16_t ioprio = 0;       // kRead/kWrite: this IO's priority (Linux ioprio), 0: the thread's;
                             // engines whose catalog entry has per_io_priority send it
};

// How the file will be accessed, for the kernel's readahead (fio's fadvise_hint=1 default).
enum class AccessPattern { kNormal, kSequential, kRandom };

struct OpenOptions {
  bool read = false;
  bool write = false;
  bool create = false;
  bool direct = false;  // O_DIRECT: buffers, offsets and lengths must be aligned
  AccessPattern pattern = AccessPattern::kNormal;
};

struct EngineOptions {
  uint32_t iodepth = 1;        // most requests in flight at once
  bool hipri = false;          // polled completions where the engine has them
  bool fixedbufs = false;      // io_uring: registered buffers
  bool registerfiles = false;  // io_uring: registered files
  bool sqthread_poll = false;  // io_uring: kernel submission thread
  bool atomic_writes = false;  // writes carry RWF_ATOMIC (engines whose catalog entry says so)
};

// RWF_ATOMIC (Linux 6.11, include/uapi/linux/fs.h): a write is stored whole or not at all.
// Debian 12's headers predate it.
inline constexpr int kRwfAtomic = 0x00000040;

enum class SubmitResult { kCompleted, kQueued };

class IoEngine {
 public:
  virtual ~IoEngine() = default;

  virtual absl::string_view name() const = 0;

  // Opens `path` and returns a handle for IoRequest::file. May block.
  virtual absl::StatusOr<int> Open(const std::string& path, const OpenOptions& options) = 0;
  virtual absl::Status Close(int file) = 0;

  // Registers the core's IO buffers once, before any IO (io_uring's fixedbufs); requests
  // then carry buffer_index. Engines that gain nothing from it need not implement it.
  virtual absl::Status RegisterBuffers(absl::Span<const std::pair<void*, uint64_t>> buffers) {
    (void)buffers;
    return absl::OkStatus();
  }

  // What the user should know about how the engine runs (a feature the kernel refused and
  // the fallback taken), collected into the job's final report.
  const std::vector<std::string>& notes() const { return notes_; }

  // Drops the file's cached pages (fio's invalidate=1, done at the start of every pass over
  // the file, as fio does when it reopens files for the next loop). Engines without a local
  // page cache need not implement it. May block.
  virtual absl::Status Invalidate(int file) {
    (void)file;
    return absl::OkStatus();
  }

  // Takes one request. kCompleted: the request is done and `result` is set (synchronous
  // engines; may block). kQueued: it completes later through Reap().
  virtual SubmitResult Submit(IoRequest* request) = 0;

  // Sends queued requests on their way. Never blocks waiting for completions. Required only
  // for engines that return kQueued.
  virtual absl::Status Commit() { return absl::OkStatus(); }

  // Waits until at least `min_complete` queued requests have completed and stores up to
  // out.size() of them in `out`; returns how many. With `timeout_ns` >= 0 it waits no longer
  // than that and may return fewer (a rate-limited loop with IO due: fio's
  // io_submit_mode=offload). Required only for engines that queue.
  virtual absl::StatusOr<int> Reap(int min_complete, absl::Span<IoRequest*> out, int64_t timeout_ns = -1) {
    (void)min_complete;
    (void)out;
    (void)timeout_ns;
    return 0;
  }

 protected:
  std::vector<std::string> notes_;
};

}  // namespace iofleet

#endif  // IOFLEET_ENGINES_IO_ENGINE_H_
