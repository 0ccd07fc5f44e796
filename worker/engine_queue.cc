#include "worker/engine_queue.h"

#include <algorithm>
#include <chrono>

namespace iofleet {

absl::Status EngineQueue::Allocate(const v1::JobSpec& job, uint64_t buffer_size, const std::function<void(char*, uint64_t)>& fill) {
  const uint32_t depth = job.iodepth();  // at least 1: validated before any job thread starts
  submit_batch_ = job.iodepth_batch_submit() ? std::min(job.iodepth_batch_submit(), depth) : depth;
  complete_max_ = job.iodepth_batch_complete_max() ? std::min(job.iodepth_batch_complete_max(), depth) : depth;
  complete_min_ = std::clamp(job.iodepth_batch_complete_min(), 1u, complete_max_);
  slots_.resize(depth);
  std::vector<std::pair<void*, uint64_t>> registered;
  for (uint32_t i = 0; i < depth; ++i) {
    void* raw = nullptr;
    if (::posix_memalign(&raw, 4096, buffer_size) != 0) return absl::ResourceExhaustedError("cannot allocate the IO buffers");
    buffers_.emplace_back(raw);
    fill(static_cast<char*>(raw), buffer_size);
    slots_[i].buffer = static_cast<char*>(raw);
    slots_[i].request.tag = i;
    registered.push_back({raw, buffer_size});
    free_.push_back(&slots_[i]);
  }
  reaped_.resize(depth);
  completed_.resize(depth);
  unsent_.reserve(depth);
  return engine_->RegisterBuffers(registered);
}

absl::Status EngineQueue::CommitQueued() {
  if (absl::Status s = engine_->Commit(); !s.ok()) {
    // Nothing was sent: the requests will never complete, so take the slots back.
    free_.insert(free_.end(), unsent_.begin(), unsent_.end());
    unsent_.clear();
    return s;
  }
  ThreadStats::Add(stats_->submit[BatchBucket(static_cast<uint32_t>(unsent_.size()))], 1);
  const uint64_t now_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
  for (Slot* slot : unsent_) slot->submit_ns = now_ns;
  in_flight_ += static_cast<uint32_t>(unsent_.size());
  // fio's "IO depths": the submitted requests count at the depth they brought the queue to.
  ThreadStats::Add(stats_->depth[DepthBucket(in_flight_)], unsent_.size());
  unsent_.clear();
  return absl::OkStatus();
}

absl::StatusOr<absl::Span<Slot* const>> EngineQueue::Reap(int64_t timeout_ns) {
  const int min = static_cast<int>(std::min(complete_min_, in_flight_));
  absl::StatusOr<int> reaped = engine_->Reap(min, absl::MakeSpan(reaped_.data(), complete_max_), timeout_ns);
  if (!reaped.ok()) {
    in_flight_ = 0;  // the engine is broken: nothing more can be reaped
    return reaped.status();
  }
  if (*reaped > 0 || timeout_ns < 0) ThreadStats::Add(stats_->complete[BatchBucket(static_cast<uint32_t>(*reaped))], 1);
  for (int i = 0; i < *reaped; ++i) completed_[i] = &slots_[reaped_[i]->tag];
  in_flight_ -= static_cast<uint32_t>(*reaped);
  return absl::Span<Slot* const>(completed_.data(), static_cast<size_t>(*reaped));
}

}  // namespace iofleet
