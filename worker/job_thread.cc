#include "worker/job_thread.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <map>
#include <tuple>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errno_status.h"
#include "engines/engine_registry.h"
#include "job/block_sizes.h"
#include "worker/block_verify.h"
#include "worker/file_system.h"
#include "worker/random_offsets.h"

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
// generating offsets, sizes and directions as the job says, pacing them to its rate limits,
// and timing every request.
class IoLoop {
 public:
  IoLoop(const JobThreadPlan& plan, const std::atomic<bool>& stop, ThreadStats* stats)
      : plan_(plan), job_(*plan.job), stop_(stop), stats_(stats) {}

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
    size_t file_index = 0;
    bool queued = false;
    bool verify_read = false;  // reading back a block this job wrote (do_verify)
  };
  enum class Next { kDone, kResubmit };
  // A request the loop owes besides data IO.
  enum class Sync { kNone, kFsync, kFdatasync };

  absl::Status Setup();
  // Issues requests while slots, work and rate limits allow; then commits the batch.
  void FillAndSubmit();
  void Dispatch(Slot* slot);
  Next Complete(Slot* slot, uint64_t now_ns);
  void Fail(const Slot& slot, int error);
  bool InvalidateFile();
  // Waits for everything in flight (thinktime, end of pass).
  void Drain();
  // Issues one sync request and waits for it (end_fsync, fsync_on_close).
  void SyncNow();
  void ReapSome();

  // Work generation for the current pass: offsets are multiples of `unit_` (the smallest
  // block size) within [region_start_, region_start_ + size); a pass ends when io_size
  // (default size) bytes were issued.
  void NextIo(bool is_read, size_t* file_index, uint64_t* offset, uint64_t* length);
  bool DrawIsRead() { return mixed_ ? rng_() % 100 < job_.rwmix_read() : reads_; }
  void IssueSync(Slot* slot, IoOp op, size_t file_index, uint64_t now);
  void CommitBatch();
  // With holes (rw=write:4k) a pass ends at the end of the files, as in fio.
  bool PassDone() const {
    return pass_bytes_ >= pass_budget_ || (holes_ && exhausted_files_ == files_.size());
  }
  bool holes_ = false;
  size_t exhausted_files_ = 0;
  void PrepareWriteBuffer(Slot* slot);
  void FillBuffer(char* buffer, uint64_t length);
  // When the next IO in `direction` may be issued under the job's rate limits.
  uint64_t RateDue(int direction) const { return next_due_ns_[direction]; }
  void ChargeRate(int direction, uint64_t length);

  const JobThreadPlan& plan_;
  const v1::JobSpec& job_;
  const std::atomic<bool>& stop_;
  ThreadStats* const stats_;
  std::mt19937_64 rng_;
  JobThreadOutcome outcome_;

  // One of the thread's files: its handle, where sequential IO is, and its random offsets.
  struct File {
    std::string path;
    int handle = -1;
    uint64_t cursor = 0;
    uint64_t pass_bytes = 0;  // issued to this file in the current pass
    uint64_t last_end = 0;    // where the previous IO to this file ended
    uint64_t run_length = 0;  // IOs in a row since the last random offset (rw=randread:N)
    bool exhausted = false;   // sequential with holes (rw=write:4k): reached the end this pass
    std::unique_ptr<RandomOffsets> offsets;
    std::vector<std::pair<uint64_t, uint64_t>> written;  // (offset, length) this pass, for do_verify
  };
  // do_verify: reads back every block this pass wrote and checks it.
  void VerifyPass();
  void RecordVerifyFailure(const absl::Status& failure, const Slot& slot);
  // Picks the file for the next IO (fio file_service_type).
  File& NextFile();
  const std::string& PathOf(const Slot& slot) const { return files_[slot.file_index].path; }

  std::unique_ptr<IoEngine> engine_;
  std::vector<File> files_;
  size_t current_file_ = 0;
  uint64_t ios_on_current_file_ = 0;
  size_t last_write_file_ = 0;
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<void, AlignedFree>> buffers_;
  std::vector<Slot*> free_;       // slots ready for a new request
  std::vector<Slot*> unsent_;     // queued in the engine, not yet committed
  std::vector<IoRequest*> reaped_;
  uint32_t in_flight_ = 0;        // committed and not yet reaped

  uint64_t max_bs_ = 0, unit_ = 0, units_ = 0, file_size_ = 0;
  uint32_t submit_batch_ = 1, complete_min_ = 1, complete_max_ = 1;
  uint64_t region_start_ = 0, pass_bytes_ = 0, pass_budget_ = 0;
  bool reads_ = false, writes_ = false, random_ = false, mixed_ = false;
  uint64_t writes_since_fsync_ = 0, writes_since_fdatasync_ = 0;
  Sync sync_due_ = Sync::kNone;
  uint64_t ios_since_think_ = 0;
  bool think_due_ = false;
  bool stopping_ = false;
  // Verification: the generation written into headers (the pass), what to read back, results.
  bool track_writes_ = false;
  uint64_t generation_ = 0;
  uint64_t writes_sealed_ = 0;  // numbers each verified write, so a torn block can be told apart
  bool verifying_ = false;
  std::vector<std::tuple<size_t, uint64_t, uint64_t>> verify_queue_;  // (file, offset, length)
  size_t verify_next_ = 0;
  uint64_t verify_failures_ = 0;
  uint64_t continued_errors_ = 0;
  absl::Status first_continued_error_;
  absl::Status first_verify_failure_;
  uint64_t record_from_ns_ = 0;   // after ramp_time
  uint64_t deadline_ns_ = UINT64_MAX;
  // Rate limiting per direction (read, write): interval per IO or per byte, and the time the
  // next IO is due. Latency is measured from that due time (no coordinated omission).
  uint64_t next_due_ns_[2] = {0, 0};
  double ns_per_io_[2] = {0, 0}, ns_per_byte_[2] = {0, 0};
  bool rate_limited_ = false;
  int pending_direction_ = -1;  // drawn but held back by the rate limit (0 read, 1 write)
  std::exponential_distribution<double> poisson_{1.0};
};

absl::Status IoLoop::Setup() {
  // randrepeat=1 (fio's default): the same sequence every run, from randseed; otherwise new.
  const uint64_t base_seed = job_.randrepeat() ? job_.randseed() : std::random_device{}() ^ NowNs();
  rng_.seed(base_seed ^ plan_.seed);
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
  track_writes_ = writes_ && job_.verify() != v1::JobSpec::VERIFY_NONE && job_.do_verify();
  holes_ = !random_ && job_.rw_modifier() > 0 && job_.io_size() == 0;
  for (const std::string& path : plan_.paths) {
    auto handle = engine_->Open(path, OpenOptions{.read = reads_ || track_writes_,  // read-back needs reading
                                                  .write = writes_,
                                                  .create = writes_ || job_.create_on_open(),
                                                  .direct = job_.direct(),
                                                  .pattern = random_ ? AccessPattern::kRandom : AccessPattern::kSequential});
    if (!handle.ok()) return handle.status();
    files_.push_back(File{.path = path, .handle = *handle});
  }
  if (files_.empty()) return absl::InvalidArgumentError("a job thread needs at least one file");

  max_bs_ = MaxBlockSize(job_);
  unit_ = OffsetUnit(job_);
  submit_batch_ = job_.iodepth_batch_submit() ? std::min(job_.iodepth_batch_submit(), depth) : depth;
  complete_max_ = job_.iodepth_batch_complete_max() ? std::min(job_.iodepth_batch_complete_max(), depth) : depth;
  complete_min_ = std::clamp(job_.iodepth_batch_complete_min(), 1u, complete_max_);
  slots_.resize(depth);
  std::vector<std::pair<void*, uint64_t>> registered;
  for (uint32_t i = 0; i < depth; ++i) {
    void* raw = nullptr;
    if (::posix_memalign(&raw, 4096, max_bs_) != 0) return absl::ResourceExhaustedError("cannot allocate the IO buffers");
    buffers_.emplace_back(raw);
    FillBuffer(static_cast<char*>(raw), max_bs_);
    slots_[i].buffer = static_cast<char*>(raw);
    slots_[i].request.tag = i;
    registered.push_back({raw, max_bs_});
    free_.push_back(&slots_[i]);
  }
  if (absl::Status s = engine_->RegisterBuffers(registered); !s.ok()) return s;
  reaped_.resize(depth);
  unsent_.reserve(depth);
  region_start_ = job_.offset();
  file_size_ = FileSize(job_);
  units_ = file_size_ / unit_;
  for (File& f : files_) {
    f.offsets = std::make_unique<RandomOffsets>(job_.random_distribution(), units_, !job_.norandommap(), rng_());
  }
  pass_budget_ = job_.io_size() ? job_.io_size() : job_.size();

  for (int d = 0; d < 2; ++d) {
    if (d < job_.rate_iops_size() && job_.rate_iops(d) > 0) ns_per_io_[d] = 1e9 / static_cast<double>(job_.rate_iops(d));
    if (d < job_.rate_bytes_size() && job_.rate_bytes(d) > 0) ns_per_byte_[d] = 1e9 / static_cast<double>(job_.rate_bytes(d));
    rate_limited_ |= ns_per_io_[d] > 0 || ns_per_byte_[d] > 0;
  }
  return absl::OkStatus();
}

bool IoLoop::InvalidateFile() {
  for (const File& f : files_) {
    absl::Status dropped = engine_->Invalidate(f.handle);
    if (!dropped.ok()) {
      outcome_.status = absl::Status(dropped.code(), absl::StrCat(f.path, ": ", dropped.message()));
      return false;
    }
  }
  return true;
}

void IoLoop::Fail(const Slot& slot, int error) {
  const IoOp op = slot.request.op;
  const absl::Status failure =
      (op == IoOp::kFsync || op == IoOp::kFdatasync)
          ? ErrnoStatus(error, absl::StrCat(OpName(op), " of ", PathOf(slot)))
          : ErrnoStatus(error, absl::StrCat(OpName(op), " of ", slot.length, " bytes at offset ", slot.offset, " in ", PathOf(slot)));
  // fio's continue_on_error: counted (the stats already have it), reported, not fatal.
  const uint32_t kind = op == IoOp::kRead ? 1 : 2;
  if (job_.continue_on_error() & kind) {
    if (continued_errors_++ == 0) first_continued_error_ = failure;
    return;
  }
  stopping_ = true;
  if (outcome_.status.ok()) outcome_.status = failure;
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
  if (data && error == 0) {
    if (r.op == IoOp::kWrite && track_writes_) {
      files_[slot->file_index].written.emplace_back(slot->offset, slot->length);
    } else if (r.op == IoOp::kRead && job_.verify() != v1::JobSpec::VERIFY_NONE) {
      // A write job's own read-back expects this pass's generation; a read job takes any.
      absl::Status checked = CheckBlock(job_.verify(), slot->buffer, slot->length, slot->offset,
                                        slot->verify_read ? static_cast<int64_t>(generation_) : -1, PathOf(*slot));
      if (!checked.ok()) RecordVerifyFailure(checked, *slot);
    }
  }
  // During ramp_time IO runs but is not counted (fio ramp_time).
  if (slot->issue_ns >= record_from_ns_) {
    const DirectionIndex direction = !data ? kSyncIndex : r.op == IoOp::kRead ? kReadIndex : kWriteIndex;
    stats_->directions[direction].Record(
        slot->issue_ns, slot->submit_ns, now_ns, slot->queued, data ? slot->done : 0, error != 0,
        RequestIdentity{.offset = slot->offset, .file = static_cast<uint32_t>(slot->file_index), .tracked = true});
  }
  if (error != 0) Fail(*slot, error);
  if (now_ns >= deadline_ns_ && !verifying_) stopping_ = true;  // read-back is not cut short by runtime
  free_.push_back(slot);
  return Next::kDone;
}

IoLoop::File& IoLoop::NextFile() {
  if (files_.size() > 1) {
    const uint32_t every = std::max(1u, job_.file_service_switch());
    switch (job_.file_service()) {
      case v1::JobSpec::SEQUENTIAL:
        // Stay on a file until its share of the pass is issued.
        while (files_[current_file_].pass_bytes >= file_size_ && current_file_ + 1 < files_.size()) ++current_file_;
        break;
      case v1::JobSpec::RANDOM_FILE:
        if (ios_on_current_file_ >= every) {
          current_file_ = rng_() % files_.size();
          ios_on_current_file_ = 0;
        }
        break;
      case v1::JobSpec::ROUNDROBIN:
      default:
        if (ios_on_current_file_ >= every) {
          current_file_ = (current_file_ + 1) % files_.size();
          ios_on_current_file_ = 0;
        }
        break;
    }
  }
  ++ios_on_current_file_;
  return files_[current_file_];
}

void IoLoop::NextIo(bool is_read, size_t* file_index, uint64_t* offset, uint64_t* length) {
  const uint64_t size = PickBlockSize(job_, is_read, rng_());
  File* chosen = &NextFile();
  for (size_t i = 0; holes_ && chosen->exhausted && i < files_.size(); ++i) chosen = &files_[(current_file_ = (current_file_ + 1) % files_.size())];
  File& file = *chosen;
  *file_index = static_cast<size_t>(&file - files_.data());
  uint64_t position;  // within the file's region
  if (random_) {
    // rw=randread:N: N IOs in a row, then a new random offset.
    if (job_.rw_modifier() > 1 && file.run_length % job_.rw_modifier() != 0 && file.last_end < file_size_) {
      position = file.last_end;
    } else {
      position = file.offsets->Next(rng_) * unit_;
      file.run_length = 0;
    }
    ++file.run_length;
  } else {
    if (file.cursor >= file_size_) file.cursor = 0;  // io_size beyond size wraps around
    position = file.cursor;
  }
  // Never past the end of the region, nor past the pass's bytes (fio trims the last IO).
  *length = std::min({size, file_size_ - position, pass_budget_ - pass_bytes_});
  file.last_end = position + *length;
  // rw=write:4k: sequential with a hole of that many bytes after each IO.
  if (!random_) file.cursor = position + *length + job_.rw_modifier();
  if (holes_ && file.cursor >= file_size_ && !file.exhausted) {
    file.exhausted = true;
    ++exhausted_files_;
  }
  *offset = region_start_ + position;
  file.pass_bytes += *length;
  pass_bytes_ += *length;
}

void IoLoop::FillBuffer(char* buffer, uint64_t length) {
  if (job_.zero_buffers()) {
    std::memset(buffer, 0, length);
    return;
  }
  // Random, incompressible data, as fio writes by default; with buffer_compress_percentage,
  // each chunk ends in zeros so that it compresses to about that share.
  const uint64_t chunk = job_.buffer_compress_chunk() ? job_.buffer_compress_chunk() : 512;
  const uint64_t random_part = job_.buffer_compress_percentage() ? chunk * (100 - job_.buffer_compress_percentage()) / 100 : chunk;
  for (uint64_t start = 0; start < length; start += chunk) {
    const uint64_t end = std::min(length, start + chunk);
    const uint64_t random_end = std::min(end, start + random_part);
    for (uint64_t b = start; b < random_end; b += 8) {
      const uint64_t word = rng_();
      std::memcpy(buffer + b, &word, std::min<uint64_t>(8, random_end - b));
    }
    if (random_end < end) std::memset(buffer + random_end, 0, end - random_end);
  }
}

void IoLoop::PrepareWriteBuffer(Slot* slot) {
  if (job_.verify() != v1::JobSpec::VERIFY_NONE && slot->length >= kVerifyHeaderSize) {
    // The header and checksum make every block self-describing; the sector stamps keep blocks
    // distinct when the data pattern repeats and let a torn block be recognised.
    const BlockWriter writer{.job = plan_.job_index,
                             .worker = plan_.worker_index,
                             .thread = plan_.jobnum,
                             .seed = plan_.seed,
                             .generation = generation_,
                             .write_number = ++writes_sealed_};
    if (!job_.zero_buffers()) StampSectors(slot->buffer, slot->length, slot->offset, writer);
    SealBlock(job_.verify(), slot->buffer, slot->length, slot->offset, writer);
    return;
  }
  if (job_.zero_buffers()) return;
  if (job_.refill_buffers()) {
    FillBuffer(slot->buffer, slot->length);
  } else if (job_.scramble_buffers()) {
    // fio's scramble: the offset and a timestamp at the start of every 512-byte sector, so
    // deduplicating storage cannot fold repeated buffers away.
    for (uint64_t b = 0; b + 16 <= slot->length; b += 512) {
      const uint64_t words[2] = {slot->offset + b, slot->issue_ns};
      std::memcpy(slot->buffer + b, words, sizeof(words));
    }
  }
}

void IoLoop::ChargeRate(int direction, uint64_t length) {
  double gap = ns_per_io_[direction] + ns_per_byte_[direction] * static_cast<double>(length);
  if (gap <= 0) return;
  if (job_.rate_process() == v1::JobSpec::RATE_POISSON) gap *= poisson_(rng_);
  next_due_ns_[direction] += static_cast<uint64_t>(gap);
}

void IoLoop::FillAndSubmit() {
  uint64_t now = NowNs();
  // As in fio, a sync due after the pass's last write is not issued (end_fsync is for that).
  while (!free_.empty() && !stopping_ && !think_due_ && (verifying_ || !PassDone())) {
    if (stop_.load(std::memory_order_relaxed)) {
      stopping_ = true;
      break;
    }
    Slot* slot = free_.back();
    IoRequest& r = slot->request;
    if (verifying_) {
      if (verify_next_ >= verify_queue_.size()) break;
      const auto [file_index, offset, length] = verify_queue_[verify_next_++];
      free_.pop_back();
      r.op = IoOp::kRead;
      r.file = files_[file_index].handle;
      r.buffer = slot->buffer;
      r.length = slot->length = length;
      r.offset = slot->offset = offset;
      r.buffer_index = static_cast<int>(r.tag);
      r.result = 0;
      slot->file_index = file_index;
      slot->issue_ns = now;
      slot->done = 0;
      slot->queued = false;
      slot->verify_read = true;
      Dispatch(slot);
      if (!slot->queued) now = NowNs();
      if (unsent_.size() >= submit_batch_) CommitBatch();
      continue;
    }
    slot->verify_read = false;
    if (sync_due_ != Sync::kNone) {
      // fio's fsync=N / fdatasync=N: a sync after every N issued writes, timed as its own direction.
      const IoOp op = sync_due_ == Sync::kFsync ? IoOp::kFsync : IoOp::kFdatasync;
      sync_due_ = Sync::kNone;
      free_.pop_back();
      IssueSync(slot, op, last_write_file_, now);
      if (!slot->queued) now = NowNs();
      continue;
    }
    // The direction decides the rate limit; one held back stays drawn, so the mix is unbiased.
    if (pending_direction_ < 0) pending_direction_ = DrawIsRead() ? 0 : 1;
    const int direction = pending_direction_;
    if (rate_limited_) {
      if (next_due_ns_[direction] == 0) next_due_ns_[direction] = now;
      if (next_due_ns_[direction] > now) break;  // not due yet: the loop waits
      // Latency counts from when the IO was due, so a slow device cannot hide its backlog.
      slot->issue_ns = next_due_ns_[direction];
    } else {
      slot->issue_ns = now;
    }
    pending_direction_ = -1;
    const bool is_read = direction == 0;
    uint64_t offset, length;
    size_t file_index;
    NextIo(is_read, &file_index, &offset, &length);
    slot->file_index = file_index;
    if (rate_limited_) ChargeRate(direction, length);
    r.op = is_read ? IoOp::kRead : IoOp::kWrite;
    r.buffer = slot->buffer;
    r.length = slot->length = length;
    r.offset = slot->offset = offset;
    r.buffer_index = static_cast<int>(r.tag);
    if (!is_read) {
      last_write_file_ = file_index;
      PrepareWriteBuffer(slot);
      if (job_.fsync_every() > 0 && ++writes_since_fsync_ >= job_.fsync_every()) {
        writes_since_fsync_ = 0;
        sync_due_ = Sync::kFsync;
      } else if (job_.fdatasync_every() > 0 && ++writes_since_fdatasync_ >= job_.fdatasync_every()) {
        writes_since_fdatasync_ = 0;
        sync_due_ = Sync::kFdatasync;
      }
    }
    if (job_.thinktime_ns() > 0 && ++ios_since_think_ >= job_.thinktime_blocks()) {
      ios_since_think_ = 0;
      think_due_ = true;
    }
    free_.pop_back();
    r.file = files_[file_index].handle;
    r.result = 0;
    slot->done = 0;
    slot->queued = false;
    Dispatch(slot);
    if (!slot->queued) {
      now = NowNs();
      // fio's "IO depths" for a request completed at once: what was in flight, plus it.
      ThreadStats::Add(stats_->depth[DepthBucket(in_flight_ + 1)], 1);
    }
    // fio's iodepth_batch_submit: send once this many requests are queued.
    if (unsent_.size() >= submit_batch_) CommitBatch();
  }
  CommitBatch();
}

void IoLoop::IssueSync(Slot* slot, IoOp op, size_t file_index, uint64_t now) {
  IoRequest& r = slot->request;
  r.op = op;
  r.file = files_[file_index].handle;
  slot->file_index = file_index;
  r.result = 0;
  r.buffer = nullptr;
  r.length = slot->length = 0;
  r.offset = slot->offset = 0;
  r.buffer_index = -1;
  slot->issue_ns = now;
  slot->done = 0;
  slot->queued = false;
  Dispatch(slot);
}

void IoLoop::CommitBatch() {
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
    ThreadStats::Add(stats_->submit[BatchBucket(static_cast<uint32_t>(unsent_.size()))], 1);
    for (Slot* slot : unsent_) slot->submit_ns = submitted;
    in_flight_ += static_cast<uint32_t>(unsent_.size());
    // fio's "IO depths": the submitted requests count at the depth they brought the queue to.
    ThreadStats::Add(stats_->depth[DepthBucket(in_flight_)], unsent_.size());
    unsent_.clear();
  }
}

void IoLoop::ReapSome() {
  const int min = static_cast<int>(std::min(complete_min_, in_flight_));
  auto reaped = engine_->Reap(min, absl::MakeSpan(reaped_.data(), complete_max_));
  if (!reaped.ok()) {
    if (outcome_.status.ok()) outcome_.status = reaped.status();
    stopping_ = true;
    in_flight_ = 0;  // the engine is broken: nothing more can be reaped
    return;
  }
  const uint64_t now = NowNs();
  ThreadStats::Add(stats_->complete[BatchBucket(static_cast<uint32_t>(*reaped))], 1);
  for (int i = 0; i < *reaped; ++i) {
    Slot* slot = &slots_[reaped_[i]->tag];
    --in_flight_;
    if (Complete(slot, now) == Next::kResubmit) Dispatch(slot);
  }
  // Resubmitted remainders of short transfers go out now.
  CommitBatch();
}

void IoLoop::Drain() {
  while (in_flight_ > 0) ReapSome();
}

void IoLoop::RecordVerifyFailure(const absl::Status& failure, const Slot& slot) {
  ++verify_failures_;
  stats_->directions[kReadIndex].AddError();
  if (first_verify_failure_.ok()) first_verify_failure_ = failure;
  if (job_.verify_fatal()) {
    stopping_ = true;
    if (outcome_.status.ok()) outcome_.status = failure;
  }
  (void)slot;
}

void IoLoop::VerifyPass() {
  Drain();
  think_due_ = false;
  verify_queue_.clear();
  verify_next_ = 0;
  for (size_t f = 0; f < files_.size(); ++f) {
    // The last write to each offset is what the file must hold.
    std::map<uint64_t, uint64_t> latest;
    for (const auto& [offset, length] : files_[f].written) latest[offset] = length;
    for (const auto& [offset, length] : latest) verify_queue_.emplace_back(f, offset, length);
    files_[f].written.clear();
  }
  const bool was_stopping = stopping_;
  if (stop_.load(std::memory_order_relaxed) || !outcome_.status.ok()) return;  // stopped or failed: no read-back
  stopping_ = false;
  verifying_ = true;
  while (true) {
    FillAndSubmit();
    if (in_flight_ == 0) {
      if (verify_next_ >= verify_queue_.size() || stopping_) break;
      continue;
    }
    ReapSome();
  }
  verifying_ = false;
  stopping_ = stopping_ || was_stopping;
}

void IoLoop::SyncNow() {
  for (size_t i = 0; i < files_.size(); ++i) {
    Drain();
    if (free_.empty()) return;
    Slot* slot = free_.back();
    free_.pop_back();
    IssueSync(slot, IoOp::kFsync, i, NowNs());
    CommitBatch();
    Drain();
  }
}

JobThreadOutcome IoLoop::Run() {
  if (absl::Status s = Setup(); !s.ok()) {
    if (engine_) {
      for (const File& f : files_) (void)engine_->Close(f.handle);
    }
    return JobThreadOutcome{std::move(s), Clock::now(), {}};
  }
  const Clock::time_point job_start = plan_.start + std::chrono::nanoseconds(job_.startdelay_ns());
  const uint64_t start_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(job_start.time_since_epoch()).count());
  record_from_ns_ = start_ns + job_.ramp_time_ns();
  if (job_.runtime_ns()) deadline_ns_ = record_from_ns_ + job_.runtime_ns();
  // The first pass starts cold before the clock runs; later passes drop the cache as they begin.
  bool go = (!job_.invalidate() || InvalidateFile()) && SleepUntil(job_start, stop_);
  const uint32_t loops = std::max(1u, job_.loops());
  for (uint32_t pass = 0; go; ++pass) {  // one pass over the file each
    if (pass > 0 && job_.invalidate() && !InvalidateFile()) break;
    for (File& f : files_) {
      f.offsets->NewPass();
      f.cursor = 0;
      f.pass_bytes = 0;
      f.last_end = 0;
      f.run_length = 0;
      f.exhausted = false;
    }
    exhausted_files_ = 0;
    current_file_ = 0;
    ios_on_current_file_ = 0;
    pass_bytes_ = 0;
    while (true) {
      FillAndSubmit();
      if (think_due_) {
        // fio's thinktime: let what is in flight finish, then pause.
        Drain();
        think_due_ = false;
        if (!stopping_ && !SleepUntil(Clock::now() + std::chrono::nanoseconds(job_.thinktime_ns()), stop_)) stopping_ = true;
        continue;
      }
      if (in_flight_ == 0) {
        if (stopping_ || PassDone()) break;
        if (rate_limited_ && pending_direction_ >= 0) {
          // Idle until the held-back IO is due (or the job's time is up).
          const uint64_t now = NowNs();
          const uint64_t wake = std::min(next_due_ns_[pending_direction_], deadline_ns_);
          if (wake > now && !SleepUntil(Clock::now() + std::chrono::nanoseconds(wake - now), stop_)) stopping_ = true;
          if (NowNs() >= deadline_ns_) stopping_ = true;
        }
        continue;
      }
      ReapSome();
    }
    Drain();
    sync_due_ = Sync::kNone;
    if (job_.fsync_on_close() && writes_ && outcome_.status.ok()) SyncNow();
    go = !stopping_ && (job_.time_based() || pass + 1 < loops);
    // do_verify: read back what this pass wrote (for time_based runs, the last pass only).
    if (track_writes_ && (!job_.time_based() || !go)) VerifyPass();
    ++generation_;
  }
  if (continued_errors_ > 0 && outcome_.status.ok()) {
    outcome_.status = absl::Status(first_continued_error_.code(),
                                   absl::StrCat(continued_errors_, " IO error(s), continued (continue_on_error); first: ",
                                                first_continued_error_.message()));
  }
  if (verify_failures_ > 0 && outcome_.status.ok()) {
    outcome_.status = absl::DataLossError(absl::StrCat(verify_failures_, " block(s) failed verification; first: ",
                                                       first_verify_failure_.message()));
  }
  if (job_.end_fsync() && writes_ && outcome_.status.ok()) SyncNow();
  outcome_.end = Clock::now();
  outcome_.notes = engine_->notes();
  for (const File& f : files_) {
    if (absl::Status closed = engine_->Close(f.handle); !closed.ok() && outcome_.status.ok()) outcome_.status = closed;
    if (job_.unlink() && !(*FindEngine(job_.ioengine()))->diskless) {
      if (absl::Status removed = RemoveJobFile(f.path); !removed.ok() && outcome_.status.ok()) outcome_.status = removed;
    }
  }
  return std::move(outcome_);
}

}  // namespace

JobThreadOutcome RunJobThread(const JobThreadPlan& plan, const std::atomic<bool>& stop, ThreadStats* stats) {
  return IoLoop(plan, stop, stats).Run();
}

}  // namespace iofleet
