// The request slots of one job thread over its engine: iodepth slots with their aligned
// buffers (registered with the engine), the requests queued but not yet committed
// (iodepth_batch_submit), reaping within iodepth_batch_complete_min/max, and fio's "IO depths",
// "submit" and "complete" distributions. What a request means, and what its completion does,
// is the IO loop's business (worker/job_thread.cc).
#ifndef IOFLEET_WORKER_ENGINE_QUEUE_H_
#define IOFLEET_WORKER_ENGINE_QUEUE_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engines/io_engine.h"
#include "proto/job.pb.h"
#include "worker/thread_stats.h"

namespace iofleet {

// One request in the making or in flight, and its buffer.
struct Slot {
  IoRequest request;
  char* buffer = nullptr;
  uint64_t offset = 0;  // of the whole block
  uint64_t length = 0;
  uint64_t done = 0;    // bytes completed so far (short transfers are continued)
  uint64_t issue_ns = 0;
  uint64_t submit_ns = 0;
  size_t file_index = 0;
  bool queued = false;
  bool verify_read = false;  // reading back a block this job wrote (do_verify)
  uint64_t write_number = 0;  // verify: the write this slot sends or reads back
  uint64_t generation = 0;    // verify: that write's pass
  uint16_t ioprio = 0;        // cmdprio: the data IO's priority (0: the thread's)
  int priority_slot = -1;     // its index among the job's priorities (-1: not kept apart)
};

class EngineQueue {
 public:
  EngineQueue(IoEngine* engine, ThreadStats* stats) : engine_(engine), stats_(stats) {}

  // Makes the job's iodepth slots with buffers of `buffer_size` bytes, each filled by `fill`
  // first, and registers them with the engine.
  absl::Status Allocate(const v1::JobSpec& job, uint64_t buffer_size, const std::function<void(char*, uint64_t)>& fill);

  bool HasFree() const { return !free_.empty(); }
  // The slot the next request goes into (HasFree() must hold); Take() it once it is used.
  Slot* NextFree() const { return free_.back(); }
  void Take() { free_.pop_back(); }
  void Release(Slot* slot) { free_.push_back(slot); }

  // Hands the slot's request to the engine: false when queued (completed later by Reap),
  // true when the engine completed it at once (its result is set).
  bool Submit(Slot* slot) {
    if (engine_->Submit(&slot->request) != SubmitResult::kQueued) return true;
    slot->queued = true;
    unsent_.push_back(slot);
    return false;
  }
  // Whether enough requests are queued to send them (iodepth_batch_submit).
  bool BatchFull() const { return unsent_.size() >= submit_batch_; }
  // Sends what is queued; the requests' submission time is taken then. On failure nothing
  // was sent and the slots are free again.
  absl::Status Commit() { return unsent_.empty() ? absl::OkStatus() : CommitQueued(); }
  // Waits for at least iodepth_batch_complete_min of what is in flight (fewer if fewer are)
  // and returns at most iodepth_batch_complete_max completed slots. On failure the engine is
  // broken and nothing counts as in flight any more.
  // `timeout_ns` >= 0: wait no longer, returning fewer (even none).
  absl::StatusOr<absl::Span<Slot* const>> Reap(int64_t timeout_ns = -1);

  uint32_t in_flight() const { return in_flight_; }

 private:
  absl::Status CommitQueued();
  struct AlignedFree {
    void operator()(void* p) const { ::free(p); }
  };
  IoEngine* const engine_;
  ThreadStats* const stats_;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<void, AlignedFree>> buffers_;
  std::vector<Slot*> free_;    // ready for a new request
  std::vector<Slot*> unsent_;  // queued in the engine, not yet committed
  std::vector<IoRequest*> reaped_;
  std::vector<Slot*> completed_;
  uint32_t in_flight_ = 0;  // committed and not yet reaped
  uint32_t submit_batch_ = 1, complete_min_ = 1, complete_max_ = 1;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_ENGINE_QUEUE_H_
