#include "worker/job_thread.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/confined_path.h"
#include "common/errno_status.h"
#include "engines/engine_registry.h"
#include "job/block_sizes.h"
#include "job/io_priority.h"
#include "job/run_limits.h"
#include "worker/async_verifier.h"
#include "worker/block_verify.h"
#include "worker/engine_queue.h"
#include "worker/latency_target.h"
#include "worker/file_system.h"
#include "worker/rate_pacer.h"
#include "worker/read_back.h"
#include "worker/thread_placement.h"
#include "worker/work_generator.h"
#include "worker/write_buffers.h"

namespace iofleet {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}


const char* OpName(IoOp op) {
  switch (op) {
    case IoOp::kRead: return "read";
    case IoOp::kWrite: return "write";
    case IoOp::kFsync: return "fsync";
    case IoOp::kFdatasync: return "fdatasync";
    case IoOp::kTrim: return "trim";
  }
  return "?";
}

// The IO loop of one thread: keeps up to iodepth requests in flight through the engine and
// times every one. What to issue comes from the WorkGenerator, what writes carry from the
// WriteBufferFiller, when from the RatePacer, and what to read back from ReadBack; the loop
// drives the engine (slots, batching, short transfers, errors) and runs the passes.
class IoLoop {
 public:
  IoLoop(const JobThreadPlan& plan, const StopSignal& stop, ThreadStats* stats);

  JobThreadOutcome Run();

 private:
  enum class Next { kDone, kResubmit };
  // A request the loop owes besides data IO.
  enum class Sync { kNone, kFsync, kFdatasync };
  // One of the thread's files as the engine knows it.
  struct File {
    std::string path;
    int handle = -1;
  };

  absl::Status Setup();
  // Issues requests while slots, work and rate limits allow; then commits the batch.
  void FillAndSubmit();
  // The next read-back request into `slot` (do_verify); false when none is left.
  bool IssueReadBack(Slot* slot, uint64_t now);
  // The next data request into `slot`; false when the rate limit holds it back.
  bool IssueData(Slot* slot, uint64_t now);
  void IssueSync(Slot* slot, IoOp op, size_t file_index, uint64_t now);
  // cmdprio: the priority of a data IO of `length` bytes, into `slot`.
  void PickPriority(Slot* slot, DataDirection direction, uint64_t length);
  // Points `slot`'s request at a block of `file_index` and hands it to the engine.
  void Send(Slot* slot, IoOp op, size_t file_index, uint64_t offset, uint64_t length);
  // Points `slot`'s request at a block of `file_index` (nothing sent).
  void Prepare(Slot* slot, IoOp op, size_t file_index, uint64_t offset, uint64_t length);
  void Dispatch(Slot* slot);
  void CommitBatch();
  // Reaps what completed, waiting for at least one (no longer than `timeout_ns` when >= 0).
  void ReapSome(int64_t timeout_ns = -1);
  // Waits for everything in flight (thinktime, end of pass).
  void Drain();
  Next Complete(Slot* slot, uint64_t now_ns);
  void Fail(const Slot& slot, int error);
  // A block that failed its check: counted, dumped (verify_dump), fatal with verify_fatal.
  void RecordVerifyFailure(size_t file_index, uint64_t offset, const char* data, uint64_t length, const absl::Status& failure);
  // verify_async: records what the verifier's threads found (on this thread).
  void CollectAsyncFailures();
  // fio verify_dump: writes the bad block (and what was expected, where known) beside its file.
  void DumpBlock(size_t file_index, uint64_t offset, const char* data, uint64_t length);
  // Carries out what the latency_target search asks (the IOs in flight finish first where it
  // changes the depth; see LatencyTargetSearch::Action).
  void OnLatencySearch(LatencyTargetSearch::Action action, uint64_t now_ns);
  bool InvalidateFiles();
  // do_verify: reads back every block this pass wrote and checks it.
  void VerifyPass();
  // Issues one sync request per file and waits for it (end_fsync, fsync_on_close).
  void SyncNow();
  const std::string& PathOf(const Slot& slot) const { return files_[slot.file_index].path; }
  // The clock for a completion: read every time, or once per kUntimedClockStride requests when
  // the job measures no latency at all (fio's gtod_reduce) and no rate limit needs it.
  uint64_t CompletionClock();

  const JobThreadPlan& plan_;
  const v1::JobSpec& job_;
  const StopSignal& stop_;
  ThreadStats* const stats_;
  JobThreadOutcome outcome_;
  std::mt19937_64 seeds_;  // seeds the parts below, in this order
  WorkGenerator work_;
  WriteBufferFiller write_buffers_;
  RatePacer pacer_;
  MinRateCheck min_rate_;
  ReadBack read_back_;

  std::unique_ptr<IoEngine> engine_;
  std::optional<EngineQueue> queue_;  // over engine_, once it exists
  std::vector<File> files_;
  size_t last_write_file_ = 0;

  uint64_t writes_since_fsync_ = 0, writes_since_fdatasync_ = 0;
  Sync sync_due_ = Sync::kNone;
  uint64_t ios_since_think_ = 0;
  uint64_t data_ios_issued_ = 0;  // for number_ios
  bool think_due_ = false;
  Flow* flow_ = nullptr;       // fio flow=: the flow this thread shares IOs in
  uint64_t flow_issued_ = 0;   // data IOs issued under it
  bool flow_held_ = false;     // ahead of its share: wait before the next IO
  std::optional<LatencyTargetSearch> latency_search_;  // fio latency_target
  bool latency_quiesce_ = false;  // the search lowered the depth or starts its final window
  bool stopping_ = false;
  const VerifyFormat verify_;
  const bool track_writes_;  // do_verify of a writing job: its writes are read back
  uint64_t generation_ = 0;  // the write pass, written into verify headers
  bool verifying_ = false;
  bool filled_ = false;  // fill_device: a write met ENOSPC
  IoPriorities priorities_;       // prioclass/prio, cmdprio_*
  std::mt19937_64 priority_rng_;  // draws cmdprio's percentages
  std::optional<AsyncVerifier> verifier_;  // verify_async
  uint32_t dumps_ = 0, dumps_failed_ = 0;  // verify_dump
  std::string first_dump_;
  uint64_t continued_errors_ = 0;
  absl::Status first_continued_error_;
  uint64_t start_ns_ = 0;         // the job's start (after startdelay)
  uint64_t record_from_ns_ = 0;   // after ramp_time
  uint64_t deadline_ns_ = UINT64_MAX;
  int pending_direction_ = -1;  // drawn but held back by the rate limit (0 read, 1 write, 2 trim)
  uint64_t completed_at_ns_ = 0;  // when Dispatch last saw a request complete at once
  const bool timed_;              // some latency is measured
  uint64_t untimed_completions_ = 0;
  uint64_t last_clock_ns_ = 0;
};

constexpr uint64_t kUntimedClockStride = 64;
constexpr int kIoprioWhoProcess = 1;  // linux/ioprio.h IOPRIO_WHO_PROCESS (with 0: this thread)

// randrepeat=1 (fio's default): the same sequences every run, from randseed; otherwise new.
// Each part draws from its own generator, seeded from this one in a fixed order.
uint64_t ThreadSeed(const JobThreadPlan& plan) {
  const v1::JobSpec& job = *plan.job;
  return (job.randrepeat() ? job.randseed() : std::random_device{}() ^ NowNs()) ^ plan.seed;
}

IoLoop::IoLoop(const JobThreadPlan& plan, const StopSignal& stop, ThreadStats* stats)
    : plan_(plan),
      job_(*plan.job),
      stop_(stop),
      stats_(stats),
      seeds_(ThreadSeed(plan)),
      work_(job_, plan.paths.size(), seeds_()),
      write_buffers_(job_, BlockWriter{.job = plan.job_index, .worker = plan.worker_index, .thread = plan.jobnum, .seed = plan.seed}, seeds_()),
      pacer_(job_, seeds_()),
      min_rate_(job_),
      read_back_(plan.paths.size()),
      verify_(VerifyFormat::Of(job_)),
      track_writes_(work_.writes() && job_.verify() != v1::JobSpec::VERIFY_NONE && job_.do_verify()),
      priority_rng_(seeds_()),
      timed_(!(job_.disable_lat() && job_.disable_clat() && job_.disable_slat()) || pacer_.limited()) {}

uint64_t IoLoop::CompletionClock() {
  if (timed_ || untimed_completions_++ % kUntimedClockStride == 0) last_clock_ns_ = NowNs();
  return last_clock_ns_;
}

absl::Status IoLoop::Setup() {
  const uint32_t depth = job_.iodepth();  // at least 1: validated (job/run_resolution.h)
  auto engine = CreateEngine(job_.ioengine(), EngineOptions{.iodepth = depth,
                                                             .hipri = job_.hipri(),
                                                             .fixedbufs = job_.fixedbufs(),
                                                             .registerfiles = job_.registerfiles(),
                                                             .sqthread_poll = job_.sqthread_poll(),
                                                             .atomic_writes = job_.atomic()});
  if (!engine.ok()) return engine.status();
  engine_ = std::move(*engine);
  for (const std::string& path : plan_.paths) {
    auto handle = engine_->Open(path, OpenOptions{.read = work_.reads() || track_writes_,  // read-back needs reading
                                                  .write = work_.writes() || work_.trims(),
                                                  .create = work_.writes() || job_.create_on_open(),
                                                  .direct = job_.direct(),
                                                  .pattern = work_.random() ? AccessPattern::kRandom : AccessPattern::kSequential});
    if (!handle.ok()) return handle.status();
    files_.push_back(File{.path = path, .handle = *handle});
  }
  if (files_.empty()) return absl::InvalidArgumentError("a job thread needs at least one file");
  // fio's prioclass/prio: the thread's IO priority (its IOs' too, unless cmdprio picks another).
  auto priorities = ResolveIoPriorities(job_);
  if (!priorities.ok()) return priorities.status();
  priorities_ = *std::move(priorities);
  if (priorities_.thread_priority && ::syscall(SYS_ioprio_set, kIoprioWhoProcess, 0, static_cast<int>(priorities_.default_ioprio)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("ioprio_set(class ", IoprioClass(priorities_.default_ioprio), ", level ",
                                           IoprioLevel(priorities_.default_ioprio), ") for prioclass/prio (realtime needs root)"));
  }
  if (job_.sprandom()) {
    if (absl::Status s = SprandomOffsets::Check(FileSize(job_) / std::max<uint64_t>(1, OffsetUnit(job_)), job_.spr_over_provisioning(), job_.spr_num_regions());
        !s.ok()) {
      return s;
    }
  }
  if (job_.zones().mode() == v1::ZoneSpec::ZBD) {
    if (plan_.zones == nullptr) return absl::InternalError("zonemode=zbd without the run's zone tables");
    for (size_t i = 0; i < files_.size(); ++i) {
      auto zones = plan_.zones->Get(files_[i].path, job_.zones(), job_.offset() + FileSize(job_));
      if (!zones.ok()) return zones.status();
      work_.UseZones(i, *zones);
    }
  }

  if (job_.verify_async() > 0 && verify_.kind != v1::JobSpec::VERIFY_NONE) {
    // Up to twice the bytes in flight wait for a checker; beyond that the IO thread checks.
    verifier_.emplace(job_.verify_async(), uint64_t{2} * job_.iodepth() * MaxBlockSize(job_), [this](const AsyncVerifier::Block& b) {
      return CheckBlock(verify_, b.data.data(), b.data.size(), b.offset, b.generation, files_[b.file_index].path,
                        b.writer ? &*b.writer : nullptr);
    });
  }
  queue_.emplace(engine_.get(), stats_);
  return queue_->Allocate(job_, MaxBlockSize(job_), [this](char* buffer, uint64_t length) { write_buffers_.Fill(buffer, length); });
}

bool IoLoop::InvalidateFiles() {
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
  // atomic=1 refused by the kernel: say why rather than leave a bare EINVAL.
  const std::string atomic_refused =
      job_.atomic() && op == IoOp::kWrite && (error == EINVAL || error == EOPNOTSUPP)
          ? " with RWF_ATOMIC (atomic=1): the kernel cannot write this block untorn here (it needs direct=1, a file system and device "
            "with atomic write support, and a block size and alignment within their limits: statx STATX_WRITE_ATOMIC)"
          : "";
  const std::string priority_refused =
      error == EPERM && IoprioClass(slot.ioprio) == 1 ? " (this IO's cmdprio is realtime, class 1: it needs CAP_SYS_ADMIN or CAP_SYS_NICE)" : "";
  const absl::Status failure =
      (op == IoOp::kFsync || op == IoOp::kFdatasync)
          ? ErrnoStatus(error, absl::StrCat(OpName(op), " of ", PathOf(slot)))
          : ErrnoStatus(error, absl::StrCat(OpName(op), " of ", slot.length, " bytes at offset ", slot.offset, " in ", PathOf(slot), atomic_refused, priority_refused));
  // fio's continue_on_error: a non-fatal error (EIO or EILSEQ, or what ignore_error lists for
  // the kind) is counted (the stats already have it) and reported, and the job goes on.
  const uint32_t kind = op == IoOp::kRead ? 1 : 2;  // a trim error counts as a write error
  const auto& listed = kind == 1 ? job_.ignore_read_errors() : job_.ignore_write_errors();
  const bool non_fatal = listed.empty() ? (error == EIO || error == EILSEQ)
                                        : std::find(listed.begin(), listed.end(), error) != listed.end();
  if ((job_.continue_on_error() & kind) && non_fatal) {
    if (continued_errors_++ == 0) first_continued_error_ = failure;
    return;
  }
  stopping_ = true;
  if (outcome_.status.ok()) outcome_.status = failure;
}

// Hands a prepared request to the engine; a request the engine completes at once is finished
// (or continued, if short) right here.
void IoLoop::Dispatch(Slot* slot) {
  while (queue_->Submit(slot)) {
    slot->submit_ns = slot->queued ? slot->submit_ns : slot->issue_ns;
    completed_at_ns_ = CompletionClock();
    if (Complete(slot, completed_at_ns_) == Next::kDone) return;
  }
}

IoLoop::Next IoLoop::Complete(Slot* slot, uint64_t now_ns) {
  IoRequest& r = slot->request;
  if (r.result == -EAGAIN || r.result == -EINTR) return Next::kResubmit;
  const bool data = r.op == IoOp::kRead || r.op == IoOp::kWrite || r.op == IoOp::kTrim;
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
  // fio's fill_device: the file system is full; the job is done (a write that got part of its
  // block in counts those bytes).
  if (error != 0 && (error == ENOSPC || error == EDQUOT) && r.op == IoOp::kWrite && job_.fill_device()) {
    error = 0;
    stopping_ = true;
    if (!filled_) outcome_.notes.push_back(absl::StrCat("fill_device: ", PathOf(*slot), " filled its file system at offset ", slot->offset + slot->done));
    filled_ = true;
  }
  if (data && error == 0 && slot->done == slot->length) {
    if (r.op == IoOp::kWrite && track_writes_) {
      read_back_.Wrote(slot->file_index, slot->offset, slot->length, slot->write_number, slot->generation);
    } else if (r.op == IoOp::kRead && job_.verify() != v1::JobSpec::VERIFY_NONE && (slot->verify_read || !work_.writes())) {
      // A write job's own read-back expects this pass's generation; a read job takes any. As in
      // fio, the reads of a job that also writes are checked only in its read-back.
      // fio's verify_write_sequence (on by default): a read-back finds this thread's last write.
      const bool own_sequence = slot->verify_read && !job_.verify_any_sequence();
      const int64_t generation = own_sequence ? static_cast<int64_t>(slot->generation) : -1;
      std::optional<BlockWriter> writer;
      if (own_sequence) {
        writer = write_buffers_.writer();
        writer->write_number = slot->write_number;
      }
      if (!verifier_ || !verifier_->Submit(slot->buffer, slot->length, slot->offset, slot->file_index, generation, writer)) {
        absl::Status checked = CheckBlock(verify_, slot->buffer, slot->length, slot->offset, generation, PathOf(*slot), writer ? &*writer : nullptr);
        if (!checked.ok()) RecordVerifyFailure(slot->file_index, slot->offset, slot->buffer, slot->length, checked);
      }
    }
  }
  // The stats' direction; for data, also the rate limits' (0 read, 1 write, 2 trim).
  const DirectionIndex direction = !data ? kSyncIndex : r.op == IoOp::kRead ? kReadIndex : r.op == IoOp::kWrite ? kWriteIndex : kTrimIndex;
  // During ramp_time IO runs but is not counted (fio ramp_time).
  if (slot->issue_ns >= record_from_ns_) {
    stats_->directions[direction].Record(
        slot->issue_ns, slot->submit_ns, now_ns, slot->queued, data ? slot->done : 0, error != 0,
        RequestIdentity{.offset = slot->offset, .file = static_cast<uint32_t>(slot->file_index), .tracked = true},
        data ? slot->priority_slot : -1);
  }
  if (error != 0) Fail(*slot, error);
  if (latency_search_ && data && error == 0 && !verifying_) {
    // fio counts total latency (issue to completion) against the target.
    OnLatencySearch(latency_search_->Completed(now_ns - slot->issue_ns, now_ns), now_ns);
    OnLatencySearch(latency_search_->Check(now_ns), now_ns);
  }
  if (data && error == 0 && min_rate_.active() && !verifying_ && slot->issue_ns >= record_from_ns_) {
    min_rate_.Completed(direction, slot->done);
    if (absl::Status met = min_rate_.Check(start_ns_, now_ns); !met.ok()) {
      stopping_ = true;
      if (outcome_.status.ok()) outcome_.status = met;
    }
  }
  if (now_ns >= deadline_ns_ && !verifying_) stopping_ = true;  // read-back is not cut short by runtime
  queue_->Release(slot);
  return Next::kDone;
}

void IoLoop::FillAndSubmit() {
  uint64_t now = NowNs();
  // A sync due after the job's last write is never issued (the pass loop drops it, as fio).
  while (queue_->HasFree() && !stopping_ && !think_due_ && !flow_held_ && !latency_quiesce_ && (verifying_ || !work_.PassDone()) &&
         (!latency_search_ || queue_->in_flight() < latency_search_->depth())) {
    if (stop_.stopped()) {
      stopping_ = true;
      break;
    }
    Slot* slot = queue_->NextFree();
    if (verifying_) {
      if (!IssueReadBack(slot, now)) break;
    } else if (sync_due_ != Sync::kNone) {
      // fio's fsync=N / fdatasync=N: a sync after every N issued writes, timed as its own direction.
      const IoOp op = sync_due_ == Sync::kFsync ? IoOp::kFsync : IoOp::kFdatasync;
      sync_due_ = Sync::kNone;
      queue_->Take();
      IssueSync(slot, op, last_write_file_, now);
    } else {
      if (flow_ && flow_->Ahead(flow_issued_, job_.flow())) {
        flow_held_ = true;
        break;
      }
      if (!IssueData(slot, now)) break;  // not due yet: the loop waits
      if (flow_) {
        flow_->Issued();
        ++flow_issued_;
      }
    }
    // A request completed at once: its completion's clock reading is the next one's issue
    // time (one clock read per request; the bookkeeping between counts as the next request's
    // latency, never less).
    if (!slot->queued) now = completed_at_ns_;
    // fio's iodepth_batch_submit: send once this many requests are queued.
    if (queue_->BatchFull()) CommitBatch();
  }
  CommitBatch();
}

bool IoLoop::IssueReadBack(Slot* slot, uint64_t now) {
  const std::optional<ReadBack::Block> block = read_back_.NextBlock();
  if (!block) return false;
  queue_->Take();
  slot->issue_ns = now;
  slot->verify_read = true;
  slot->ioprio = 0;
  slot->priority_slot = -1;
  slot->write_number = block->write_number;
  slot->generation = block->generation;
  Send(slot, IoOp::kRead, block->file_index, block->offset, block->length);
  return true;
}

bool IoLoop::IssueData(Slot* slot, uint64_t now) {
  // The direction decides the rate limit. As fio's rate_ddir: a mixed job whose drawn direction
  // is not due yet takes the other one if that is due, or is due sooner.
  if (pending_direction_ < 0) pending_direction_ = static_cast<int>(work_.DrawDirection());
  if (pacer_.limited()) {
    uint64_t due = pacer_.Due(pending_direction_, now);
    if (due > now && work_.mixes_both()) {
      const uint64_t other_due = pacer_.Due(1 - pending_direction_, now);
      if (other_due < due) {
        pending_direction_ = 1 - pending_direction_;
        due = other_due;
      }
    }
    if (due > now) return false;
    slot->issue_ns = due;  // latency counts from when the IO was due
  } else {
    slot->issue_ns = now;
  }
  const int direction = pending_direction_;
  pending_direction_ = -1;
  const DataDirection data_direction = static_cast<DataDirection>(direction);
  const std::optional<IoTarget> next = work_.Next(data_direction);
  if (!next) return false;  // zonemode=zbd: no zone can take it; the pass is over
  const IoTarget& target = *next;
  outcome_.zone_resets += target.zone_resets;
  if (pacer_.limited()) pacer_.Charge(direction, target.length);
  if (data_direction == DataDirection::kWrite) {
    last_write_file_ = target.file_index;
    write_buffers_.Prepare(slot->buffer, target.length, target.offset, slot->issue_ns, generation_);
    slot->write_number = write_buffers_.last_write_number();
    slot->generation = generation_;
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
  // fio's number_ios: the thread ends after that many data IOs.
  if (job_.number_ios() > 0 && ++data_ios_issued_ >= job_.number_ios()) stopping_ = true;
  queue_->Take();
  slot->verify_read = false;
  PickPriority(slot, data_direction, target.length);
  const uint32_t in_flight = queue_->in_flight();
  static constexpr IoOp kOps[] = {IoOp::kRead, IoOp::kWrite, IoOp::kTrim};
  if (data_direction == DataDirection::kTrim && job_.zones().mode() == v1::ZoneSpec::ZBD) {
    // fio's zbd_do_io_u_trim: on emulated zones a trim is the zone reset alone; nothing goes to
    // the file. It completes at once.
    Prepare(slot, IoOp::kTrim, target.file_index, target.offset, target.length);
    slot->request.result = static_cast<int64_t>(target.length);
    completed_at_ns_ = CompletionClock();
    slot->submit_ns = slot->issue_ns;
    Complete(slot, completed_at_ns_);
  } else {
    Send(slot, kOps[direction], target.file_index, target.offset, target.length);
  }
  // fio's "IO depths" for a request completed at once: what was in flight, plus it.
  if (!slot->queued) ThreadStats::Add(stats_->depth[DepthBucket(in_flight + 1)], 1);
  return true;
}

void IoLoop::PickPriority(Slot* slot, DataDirection direction, uint64_t length) {
  slot->ioprio = 0;
  slot->priority_slot = -1;
  if (priorities_.distinct.empty() || direction == DataDirection::kTrim) return;
  // fio's cmdprio: of the IOs a rule covers (its block size, or all), its share get its
  // priority; the rest get the job's.
  uint32_t chosen = priorities_.default_ioprio;
  const std::vector<IoPriorities::Rule>& rules = priorities_.rules[direction == DataDirection::kRead ? 0 : 1];
  // As fio, a direction without cmdprio rules keeps no per-priority latency.
  if (rules.empty()) {
    slot->ioprio = static_cast<uint16_t>(chosen);
    return;
  }
  const uint32_t draw = static_cast<uint32_t>(priority_rng_() % 100);
  uint32_t below = 0;
  for (const IoPriorities::Rule& rule : rules) {
    if (rule.block_size != 0 && rule.block_size != length) continue;
    below += rule.percent;
    if (draw < below) {
      chosen = rule.ioprio;
      break;
    }
  }
  slot->ioprio = static_cast<uint16_t>(chosen);
  slot->priority_slot = static_cast<int>(std::find(priorities_.distinct.begin(), priorities_.distinct.end(), chosen) - priorities_.distinct.begin());
}

void IoLoop::IssueSync(Slot* slot, IoOp op, size_t file_index, uint64_t now) {
  slot->issue_ns = now;
  slot->verify_read = false;
  Send(slot, op, file_index, 0, 0);  // (a sync carries no priority: only data IO does, Prepare)
}

void IoLoop::Send(Slot* slot, IoOp op, size_t file_index, uint64_t offset, uint64_t length) {
  Prepare(slot, op, file_index, offset, length);
  Dispatch(slot);
}

void IoLoop::Prepare(Slot* slot, IoOp op, size_t file_index, uint64_t offset, uint64_t length) {
  IoRequest& r = slot->request;
  const bool data = op == IoOp::kRead || op == IoOp::kWrite;
  r.op = op;
  r.file = files_[file_index].handle;
  r.buffer = data ? slot->buffer : nullptr;
  r.length = slot->length = length;
  r.offset = slot->offset = offset;
  r.buffer_index = data ? static_cast<int>(r.tag) : -1;
  r.ioprio = data ? slot->ioprio : 0;
  r.result = 0;
  slot->file_index = file_index;
  slot->done = 0;
  slot->queued = false;
}

void IoLoop::CommitBatch() {
  if (absl::Status s = queue_->Commit(); !s.ok()) {
    if (outcome_.status.ok()) outcome_.status = s;
    stopping_ = true;
  }
}

void IoLoop::ReapSome(int64_t timeout_ns) {
  absl::StatusOr<absl::Span<Slot* const>> completed = queue_->Reap(timeout_ns);
  if (!completed.ok()) {
    if (outcome_.status.ok()) outcome_.status = completed.status();
    stopping_ = true;
    return;
  }
  const uint64_t now = CompletionClock();
  for (Slot* slot : *completed) {
    if (Complete(slot, now) == Next::kResubmit) Dispatch(slot);
  }
  // Resubmitted remainders of short transfers go out now.
  CommitBatch();
  CollectAsyncFailures();
}

void IoLoop::Drain() {
  while (queue_->in_flight() > 0) ReapSome();
}

void IoLoop::RecordVerifyFailure(size_t file_index, uint64_t offset, const char* data, uint64_t length, const absl::Status& failure) {
  read_back_.Failed(failure);
  stats_->directions[kReadIndex].AddError();
  if (job_.verify_dump()) DumpBlock(file_index, offset, data, length);
  if (job_.verify_fatal()) {
    stopping_ = true;
    if (outcome_.status.ok()) outcome_.status = failure;
  }
}

void IoLoop::CollectAsyncFailures() {
  if (!verifier_) return;
  for (const auto& [block, failure] : verifier_->TakeFailures()) {
    RecordVerifyFailure(block.file_index, block.offset, block.data.data(), block.data.size(), failure);
  }
}

void IoLoop::DumpBlock(size_t file_index, uint64_t offset, const char* data, uint64_t length) {
  if (dumps_ >= kMaxVerifyDumps) return;
  ++dumps_;
  // fio's names: <file>.<offset>.received and .expected, here beside the file, within the
  // worker's roots like every file it makes.
  const std::string base = absl::StrCat(files_[file_index].path, ".", offset);
  auto write_file = [&](const std::string& path, const char* bytes, uint64_t n) {
    const int fd = OpenConfined(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    bool ok = fd >= 0;
    for (uint64_t done = 0; ok && done < n;) {
      const ssize_t w = ::write(fd, bytes + done, n - done);
      ok = w > 0;
      done += ok ? static_cast<uint64_t>(w) : 0;
    }
    if (fd >= 0) ::close(fd);
    return ok;
  };
  bool ok = write_file(base + ".received", data, length);
  if (const std::optional<std::string> expected = ExpectedBlock(verify_, data, length, offset); ok && expected) {
    ok = write_file(base + ".expected", expected->data(), expected->size());
  }
  if (!ok) {
    ++dumps_failed_;
  } else if (first_dump_.empty()) {
    first_dump_ = base + ".received";
  }
}

void IoLoop::OnLatencySearch(LatencyTargetSearch::Action action, uint64_t now_ns) {
  switch (action) {
    case LatencyTargetSearch::Action::kNone: return;
    case LatencyTargetSearch::Action::kQuiesce: latency_quiesce_ = true; return;
    case LatencyTargetSearch::Action::kStartFinalRun:
      // fio resets its stats for the final window: only its IOs are recorded.
      latency_quiesce_ = true;
      record_from_ns_ = now_ns;
      return;
    case LatencyTargetSearch::Action::kDone: stopping_ = true; return;
    case LatencyTargetSearch::Action::kFatal:
      stopping_ = true;
      if (outcome_.status.ok()) {
        outcome_.status = absl::DeadlineExceededError(absl::StrCat("an IO took longer than latency_target=",
                                                                   job_.latency_target_ns() / 1000, "us at queue depth 1 (latency_percentile=100)"));
      }
      return;
  }
}

void IoLoop::VerifyPass() {
  Drain();
  think_due_ = false;
  read_back_.StartReadBack();
  const bool was_stopping = stopping_;
  if (stop_.stopped() || !outcome_.status.ok()) return;  // stopped or failed: no read-back
  stopping_ = false;
  verifying_ = true;
  while (true) {
    FillAndSubmit();
    if (queue_->in_flight() == 0) {
      if (read_back_.AllIssued() || stopping_) break;
      continue;
    }
    ReapSome();
  }
  if (verifier_) verifier_->Drain();
  CollectAsyncFailures();
  verifying_ = false;
  stopping_ = stopping_ || was_stopping;
}

void IoLoop::SyncNow() {
  for (size_t i = 0; i < files_.size(); ++i) {
    Drain();
    if (!queue_->HasFree()) return;
    Slot* slot = queue_->NextFree();
    queue_->Take();
    IssueSync(slot, IoOp::kFsync, i, NowNs());
    CommitBatch();
    Drain();
  }
}

JobThreadOutcome IoLoop::Run() {
  StartGate::Ticket armed(plan_.start_gate);
  // Placed before Setup allocates the buffers, so they follow numa_mem_policy.
  absl::Status placed = PlaceThisThread(job_, plan_.jobnum);
  if (absl::Status s = placed.ok() ? Setup() : placed; !s.ok()) {
    if (engine_) {
      for (const File& f : files_) (void)engine_->Close(f.handle);
    }
    return JobThreadOutcome{std::move(s), Clock::now(), {}};
  }
  // Armed: wait for the instant (a run stopped before it starts ends here).
  const std::optional<Clock::time_point> run_start = armed.Wait(plan_.start);
  if (!run_start.has_value()) {
    for (const File& f : files_) (void)engine_->Close(f.handle);
    return JobThreadOutcome{absl::OkStatus(), Clock::now(), {}};
  }
  const Clock::time_point job_start = *run_start + std::chrono::nanoseconds(job_.startdelay_ns());
  start_ns_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(job_start.time_since_epoch()).count());
  record_from_ns_ = start_ns_ + job_.ramp_time_ns();
  if (job_.runtime_ns()) deadline_ns_ = record_from_ns_ + job_.runtime_ns();
  // The first pass starts cold before the clock runs; later passes drop the cache as they begin.
  bool go = (!job_.invalidate() || InvalidateFiles()) && stop_.SleepUntil(job_start);
  if (go) outcome_.start_late_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - job_start).count();
  if (go && LatencyTargetSearch::Wanted(job_)) {
    latency_search_.emplace(job_, NowNs());
    // The search's IOs are not recorded (fio resets its stats when it has found the depth):
    // the report is the final window's, at that depth.
    record_from_ns_ = UINT64_MAX;
  }
  // A flow counts its threads from their start (a later phase's job joins when it starts).
  if (go && plan_.flows && job_.flow() > 0) {
    flow_ = plan_.flows->Get(job_.flow_id());
    flow_->Join(job_.flow());
  }
  const uint32_t loops = std::max(1u, job_.loops());
  for (uint32_t pass = 0; go; ++pass) {  // one pass over the file each
    if (pass > 0 && job_.invalidate() && !InvalidateFiles()) break;
    outcome_.zone_resets += work_.NewPass();
    while (true) {
      FillAndSubmit();
      // fio's verify_backlog: every that many writes, read them back and check them.
      if (track_writes_ && job_.verify_backlog() > 0 && read_back_.pending() >= job_.verify_backlog() && !stopping_) {
        VerifyPass();
        continue;
      }
      if (think_due_) {
        // fio's thinktime: let what is in flight finish, then pause.
        Drain();
        think_due_ = false;
        if (!stopping_ && !stop_.SleepUntil(Clock::now() + std::chrono::nanoseconds(job_.thinktime_ns()))) stopping_ = true;
        continue;
      }
      if (latency_quiesce_) {
        Drain();
        latency_quiesce_ = false;
        continue;
      }
      if (flow_held_) {
        // fio's flow: ahead of its share. With flow_sleep, let what is in flight finish and
        // sleep; without, give the others the CPU and look again.
        flow_held_ = false;
        if (job_.flow_sleep_ns() > 0) {
          Drain();
          if (!stopping_ && !stop_.SleepUntil(Clock::now() + std::chrono::nanoseconds(job_.flow_sleep_ns()))) stopping_ = true;
        } else {
          ::sched_yield();
        }
        if (NowNs() >= deadline_ns_ || stop_.stopped()) stopping_ = true;
        continue;
      }
      if (queue_->in_flight() == 0) {
        if (stopping_ || work_.PassDone()) break;
        if (pacer_.limited() && pending_direction_ >= 0) {
          // Idle until the held-back IO is due (or the job's time is up).
          const uint64_t now = NowNs();
          const uint64_t wake = std::min(pacer_.Due(pending_direction_, now), deadline_ns_);
          if (wake > now && !stop_.SleepUntil(Clock::now() + std::chrono::nanoseconds(wake - now))) stopping_ = true;
          if (NowNs() >= deadline_ns_) stopping_ = true;
        }
        continue;
      }
      if (job_.io_submit_offload() && pacer_.limited() && pending_direction_ >= 0 && queue_->HasFree()) {
        // io_submit_mode=offload: the held-back IO goes out when due, not after a completion.
        const uint64_t now = NowNs();
        const uint64_t due = std::min(pacer_.Due(pending_direction_, now), deadline_ns_);
        ReapSome(due > now ? static_cast<int64_t>(due - now) : 0);
        if (NowNs() >= deadline_ns_) stopping_ = true;
        continue;
      }
      ReapSome();
    }
    Drain();
    // A pass that zonemode=zbd ended before any IO (nothing to read, no zone to write): more
    // passes would find the same.
    const bool no_zone_for_any_io = work_.ZonesExhausted();
    go = !stopping_ && !no_zone_for_any_io && (job_.time_based() || pass + 1 < loops);
    // As in fio, a sync due after the job's last write is not issued (end_fsync is for that);
    // one due at the end of a pass that another follows (loops, time_based) goes first in it:
    // fsync=1 with loops=3 over 256 blocks is 768 writes and 767 fsyncs, as fio's.
    if (!go) sync_due_ = Sync::kNone;
    if (job_.fsync_on_close() && work_.writes() && outcome_.status.ok()) SyncNow();
    // do_verify: read back what this pass wrote (for time_based runs, the last pass only).
    if (track_writes_ && (!job_.time_based() || !go)) VerifyPass();
    ++generation_;
  }
  // As in fio, errors the job continued past do not fail it; error_dump=0 leaves them to the
  // error counts.
  if (continued_errors_ > 0 && !job_.error_dump_off()) {
    outcome_.notes.push_back(absl::StrCat(continued_errors_, " IO error(s), continued (continue_on_error); first: ",
                                          first_continued_error_.ToString()));
  }
  if (verifier_) verifier_->Drain();
  CollectAsyncFailures();
  if (dumps_ > 0) {
    outcome_.notes.push_back(absl::StrCat("verify_dump: ", dumps_ - dumps_failed_, " bad block(s) written",
                                          first_dump_.empty() ? "" : absl::StrCat(" (first: ", first_dump_, ")"),
                                          dumps_failed_ > 0 ? absl::StrCat("; ", dumps_failed_, " could not be written (outside the worker's roots, or on NFS)") : "",
                                          dumps_ >= kMaxVerifyDumps ? absl::StrCat("; at most ", kMaxVerifyDumps, " per thread") : ""));
  }
  if (outcome_.status.ok()) outcome_.status = read_back_.Verdict();
  if (job_.end_fsync() && work_.writes() && outcome_.status.ok()) SyncNow();
  if (flow_) flow_->Leave(flow_issued_, job_.flow());
  outcome_.end = Clock::now();
  for (const std::string& note : engine_->notes()) outcome_.notes.push_back(note);
  if (latency_search_) outcome_.notes.push_back(latency_search_->Describe());
  for (const File& f : files_) {
    if (absl::Status closed = engine_->Close(f.handle); !closed.ok() && outcome_.status.ok()) outcome_.status = closed;
    if (job_.unlink() && !(*FindEngine(job_.ioengine()))->diskless) {
      if (absl::Status removed = RemoveJobFile(f.path); !removed.ok() && outcome_.status.ok()) outcome_.status = removed;
    }
  }
  return std::move(outcome_);
}

}  // namespace

JobThreadOutcome RunJobThread(const JobThreadPlan& plan, const StopSignal& stop, ThreadStats* stats) {
  if (plan.job->offset_increment() > 0 && plan.jobnum > 0) {
    // fio's offset_increment: this thread's share starts jobnum increments further in.
    v1::JobSpec shifted = *plan.job;
    shifted.set_offset(shifted.offset() + shifted.offset_increment() * plan.jobnum);
    JobThreadPlan own = plan;
    own.job = &shifted;
    return IoLoop(own, stop, stats).Run();
  }
  return IoLoop(plan, stop, stats).Run();
}

}  // namespace iofleet
