#include "worker/job_thread.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engines/engine_registry.h"
#include "job/block_sizes.h"

namespace iofleet {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

struct AlignedFree {
  void operator()(void* p) const { ::free(p); }
};

bool Reads(v1::ReadWrite rw) {
  return rw == v1::SEQ_READ || rw == v1::RAND_READ || rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED;
}
bool IsRandom(v1::ReadWrite rw) {
  return rw == v1::RAND_READ || rw == v1::RAND_WRITE || rw == v1::RAND_MIXED;
}
bool IsMixed(v1::ReadWrite rw) { return rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED; }

const char* OpName(IoOp op) {
  switch (op) {
    case IoOp::kRead: return "read";
    case IoOp::kWrite: return "write";
    case IoOp::kFsync: return "fsync";
    case IoOp::kFdatasync: return "fdatasync";
  }
  return "?";
}

// Sleeps until `when` in short steps so that a stop request is honoured promptly.
bool SleepUntil(Clock::time_point when, const std::atomic<bool>& stop) {
  while (Clock::now() < when) {
    if (stop.load(std::memory_order_relaxed)) return false;
    std::this_thread::sleep_until(std::min(when, Clock::now() + std::chrono::milliseconds(20)));
  }
  return !stop.load(std::memory_order_relaxed);
}

}  // namespace

BlockPermutation::BlockPermutation(uint64_t count, uint64_t seed) : count_(count) {
  uint64_t size = 1;
  while (size < count) size <<= 1;
  mask_ = size - 1;
  std::mt19937_64 rng(seed);
  // Hull-Dobell: modulus 2^k, increment odd, multiplier ≡ 1 (mod 4) => full period.
  multiplier_ = (rng() & ~uint64_t{3}) | 1;
  increment_ = rng() | 1;
  state_ = rng() & mask_;
}

uint64_t BlockPermutation::Next() {
  do {
    state_ = (state_ * multiplier_ + increment_) & mask_;
  } while (state_ >= count_);
  return state_;
}

namespace {

// The IO loop of one thread: keeps up to iodepth requests in flight through the engine,
// generating offsets and directions as the job says and timing every request.
class IoLoop {
 public:
  IoLoop(const JobThreadPlan& plan, const std::atomic<bool>& stop, ThreadStats* stats)
      : plan_(plan), job_(*plan.job), stop_(stop), stats_(stats), rng_(plan.seed) {}

  JobThreadOutcome Run();

 private:
  struct Slot {
    IoRequest request;
    char* buffer = nullptr;
    uint64_t offset = 0;   // of the whole block
    uint64_t length = 0;
    uint64_t done = 0;     // bytes completed so far (short transfers are continued)
    uint64_t issue_ns = 0;
    uint64_t submit_ns = 0;
    bool queued = false;
  };
  enum class Next { kDone, kResubmit };

  absl::Status Setup();
  void FillAndSubmit();
  void Dispatch(Slot* slot);
  Next Complete(Slot* slot, uint64_t now_ns);
  void Fail(const Slot& slot, int error);
  bool InvalidateFile();

  const JobThreadPlan& plan_;
  const v1::JobSpec& job_;
  const std::atomic<bool>& stop_;
  ThreadStats* const stats_;
  std::mt19937_64 rng_;
  JobThreadOutcome outcome_;

  std::unique_ptr<IoEngine> engine_;
  int file_ = -1;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<void, AlignedFree>> buffers_;
  std::vector<Slot*> free_;       // slots ready for a new request
  std::vector<Slot*> unsent_;     // queued in the engine, not yet committed
  std::vector<IoRequest*> reaped_;
  uint32_t in_flight_ = 0;        // committed and not yet reaped

  // Work generation for the current pass: offsets are multiples of `unit_` (the smallest
  // block size); a pass ends when `size` bytes were issued or every unit was used once.
  void NextIo(bool* is_read, uint64_t* offset, uint64_t* length);
  bool PassDone() const { return pass_bytes_ >= job_.size() || next_unit_ >= units_; }
  std::unique_ptr<BlockPermutation> permutation_;
  uint64_t max_bs_ = 0, unit_ = 0, units_ = 0, next_unit_ = 0, pass_bytes_ = 0;
  bool reads_ = false, writes_ = false, random_ = false, mixed_ = false;
  uint64_t writes_since_sync_ = 0;
  bool sync_due_ = false;
  bool stopping_ = false;
  uint64_t deadline_ns_ = UINT64_MAX;
};

absl::Status IoLoop::Setup() {
  const uint32_t depth = std::max(1u, job_.iodepth());
  auto engine = CreateEngine(job_.ioengine(), EngineOptions{.iodepth = depth,
                                                             .hipri = job_.hipri(),
                                                             .fixedbufs = job_.fixedbufs(),
                                                             .registerfiles = job_.registerfiles(),
                                                             .sqthread_poll = job_.sqthread_poll()});
  if (!engine.ok()) return engine.status();
  engine_ = std::move(*engine);
  reads_ = Reads(job_.rw());
  writes_ = job_.rw() != v1::SEQ_READ && job_.rw() != v1::RAND_READ;
  random_ = IsRandom(job_.rw());
  mixed_ = IsMixed(job_.rw());
  auto file = engine_->Open(plan_.path, OpenOptions{.read = reads_,
                                                    .write = writes_,
                                                    .create = writes_,
                                                    .direct = job_.direct(),
                                                    .pattern = random_ ? AccessPattern::kRandom : AccessPattern::kSequential});
  if (!file.ok()) return file.status();
  file_ = *file;

  max_bs_ = MaxBlockSize(job_);
  unit_ = MinBlockSize(job_);
  slots_.resize(depth);
  std::vector<std::pair<void*, uint64_t>> registered;
  for (uint32_t i = 0; i < depth; ++i) {
    void* raw = nullptr;
    if (::posix_memalign(&raw, 4096, max_bs_) != 0) {
      return absl::ResourceExhaustedError("cannot allocate the IO buffers");
    }
    buffers_.emplace_back(raw);
    // Random, incompressible data, as fio writes by default.
    for (uint64_t b = 0; b + 8 <= max_bs_; b += 8) {
      const uint64_t word = rng_();
      std::memcpy(static_cast<char*>(raw) + b, &word, 8);
    }
    slots_[i].buffer = static_cast<char*>(raw);
    slots_[i].request.tag = i;
    registered.push_back({raw, max_bs_});
    free_.push_back(&slots_[i]);
  }
  if (absl::Status s = engine_->RegisterBuffers(registered); !s.ok()) return s;
  reaped_.resize(depth);
  unsent_.reserve(depth);
  units_ = job_.size() / unit_;
  const uint64_t start_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(plan_.start.time_since_epoch()).count());
  if (job_.runtime_ns()) deadline_ns_ = start_ns + job_.runtime_ns();
  return absl::OkStatus();
}

bool IoLoop::InvalidateFile() {
  absl::Status dropped = engine_->Invalidate(file_);
  if (dropped.ok()) return true;
  outcome_.status = absl::Status(dropped.code(), absl::StrCat(plan_.path, ": ", dropped.message()));
  return false;
}

void IoLoop::Fail(const Slot& slot, int error) {
  stopping_ = true;
  if (!outcome_.status.ok()) return;
  const IoOp op = slot.request.op;
  if (op == IoOp::kFsync || op == IoOp::kFdatasync) {
    outcome_.status = absl::ErrnoToStatus(error, absl::StrCat(OpName(op), " of ", plan_.path));
  } else {
    outcome_.status = absl::ErrnoToStatus(
        error, absl::StrCat(OpName(op), " of ", slot.length, " bytes at offset ", slot.offset, " in ", plan_.path));
  }
}

// Hands a prepared request to the engine; a request the engine completes at once is finished
// (or continued, if short) right here.
void IoLoop::Dispatch(Slot* slot) {
  while (true) {
    if (engine_->Submit(&slot->request) == SubmitResult::kQueued) {
      slot->queued = true;
      unsent_.push_back(slot);
      return;
    }
    const uint64_t now = NowNs();
    slot->submit_ns = slot->queued ? slot->submit_ns : slot->issue_ns;
    if (Complete(slot, now) == Next::kDone) return;
  }
}

IoLoop::Next IoLoop::Complete(Slot* slot, uint64_t now_ns) {
  IoRequest& r = slot->request;
  if (r.result == -EAGAIN || r.result == -EINTR) return Next::kResubmit;
  const bool data = r.op == IoOp::kRead || r.op == IoOp::kWrite;
  int error = r.result < 0 ? static_cast<int>(-r.result) : 0;
  if (data && error == 0) {
    slot->done += static_cast<uint64_t>(r.result);
    if (slot->done < slot->length) {
      if (r.result > 0) {
        // A short transfer: continue with the rest, as fio does.
        r.buffer = slot->buffer + slot->done;
        r.offset = slot->offset + slot->done;
        r.length = slot->length - slot->done;
        return Next::kResubmit;
      }
      error = ENODATA;  // end of file before the block was complete
    }
  }
  const DirectionIndex direction = !data ? kSyncIndex : r.op == IoOp::kRead ? kReadIndex : kWriteIndex;
  stats_->directions[direction].Record(slot->issue_ns, slot->submit_ns, now_ns, slot->queued,
                                       data ? slot->done : 0, error != 0);
  if (error != 0) Fail(*slot, error);
  if (now_ns >= deadline_ns_) stopping_ = true;
  free_.push_back(slot);
  return Next::kDone;
}

void IoLoop::NextIo(bool* is_read, uint64_t* offset, uint64_t* length) {
  *is_read = mixed_ ? rng_() % 100 < job_.rwmix_read() : reads_;
  const v1::BlockSizeRange& bs = *is_read ? job_.read_bs() : job_.write_bs();
  uint64_t size = bs.min();
  if (bs.max() > bs.min()) size += (rng_() % ((bs.max() - bs.min()) / bs.min() + 1)) * bs.min();
  if (random_) {
    *offset = permutation_->Next() * unit_;
    ++next_unit_;
  } else {
    *offset = pass_bytes_;
    next_unit_ = (pass_bytes_ + size + unit_ - 1) / unit_;
  }
  // Never past the end of the file, nor past the pass's `size` bytes (fio trims the last IO).
  *length = std::min({size, job_.size() - *offset, job_.size() - pass_bytes_});
  pass_bytes_ += *length;
}

void IoLoop::FillAndSubmit() {
  uint64_t now = NowNs();
  while (!free_.empty() && !stopping_ && (sync_due_ || !PassDone())) {
    if (stop_.load(std::memory_order_relaxed)) {
      stopping_ = true;
      break;
    }
    Slot* slot = free_.back();
    free_.pop_back();
    IoRequest& r = slot->request;
    r.file = file_;
    r.result = 0;
    slot->done = 0;
    slot->queued = false;
    slot->issue_ns = now;
    if (sync_due_) {
      // fio's fsync=N: a sync after every N issued writes, timed as its own direction.
      sync_due_ = false;
      r.op = IoOp::kFsync;
      r.buffer = nullptr;
      r.length = slot->length = 0;
      r.offset = slot->offset = 0;
      r.buffer_index = -1;
    } else {
      bool is_read;
      uint64_t offset, length;
      NextIo(&is_read, &offset, &length);
      r.op = is_read ? IoOp::kRead : IoOp::kWrite;
      r.buffer = slot->buffer;
      r.length = slot->length = length;
      r.offset = slot->offset = offset;
      r.buffer_index = static_cast<int>(r.tag);
      if (!is_read && job_.fsync_every() > 0 && ++writes_since_sync_ >= job_.fsync_every()) {
        writes_since_sync_ = 0;
        sync_due_ = true;
      }
    }
    Dispatch(slot);
    if (!slot->queued) now = NowNs();
  }
  if (!unsent_.empty()) {
    if (absl::Status s = engine_->Commit(); !s.ok()) {
      // Nothing was sent: the requests will never complete, so take the slots back.
      if (outcome_.status.ok()) outcome_.status = s;
      stopping_ = true;
      free_.insert(free_.end(), unsent_.begin(), unsent_.end());
      unsent_.clear();
      return;
    }
    const uint64_t submitted = NowNs();
    for (Slot* slot : unsent_) slot->submit_ns = submitted;
    in_flight_ += static_cast<uint32_t>(unsent_.size());
    unsent_.clear();
  }
}

JobThreadOutcome IoLoop::Run() {
  if (absl::Status s = Setup(); !s.ok()) {
    if (engine_ && file_ >= 0) (void)engine_->Close(file_);
    return JobThreadOutcome{std::move(s), Clock::now(), {}};
  }
  // The first pass starts cold before the clock runs; later passes drop the cache as they begin.
  bool go = (!job_.invalidate() || InvalidateFile()) && SleepUntil(plan_.start, stop_);
  for (bool first_pass = true; go; first_pass = false) {  // one pass over the file each
    if (!first_pass && job_.invalidate() && !InvalidateFile()) break;
    permutation_ = std::make_unique<BlockPermutation>(units_, rng_());
    next_unit_ = 0;
    pass_bytes_ = 0;
    while (true) {
      FillAndSubmit();
      if (in_flight_ == 0) {
        if (stopping_ || (PassDone() && !sync_due_)) break;
        continue;
      }
      auto reaped = engine_->Reap(1, absl::MakeSpan(reaped_));
      if (!reaped.ok()) {
        if (outcome_.status.ok()) outcome_.status = reaped.status();
        stopping_ = true;
        break;  // the engine is broken: nothing more can be reaped
      }
      const uint64_t now = NowNs();
      for (int i = 0; i < *reaped; ++i) {
        Slot* slot = &slots_[reaped_[i]->tag];
        --in_flight_;
        if (Complete(slot, now) == Next::kResubmit) Dispatch(slot);
      }
    }
    go = !stopping_ && job_.time_based();
  }
  outcome_.end = Clock::now();
  outcome_.notes = engine_->notes();
  if (absl::Status closed = engine_->Close(file_); !closed.ok() && outcome_.status.ok()) outcome_.status = closed;
  return std::move(outcome_);
}

}  // namespace

JobThreadOutcome RunJobThread(const JobThreadPlan& plan, const std::atomic<bool>& stop, ThreadStats* stats) {
  return IoLoop(plan, stop, stats).Run();
}

}  // namespace iofleet
