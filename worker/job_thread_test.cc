// One job thread end to end: a pass covers its file and counts every IO, mixes and runtime
// hold, an IO error names its file, every engine reaches its queue depth, and block sizes
// follow bs/bsrange per direction.
#include "worker/job_thread.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "job/block_sizes.h"
#include "worker/block_verify.h"
#include "worker/job_thread_test_util.h"

namespace iofleet {
namespace {

TEST(RunJobThread, RandomWritePassCoversTheFileAndCountsEveryIo) {
  v1::JobSpec job;
  job.set_iodepth(1);
  job.set_name("w");
  job.set_rw(v1::RAND_WRITE);
  SetFixedBlockSize(&job, 4096);
  job.set_size(1 << 20);
  job.set_ioengine("psync");
  job.set_fsync_every(16);
  const std::string path = TempFile("randwrite.dat");
  ThreadStats stats;
  StopSignal stop;
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .seed = 1, .start = std::chrono::steady_clock::now()}, stop, &stats);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(Of(stats.directions[kWriteIndex]).ops, 256u);
  EXPECT_EQ(Of(stats.directions[kWriteIndex]).bytes, 1u << 20);
  EXPECT_EQ(Of(stats.directions[kSyncIndex]).ops, 15u);  // as fio: none after the last write
  EXPECT_EQ(Of(stats.directions[kReadIndex]).ops, 0u);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  // Every block was written: no hole remains (blocks are random data, never all zero).
  std::vector<char> block(4096);
  int fd = ::open(path.c_str(), O_RDONLY);
  for (int b = 0; b < 256; ++b) {
    ASSERT_EQ(::pread(fd, block.data(), 4096, b * 4096), 4096);
    EXPECT_NE(std::count(block.begin(), block.end(), 0), 4096) << "block " << b << " never written";
  }
  ::close(fd);
}

TEST(RunJobThread, MixedWorkloadHonoursTheMixAndRuntime) {
  const std::string path = TempFile("mixed.dat");
  {
    int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    std::vector<char> data(1 << 20, 'x');
    ASSERT_EQ(::write(fd, data.data(), data.size()), 1 << 20);
    ::close(fd);
  }
  v1::JobSpec job;
  job.set_iodepth(1);
  job.set_name("m");
  job.set_rw(v1::RAND_MIXED);
  job.set_rwmix_read(75);
  SetFixedBlockSize(&job, 4096);
  job.set_size(1 << 20);
  job.set_ioengine("sync");
  job.set_time_based(true);
  job.set_runtime_ns(300'000'000);
  ThreadStats stats;
  StopSignal stop;
  const auto start = std::chrono::steady_clock::now();
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .seed = 2, .start = start}, stop, &stats);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  const double seconds = std::chrono::duration<double>(outcome.end - start).count();
  EXPECT_GE(seconds, 0.3);
  EXPECT_LT(seconds, 5.0);
  const double reads = Of(stats.directions[kReadIndex]).ops;
  const double writes = Of(stats.directions[kWriteIndex]).ops;
  ASSERT_GT(reads + writes, 1000);
  EXPECT_NEAR(reads / (reads + writes), 0.75, 0.05);
}

TEST(RunJobThread, IoErrorStopsTheThreadAndNamesTheFile) {
  v1::JobSpec job;
  job.set_iodepth(1);
  job.set_name("r");
  job.set_rw(v1::SEQ_READ);
  SetFixedBlockSize(&job, 4096);
  job.set_size(1 << 20);
  job.set_ioengine("psync");
  const std::string path = TempFile("short.dat");
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_EQ(::ftruncate(fd, 8192 + 100), 0);  // shorter than size: the third read is short
  ::close(fd);
  ThreadStats stats;
  StopSignal stop;
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .start = std::chrono::steady_clock::now()}, stop, &stats);
  ASSERT_FALSE(outcome.status.ok());
  EXPECT_NE(outcome.status.message().find("short.dat"), std::string::npos) << outcome.status;
  EXPECT_NE(outcome.status.message().find("offset 8192"), std::string::npos) << outcome.status;
  EXPECT_EQ(Of(stats.directions[kReadIndex]).errors, 1u);
  EXPECT_EQ(Of(stats.directions[kReadIndex]).ops, 3u);
}

class AsyncEngines : public ::testing::TestWithParam<std::string> {};

// A queue-depth pass through an asynchronous engine touches every block once, counts every
// IO, and records slat for queued requests; fsync=N still syncs after every N writes.
TEST_P(AsyncEngines, QueueDepthPassIsCompleteAndTimed) {
  v1::JobSpec job;
  job.set_iodepth(1);
  job.set_name("qd");
  job.set_rw(v1::RAND_WRITE);
  SetFixedBlockSize(&job, 4096);
  job.set_size(1 << 20);
  job.set_ioengine(GetParam());
  job.set_iodepth(16);
  job.set_fsync_every(32);
  const std::string path = TempFile("qd-" + GetParam() + ".dat");
  { int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644); ASSERT_EQ(::ftruncate(fd, 1 << 20), 0); ::close(fd); }
  ThreadStats stats;
  StopSignal stop;
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .seed = 3, .start = std::chrono::steady_clock::now()}, stop, &stats);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(Of(stats.directions[kWriteIndex]).ops, 256u);
  EXPECT_EQ(Of(stats.directions[kWriteIndex]).completions, 256u);
  EXPECT_EQ(Of(stats.directions[kWriteIndex]).bytes, 1u << 20);
  EXPECT_EQ(Of(stats.directions[kSyncIndex]).ops, 7u);  // as fio: none after the last write
  if (GetParam() != "mmap") {
    EXPECT_GT(Of(stats.directions[kWriteIndex]).submits, 0u) << "queued requests have a slat";
  }
  // Every block was written once: no block of the zero-filled file is left all zero.
  std::vector<char> block(4096);
  int fd = ::open(path.c_str(), O_RDONLY);
  for (int b = 0; b < 256; ++b) {
    ASSERT_EQ(::pread(fd, block.data(), 4096, b * 4096), 4096);
    EXPECT_NE(std::count(block.begin(), block.end(), 0), 4096) << "block " << b << " never written";
  }
  ::close(fd);
}

INSTANTIATE_TEST_SUITE_P(Engines, AsyncEngines, ::testing::Values("io_uring", "libaio", "mmap"));

TEST(RunJobThread, NullEngineAtDepthCountsEveryRequest) {
  v1::JobSpec job;
  job.set_iodepth(1);
  job.set_name("n");
  job.set_rw(v1::RAND_MIXED);
  job.set_rwmix_read(70);
  SetFixedBlockSize(&job, 4096);
  job.set_size(64 << 20);
  job.set_ioengine("null");
  job.set_iodepth(32);
  ThreadStats stats;
  StopSignal stop;
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {"(null)"}, .seed = 4, .start = std::chrono::steady_clock::now()}, stop, &stats);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  const double reads = Of(stats.directions[kReadIndex]).ops;
  const double writes = Of(stats.directions[kWriteIndex]).ops;
  EXPECT_EQ(reads + writes, 16384);
  EXPECT_NEAR(reads / (reads + writes), 0.70, 0.02);
  EXPECT_EQ(Of(stats.directions[kReadIndex]).bytes + Of(stats.directions[kWriteIndex]).bytes, 64u << 20);
}

TEST(RunJobThread, PerDirectionAndRangedBlockSizes) {
  v1::JobSpec job;
  job.set_iodepth(1);
  job.set_name("bs");
  job.set_rw(v1::RAND_MIXED);
  job.set_rwmix_read(50);
  job.set_size(4 << 20);
  job.set_ioengine("null");
  job.set_iodepth(4);
  job.mutable_read_bs()->set_min(4096);
  job.mutable_read_bs()->set_max(4096);
  job.mutable_write_bs()->set_min(4096);
  job.mutable_write_bs()->set_max(16384);
  job.mutable_trim_bs()->set_min(4096);
  job.mutable_trim_bs()->set_max(4096);
  ThreadStats stats;
  StopSignal stop;
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {"(null)"}, .seed = 5, .start = std::chrono::steady_clock::now()}, stop, &stats);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  const uint64_t reads = Of(stats.directions[kReadIndex]).ops;
  const uint64_t writes = Of(stats.directions[kWriteIndex]).ops;
  const uint64_t read_bytes = Of(stats.directions[kReadIndex]).bytes;
  const uint64_t write_bytes = Of(stats.directions[kWriteIndex]).bytes;
  // One pass is exactly `size` bytes.
  EXPECT_EQ(read_bytes + write_bytes, 4u << 20);
  // Reads are all 4 KiB (the last IO of the pass may be trimmed); writes average ~10 KiB.
  EXPECT_NEAR(static_cast<double>(read_bytes) / reads, 4096, 64);
  const double write_average = static_cast<double>(write_bytes) / writes;
  EXPECT_GT(write_average, 8000);
  EXPECT_LT(write_average, 12500);
}

// `n` threads that wait at `gate` saying they will meet, each running `body(t, its ticket)` once
// the gate opens.
template <typename Body>
std::vector<std::thread> MeetingTasks(StartGate* gate, int n, Body body) {
  std::vector<std::thread> tasks;
  for (int t = 0; t < n; ++t) {
    tasks.emplace_back([gate, t, body] {
      StartGate::Ticket ticket(gate);
      if (ticket.Wait(StartGate::Clock::now(), /*meets=*/true).has_value()) body(t, ticket);
    });
  }
  return tasks;
}

// mdtest's tasks leave the gate together: after the instant, a task that gets there late holds
// the others up until it arrives (a barrier, as mdtest's ranks start each phase from), and a
// stop lets them go without it.
TEST(StartGate, TasksThatMeetLeaveWithTheLastToArrive) {
  using Clock = StartGate::Clock;
  StartGate gate;
  StopSignal stop;
  std::atomic<int64_t> late_arrival_ns{0};
  std::vector<int64_t> left_ns(3, 0);
  std::vector<std::thread> tasks = MeetingTasks(&gate, 3, [&](int t, StartGate::Ticket& ticket) {
    if (t == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // held up past the instant
      late_arrival_ns = Clock::now().time_since_epoch().count();
    }
    ticket.Meet(stop);
    left_ns[t] = Clock::now().time_since_epoch().count();
  });
  // A thread that does not meet (an IO thread of the same run) is not waited for.
  std::thread other([&] {
    StartGate::Ticket ticket(&gate);
    ticket.Wait(Clock::now());
  });
  ASSERT_TRUE(gate.WaitArmed(4, std::chrono::seconds(10)));
  gate.Open(Clock::now());
  for (std::thread& t : tasks) t.join();
  other.join();
  for (int t = 0; t < 3; ++t) EXPECT_GE(left_ns[t], late_arrival_ns.load()) << "task " << t << " left before the last one arrived";

  // Stopped: a task waiting for one that never comes leaves.
  StartGate alone;
  std::thread waiting([&] {
    StartGate::Ticket ticket(&alone);
    ASSERT_TRUE(ticket.Wait(Clock::now(), /*meets=*/true).has_value());
    ticket.Meet(stop);
  });
  std::thread never_meets([&] {
    StartGate::Ticket ticket(&alone);
    ticket.Wait(Clock::now(), /*meets=*/true);  // (says it will, then ends without meeting)
  });
  ASSERT_TRUE(alone.WaitArmed(2, std::chrono::seconds(10)));
  alone.Open(Clock::now());
  never_meets.join();
  stop.Stop();
  waiting.join();  // would hang without the stop
}

// The CPU time the calling thread has used.
std::chrono::nanoseconds ThreadCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

// Across workers (OpenWhenArrived with a callback): the last task to arrive says so, once, and the gate stays
// shut until the release names an instant, which every waiter gets; a stop lets them go unstarted. The
// waiters sleep meanwhile, leaving the CPUs to the threads that bring the release.
TEST(StartGate, AReleasedGateOpensAtTheInstantItIsGiven) {
  using Clock = StartGate::Clock;
  StopSignal stop;
  StartGate gate;
  std::atomic<int> arrivals{0};
  gate.OpenWhenArrived(3, &stop, [&] { ++arrivals; });
  std::vector<std::optional<Clock::time_point>> got(3);
  std::vector<std::chrono::nanoseconds> waited_on_cpu(3);
  std::vector<std::thread> tasks;
  for (int t = 0; t < 3; ++t) {
    tasks.emplace_back([&, t] {
      StartGate::Ticket ticket(&gate);
      const std::chrono::nanoseconds before = ThreadCpuTime();
      got[t] = ticket.Wait(Clock::now(), /*meets=*/true);
      waited_on_cpu[t] = ThreadCpuTime() - before;
      ticket.Meet(stop);
    });
  }
  ASSERT_TRUE(gate.WaitArmed(3, std::chrono::seconds(10)));
  EXPECT_TRUE(gate.all_arrived());
  // Still shut 60 ms on (past the 20 ms an unreleased gate's waiters spin).
  const auto shut_until = Clock::now() + std::chrono::milliseconds(60);
  while (Clock::now() < shut_until && !gate.opened_at().has_value()) std::this_thread::yield();
  EXPECT_FALSE(gate.opened_at().has_value()) << "opened without a release";
  EXPECT_EQ(arrivals.load(), 1);
  const Clock::time_point instant = Clock::now() + std::chrono::milliseconds(5);
  gate.Open(instant);
  for (std::thread& t : tasks) t.join();
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(got[t], std::optional<Clock::time_point>(instant)) << "task " << t;
    // (Spinning, each took 13-20 ms of CPU of the 60 ms.)
    EXPECT_LT(waited_on_cpu[t], std::chrono::milliseconds(5)) << "task " << t << " spun while the release was awaited";
  }
  EXPECT_EQ(arrivals.load(), 1) << "the arrival is said once";

  StopSignal stopped;
  StartGate never;
  never.OpenWhenArrived(1, &stopped, [] {});
  std::optional<Clock::time_point> left = Clock::now();
  std::thread waiting([&] {
    StartGate::Ticket ticket(&never);
    left = ticket.Wait(Clock::now(), /*meets=*/true);
  });
  ASSERT_TRUE(never.WaitArmed(1, std::chrono::seconds(10)));
  stopped.Stop();
  waiting.join();  // would hang without the stop
  EXPECT_FALSE(left.has_value()) << "a stopped waiter does not start";
}

// What a task does after its clock (count what it made, remove the tree's directories) waits
// until every task that met has finished its timed work, so it never runs beside another's
// timed operations; a task that ends without saying so (an early return) counts as finished.
TEST(StartGate, TasksFinishTogetherBeforeTheirUntimedWork) {
  using Clock = StartGate::Clock;
  StartGate gate;
  StopSignal stop;
  std::atomic<int64_t> last_timed_end_ns{0};
  std::vector<int64_t> untimed_ns(3, 0);
  std::vector<std::thread> tasks = MeetingTasks(&gate, 4, [&](int t, StartGate::Ticket& ticket) {
    ticket.Meet(stop);
    if (t == 3) return;  // one that leaves without Finish (its ticket's destructor counts it)
    if (t == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the slow task's timed work
      last_timed_end_ns = Clock::now().time_since_epoch().count();
    }
    ticket.Finish(stop);
    untimed_ns[t] = Clock::now().time_since_epoch().count();
  });
  ASSERT_TRUE(gate.WaitArmed(4, std::chrono::seconds(10)));
  gate.Open(Clock::now());
  for (std::thread& t : tasks) t.join();  // would hang if the early leaver were not counted
  for (int t = 0; t < 3; ++t) EXPECT_GE(untimed_ns[t], last_timed_end_ns.load()) << "task " << t << " began its untimed work early";

  // Stopped: a task waiting at Finish for one still timed leaves.
  StartGate pair;
  std::atomic<bool> release{false};
  std::atomic<int> opened{0};
  std::vector<std::thread> two = MeetingTasks(&pair, 2, [&](int t, StartGate::Ticket& ticket) {
    ++opened;
    ticket.Meet(stop);
    if (t == 0) {
      ticket.Finish(stop);
    } else {  // still timed until released
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  ASSERT_TRUE(pair.WaitArmed(2, std::chrono::seconds(10)));
  pair.Open(Clock::now());
  stop.Stop();
  two[0].join();  // would hang without the stop
  release = true;
  two[1].join();
  EXPECT_EQ(opened.load(), 2) << "both passed the gate";
}

}  // namespace
}  // namespace iofleet
