#include "worker/job_thread.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engines/engine_registry.h"

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

// Performs one request to completion through the engine, resubmitting the rest of a short
// transfer. Returns the final result (total bytes, or -errno).
int64_t Complete(IoEngine& engine, IoRequest& request) {
  const uint64_t wanted = request.length;
  const uint64_t offset = request.offset;
  char* const buffer = static_cast<char*>(request.buffer);
  uint64_t done = 0;
  while (true) {
    if (engine.Submit(&request) == SubmitResult::kQueued) {
      if (absl::Status s = engine.Commit(); !s.ok()) return -EIO;
      IoRequest* completed[1];
      auto n = engine.Reap(1, absl::MakeSpan(completed));
      if (!n.ok() || *n != 1) return -EIO;
    }
    if (request.result == -EAGAIN || request.result == -EINTR) continue;
    if (request.result < 0) return request.result;
    if (request.op == IoOp::kFsync || request.op == IoOp::kFdatasync) return request.result;
    done += static_cast<uint64_t>(request.result);
    if (done >= wanted) return static_cast<int64_t>(done);
    if (request.result == 0) return -ENODATA;  // end of file before the block was complete
    request.buffer = buffer + done;
    request.offset = offset + done;
    request.length = wanted - done;
  }
}

// fio's invalidate=1 for one pass; false (with the error in `outcome`) if it failed.
bool Invalidate(IoEngine& engine, int file, const std::string& path, JobThreadOutcome* outcome) {
  absl::Status dropped = engine.Invalidate(file);
  if (dropped.ok()) return true;
  outcome->status = absl::Status(dropped.code(), absl::StrCat(path, ": ", dropped.message()));
  return false;
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

JobThreadOutcome RunJobThread(const JobThreadPlan& plan, const std::atomic<bool>& stop,
                              ThreadStats* stats) {
  const v1::JobSpec& job = *plan.job;
  auto fail = [](absl::Status status) { return JobThreadOutcome{std::move(status), Clock::now()}; };

  auto engine_or = CreateEngine(job.ioengine(), EngineOptions{.iodepth = std::max(1u, job.iodepth())});
  if (!engine_or.ok()) return fail(engine_or.status());
  IoEngine& engine = **engine_or;
  const bool reads = Reads(job.rw());
  const bool writes = job.rw() != v1::SEQ_READ && job.rw() != v1::RAND_READ;
  auto file = engine.Open(plan.path, OpenOptions{.read = reads,
                                                 .write = writes,
                                                 .create = writes,
                                                 .direct = job.direct(),
                                                 .pattern = IsRandom(job.rw()) ? AccessPattern::kRandom : AccessPattern::kSequential});
  if (!file.ok()) return fail(file.status());

  void* raw = nullptr;
  if (::posix_memalign(&raw, 4096, job.block_size()) != 0) {
    return fail(absl::ResourceExhaustedError("cannot allocate the IO buffer"));
  }
  std::unique_ptr<void, AlignedFree> buffer(raw);
  std::mt19937_64 rng(plan.seed);
  // Random, incompressible data, as fio writes by default.
  for (uint64_t i = 0; i + 8 <= job.block_size(); i += 8) {
    const uint64_t word = rng();
    std::memcpy(static_cast<char*>(raw) + i, &word, 8);
  }

  const uint64_t blocks = job.size() / job.block_size();
  const bool random = IsRandom(job.rw());
  const bool mixed = IsMixed(job.rw());
  const uint64_t start_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(plan.start.time_since_epoch()).count());
  const uint64_t deadline_ns = job.runtime_ns() ? start_ns + job.runtime_ns() : UINT64_MAX;

  JobThreadOutcome outcome;
  // The first pass starts cold before the clock runs; later passes drop the cache as they begin.
  if ((job.invalidate() && !Invalidate(engine, *file, plan.path, &outcome)) || !SleepUntil(plan.start, stop)) {
    outcome.end = Clock::now();
    (void)engine.Close(*file);
    return outcome;
  }
  uint64_t writes_since_sync = 0;
  bool done = false;
  for (bool first_pass = true; !done; first_pass = false) {  // one pass over the file each
    if (!first_pass && job.invalidate() && !Invalidate(engine, *file, plan.path, &outcome)) break;
    BlockPermutation permutation(blocks, rng());
    for (uint64_t i = 0; i < blocks; ++i) {
      if (stop.load(std::memory_order_relaxed)) {
        done = true;
        break;
      }
      IoRequest request;
      request.file = *file;
      request.buffer = raw;
      request.length = job.block_size();
      const uint64_t offset = (random ? permutation.Next() : i) * job.block_size();
      request.offset = offset;
      bool is_read = reads;
      if (mixed) is_read = rng() % 100 < job.rwmix_read();
      request.op = is_read ? IoOp::kRead : IoOp::kWrite;

      const uint64_t begin = NowNs();
      const int64_t result = Complete(engine, request);
      const uint64_t end = NowNs();
      stats->directions[is_read ? kReadIndex : kWriteIndex].Record(
          end - begin, result > 0 ? static_cast<uint64_t>(result) : 0, result < 0);
      if (result < 0) {
        outcome.status = absl::ErrnoToStatus(
            static_cast<int>(-result),
            absl::StrCat(OpName(request.op), " of ", job.block_size(), " bytes at offset ", offset, " in ", plan.path));
        done = true;
        break;
      }
      if (!is_read && job.fsync_every() > 0 && ++writes_since_sync >= job.fsync_every()) {
        // fio's fsync=N: a sync after every N writes, timed as its own direction.
        writes_since_sync = 0;
        IoRequest sync;
        sync.op = IoOp::kFsync;
        sync.file = *file;
        const uint64_t sync_begin = NowNs();
        const int64_t sync_result = Complete(engine, sync);
        stats->directions[kSyncIndex].Record(NowNs() - sync_begin, 0, sync_result < 0);
        if (sync_result < 0) {
          outcome.status = absl::ErrnoToStatus(static_cast<int>(-sync_result), absl::StrCat("fsync of ", plan.path));
          done = true;
          break;
        }
      }
      if (end >= deadline_ns) {
        done = true;
        break;
      }
    }
    if (!job.time_based()) done = true;
  }
  outcome.end = Clock::now();
  if (absl::Status closed = engine.Close(*file); !closed.ok() && outcome.status.ok()) {
    outcome.status = closed;
  }
  return outcome;
}

}  // namespace iofleet
