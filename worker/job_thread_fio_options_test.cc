// fio's job options as one job thread carries them out: loops, startdelay/ramp_time, rates,
// thinktime, syncs, random maps, offset/io_size, buffers, verify, rw modifiers, queue depth,
// completion batches and blockalign, each checked on real files.
#include "worker/job_thread.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/fio_job_file.h"
#include "worker/work_generator.h"
#include "job/block_sizes.h"
#include "job/data_pattern.h"
#include "job/io_priority.h"
#include "worker/block_verify.h"
#include "worker/job_thread_test_util.h"

namespace iofleet {
namespace {

// Helpers for the fio-option tests below: a 4 KiB job of `rw` over `size` bytes on `engine`.
v1::JobSpec Job(v1::ReadWrite rw, uint64_t size, const std::string& engine) {
  v1::JobSpec job;
  job.set_name("opt");
  job.set_rw(rw);
  job.set_size(size);
  job.set_ioengine(engine);
  job.set_iodepth(1);
  job.set_loops(1);
  job.set_thinktime_blocks(1);
  job.set_randrepeat(true);
  SetFixedBlockSize(&job, 4096);
  return job;
}

struct Ran {
  JobThreadOutcome outcome;
  uint64_t reads, writes, syncs, bytes;
  double seconds;
};

Ran RunJob(const v1::JobSpec& job, const std::string& path, uint64_t seed = 1) {
  auto stats = std::make_unique<ThreadStats>();
  StopSignal stop;
  const auto start = std::chrono::steady_clock::now();
  Ran ran{RunJobThread({.job = &job, .paths = {path}, .seed = seed, .start = start}, stop, stats.get()), 0, 0, 0, 0, 0};
  ran.reads = Of(stats->directions[kReadIndex]).ops;
  ran.writes = Of(stats->directions[kWriteIndex]).ops;
  ran.syncs = Of(stats->directions[kSyncIndex]).ops;
  ran.bytes = Of(stats->directions[kReadIndex]).bytes + Of(stats->directions[kWriteIndex]).bytes;
  ran.seconds = std::chrono::duration<double>(ran.outcome.end - start).count();
  return ran;
}

// A file of `size` bytes filled with `fill`.
std::string FilledFile(const std::string& name, uint64_t size, char fill) {
  const std::string path = TempFile(name);
  std::vector<char> data(size, fill);
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  EXPECT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(size));
  ::close(fd);
  return path;
}

// How many 4 KiB blocks in [from, to) still hold only `fill`.
int UntouchedBlocks(const std::string& path, uint64_t from, uint64_t to, char fill) {
  std::vector<char> block(4096);
  int fd = ::open(path.c_str(), O_RDONLY);
  int untouched = 0;
  for (uint64_t off = from; off < to; off += 4096) {
    EXPECT_EQ(::pread(fd, block.data(), 4096, static_cast<off_t>(off)), 4096);
    untouched += std::count(block.begin(), block.end(), fill) == 4096;
  }
  ::close(fd);
  return untouched;
}

TEST(FioOptions, LoopsRepeatPasses) {
  v1::JobSpec job = Job(v1::RAND_READ, 1 << 20, "psync");
  job.set_loops(3);
  Ran ran = RunJob(job, FilledFile("loops", 1 << 20, 'x'));
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_EQ(ran.reads, 3u * 256);
}

TEST(FioOptions, StartdelayAndRampTime) {
  v1::JobSpec job = Job(v1::RAND_READ, 64 << 20, "null");
  job.set_startdelay_ns(200'000'000);
  job.set_ramp_time_ns(200'000'000);
  job.set_runtime_ns(300'000'000);
  job.set_time_based(true);
  job.add_rate_iops(1000);
  job.add_rate_iops(1000);
  Ran ran = RunJob(job, "(null)");
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_GE(ran.seconds, 0.7);  // 200 ms delay + 200 ms ramp + 300 ms measured
  // At 1000 IOPS only the 300 measured milliseconds count: ~300 IOs, not ~500.
  EXPECT_NEAR(static_cast<double>(ran.reads), 300, 40);
}

TEST(FioOptions, RateLimitsLinearPoissonAndBytes) {
  for (auto process : {v1::JobSpec::RATE_LINEAR, v1::JobSpec::RATE_POISSON}) {
    v1::JobSpec job = Job(v1::RAND_READ, 64 << 20, "null");
    job.set_runtime_ns(500'000'000);
    job.set_time_based(true);
    job.add_rate_iops(2000);
    job.add_rate_iops(0);
    job.set_rate_process(process);
    Ran ran = RunJob(job, "(null)");
    ASSERT_TRUE(ran.outcome.status.ok());
    EXPECT_NEAR(static_cast<double>(ran.reads), 1000, process == v1::JobSpec::RATE_LINEAR ? 60 : 200) << process;
  }
  v1::JobSpec job = Job(v1::SEQ_WRITE, 64 << 20, "null");
  job.set_runtime_ns(500'000'000);
  job.set_time_based(true);
  job.add_rate_bytes(0);
  job.add_rate_bytes(8 << 20);  // 8 MiB/s of 4 KiB writes: 2048 IOPS
  Ran ran = RunJob(job, "(null)");
  EXPECT_NEAR(static_cast<double>(ran.writes), 1024, 80);
}

// fio's rate_iops_min / rate_min: after the 2 s settle period, a rate below the minimum over a
// rate_cycle fails the job and says by how much; a rate above it runs to the end.
TEST(FioOptions, RateMinimumsFailAJobThatFallsBelow) {
  v1::JobSpec job = Job(v1::RAND_READ, 64 << 20, "null");
  job.set_runtime_ns(3'500'000'000);
  job.set_time_based(true);
  job.add_rate_iops(200);  // capped at 200 IOPS
  job.set_rate_cycle_ms(500);
  job.add_rate_iops_min(400);
  Ran slow = RunJob(job, "(null)");
  EXPECT_EQ(slow.outcome.status.code(), absl::StatusCode::kFailedPrecondition) << slow.outcome.status;
  EXPECT_NE(std::string(slow.outcome.status.message()).find("rate_iops_min=400 not met for reads"), std::string::npos)
      << slow.outcome.status;
  EXPECT_LT(slow.seconds, 3.2) << "stopped at the first cycle after the settle period";
  job.set_rate_iops_min(0, 100);
  job.set_runtime_ns(2'800'000'000);
  Ran fine = RunJob(job, "(null)");
  EXPECT_TRUE(fine.outcome.status.ok()) << fine.outcome.status;
  job.clear_rate_iops_min();
  job.add_rate_min_bytes(1 << 20);  // 1 MiB/s, against 200 x 4 KiB = 800 KiB/s
  Ran bytes = RunJob(job, "(null)");
  EXPECT_NE(std::string(bytes.outcome.status.message()).find("rate_min=1048576B/s not met for reads"), std::string::npos)
      << bytes.outcome.status;
}

// fio's flow.fio: two jobs of one flow with weights 1 and 8 issue about 1 IO to 8, whatever
// their own speeds (a write job beside a read job, as the example has), with and without
// flow_sleep.
TEST(FioOptions, FlowWeightsShareIosBetweenJobs) {
  for (const uint64_t sleep_ns : {uint64_t{0}, uint64_t{100'000}}) {
    FlowRegistry flows;
    v1::JobSpec light = Job(v1::SEQ_WRITE, 64 << 20, "null");
    v1::JobSpec heavy = Job(v1::RAND_READ, 64 << 20, "null");
    for (v1::JobSpec* job : {&light, &heavy}) {
      job->set_time_based(true);
      job->set_runtime_ns(400'000'000);
      job->set_flow_sleep_ns(sleep_ns);
    }
    light.set_flow(1);
    heavy.set_flow(8);
    auto light_stats = std::make_unique<ThreadStats>(), heavy_stats = std::make_unique<ThreadStats>();
    StopSignal stop;
    const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    std::thread a([&] { RunJobThread({.job = &light, .paths = {"(null)"}, .seed = 1, .start = start, .flows = &flows}, stop, light_stats.get()); });
    std::thread b([&] { RunJobThread({.job = &heavy, .paths = {"(null)"}, .seed = 2, .start = start, .flows = &flows}, stop, heavy_stats.get()); });
    a.join();
    b.join();
    const double writes = static_cast<double>(Of(light_stats->directions[kWriteIndex]).ops);
    const double reads = static_cast<double>(Of(heavy_stats->directions[kReadIndex]).ops);
    ASSERT_GT(writes, 50) << "sleep " << sleep_ns;
    EXPECT_NEAR(reads / writes, 8.0, 1.0) << reads << " reads, " << writes << " writes, sleep " << sleep_ns;
  }
}

// fio's io_submit_mode=offload: a rate-limited job sends each IO when it is due even with
// earlier ones in flight. Reads of a FIFO that a feeder fills with 4 reads' worth every 100 ms
// complete in bursts; at 40 IOPS, inline submission waits for each burst and sends three of every
// four IOs up to 75 ms late (their slat), offload sends them on time.
TEST(FioOptions, OffloadSubmitsOnTimeWhileIoIsInFlight) {
  const std::string fifo = TempFile("offload-fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);  // keeps the FIFO open; never blocks
  ASSERT_GE(writer, 0);
  for (const bool offload : {false, true}) {
    v1::JobSpec job = Job(v1::SEQ_READ, 64 << 20, "io_uring");
    job.set_iodepth(8);
    job.set_time_based(true);
    job.set_runtime_ns(600'000'000);
    job.add_rate_iops(40);
    job.set_io_submit_offload(offload);
    std::atomic<bool> done{false};
    std::thread feeder([&] {
      const std::vector<char> data(4 * 4096, 'f');
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (::write(writer, data.data(), data.size()) < 0) {
        }  // full: the reads have stopped
      }
    });
    auto stats = std::make_unique<ThreadStats>();
    StopSignal stop;
    JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {fifo}, .seed = 1, .start = std::chrono::steady_clock::now()}, stop, stats.get());
    done = true;
    feeder.join();
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    uint64_t slat_max = 0, reads = 0;
    for (const IntervalBuffer& b : stats->directions[kReadIndex].buffers) {
      slat_max = std::max(slat_max, b.submit_latency.Snapshot().max_ns());
      reads += b.latency.Snapshot().count();
    }
    EXPECT_GE(reads, 16u) << "offload " << offload;
    if (offload) {
      EXPECT_LT(slat_max, 35'000'000u) << "sent when due";
    } else {
      EXPECT_GT(slat_max, 55'000'000u) << "inline waits for the burst (up to 75 ms)";
    }
  }
  ::close(writer);
}

// fio's rate_ddir: a mixed job whose drawn direction is not due takes the other if it is due
// sooner. At rate=300,300 (one 4 KiB IO per 13.6 s each way) a 0.5 s randrw job issues exactly
// one read and one write, whichever it draws first (fio's exitwhat.fio fast jobs: 1 and 1).
TEST(FioOptions, MixedRateLimitedJobTakesTheDueDirection) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    v1::JobSpec job = Job(v1::RAND_MIXED, 64 << 20, "null");
    job.set_rwmix_read(50);
    job.set_time_based(true);
    job.set_runtime_ns(500'000'000);
    job.add_rate_bytes(300);
    job.add_rate_bytes(300);
    job.set_randseed(seed);
    Ran ran = RunJob(job, "(null)", seed);
    ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
    EXPECT_EQ(ran.reads, 1u) << "seed " << seed;
    EXPECT_EQ(ran.writes, 1u) << "seed " << seed;
  }
}

// The distinct 4 KiB blocks of some files.
std::set<std::string> DistinctBlocks(const std::vector<std::string>& paths) {
  std::set<std::string> blocks;
  for (const std::string& path : paths) {
    std::vector<char> block(4096);
    const int fd = ::open(path.c_str(), O_RDONLY);
    for (off_t off = 0; ::pread(fd, block.data(), 4096, off) == 4096; off += 4096) blocks.emplace(block.begin(), block.end());
    ::close(fd);
  }
  return blocks;
}

// fio's dedupe-global.fio: dedupe_percentage=50 makes about half the written blocks repeats —
// of the last new block (repeat), or of a working set of dedupe_working_set_percentage of the
// file (working_set), which dedupe_global shares between jobs.
TEST(FioOptions, DedupePercentageModesAndGlobalWorkingSet) {
  v1::JobSpec job = Job(v1::SEQ_WRITE, 4 << 20, "psync");  // 1024 blocks
  job.set_dedupe_percentage(50);
  Ran repeat = RunJob(job, TempFile("dedupe-repeat"));
  ASSERT_TRUE(repeat.outcome.status.ok()) << repeat.outcome.status;
  const size_t repeat_distinct = DistinctBlocks({TempFile("dedupe-repeat")}).size();
  EXPECT_NEAR(static_cast<double>(repeat_distinct), 512, 60) << "half new, half the last new one again";

  job.set_dedupe_mode(v1::JobSpec::DEDUPE_WORKING_SET);
  job.set_dedupe_working_set_percentage(10);  // 102 blocks
  for (const bool global : {false, true}) {
    job.set_dedupe_global(global);
    const std::string a = TempFile(global ? "dedupe-ga" : "dedupe-la"), b = TempFile(global ? "dedupe-gb" : "dedupe-lb");
    ASSERT_TRUE(RunJob(job, a, 1).outcome.status.ok());
    ASSERT_TRUE(RunJob(job, b, 2).outcome.status.ok());  // another thread: another seed
    const double each = static_cast<double>(DistinctBlocks({a}).size());
    EXPECT_NEAR(each, 512 + 102, 60) << "new blocks plus the working set's (global " << global << ")";
    const double both = static_cast<double>(DistinctBlocks({a, b}).size());
    EXPECT_NEAR(both, global ? 2 * 512 + 102 : 2 * (512 + 102), 80) << "global " << global << ": one working set or two";
  }
}

// fio's latency-profile.fio on a device that always meets the target (the null engine): the
// search doubles the depth up to iodepth, measures a final window there and ends the job long
// before its runtime, saying which depth it found; only the final window is recorded.
TEST(FioOptions, LatencyTargetSearchEndsAtTheDepthFound) {
  v1::JobSpec job = Job(v1::RAND_READ, 64 << 20, "null");
  job.set_iodepth(16);
  job.set_time_based(true);
  job.set_runtime_ns(20'000'000'000);
  job.set_latency_target_ns(1'000'000'000);
  job.set_latency_window_ns(30'000'000);
  job.set_latency_percentile(99.9);
  job.add_rate_iops(20'000);  // 600 IOs per window
  job.add_rate_iops(0);
  job.set_random_generator_lfsr(true);
  Ran ran = RunJob(job, "(null)");
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_LT(ran.seconds, 2.0) << "1, 2, 4, 8, 16, 16 and the final window: about 7 windows of 30 ms";
  ASSERT_FALSE(ran.outcome.notes.empty());
  EXPECT_EQ(ran.outcome.notes.back(), "latency_target: depth 16 (99.9% of IOs within 1e+06us over windows of 30ms)");
  // Only the final window (30 ms at 20,000 IOPS: ~600) is recorded, not the ~3,600 of the search.
  EXPECT_GT(ran.reads, 300u);
  EXPECT_LT(ran.reads, 1500u);
}

TEST(FioOptions, ThinktimePausesAfterEveryNBlocks) {
  v1::JobSpec job = Job(v1::RAND_READ, 64 << 20, "null");
  job.set_runtime_ns(400'000'000);
  job.set_time_based(true);
  job.set_thinktime_ns(20'000'000);
  job.set_thinktime_blocks(10);
  Ran ran = RunJob(job, "(null)");
  // 400 ms / 20 ms = ~20 pauses of 10 IOs each.
  EXPECT_GE(ran.reads, 150u);
  EXPECT_LE(ran.reads, 220u);
}

TEST(FioOptions, FdatasyncEndFsyncAndFsyncOnClose) {
  const std::string path = FilledFile("syncs", 1 << 20, 0);
  v1::JobSpec job = Job(v1::SEQ_WRITE, 1 << 20, "psync");
  job.set_fdatasync_every(4);
  EXPECT_EQ(RunJob(job, path).syncs, 63u);  // as fio: none after the last write
  job = Job(v1::SEQ_WRITE, 1 << 20, "io_uring");
  job.set_iodepth(8);
  job.set_end_fsync(true);
  EXPECT_EQ(RunJob(job, path).syncs, 1u);
  job.set_end_fsync(false);
  job.set_fsync_on_close(true);
  job.set_loops(2);
  EXPECT_EQ(RunJob(job, path).syncs, 2u);
}

TEST(FioOptions, NorandommapRepeatsOffsetsAndRandseedDecidesThem) {
  auto untouched = [](uint64_t seed, bool norandommap) {
    const std::string path = FilledFile("map", 1 << 20, 0);
    v1::JobSpec job = Job(v1::RAND_WRITE, 1 << 20, "psync");
    job.set_norandommap(norandommap);
    job.set_randseed(seed);
    Ran ran = RunJob(job, path);
    EXPECT_EQ(ran.writes, 256u);
    return UntouchedBlocks(path, 0, 1 << 20, 0);
  };
  EXPECT_EQ(untouched(7, false), 0);  // the random map visits every block once
  const int first = untouched(7, true);
  EXPECT_GT(first, 40);               // ~256/e blocks are never drawn with replacement
  EXPECT_EQ(untouched(7, true), first);  // randrepeat: same seed, same offsets
  EXPECT_NE(untouched(8, true), first);
}

TEST(FioOptions, OffsetIoSizeZeroBuffersAndUnlink) {
  const std::string path = FilledFile("region", 2 << 20, 'x');
  v1::JobSpec job = Job(v1::RAND_WRITE, 1 << 20, "psync");
  job.set_offset(1 << 20);
  job.set_zero_buffers(true);
  Ran ran = RunJob(job, path);
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_EQ(UntouchedBlocks(path, 0, 1 << 20, 'x'), 256);      // before the region: untouched
  EXPECT_EQ(UntouchedBlocks(path, 1 << 20, 2 << 20, 0), 256);  // the region: all zeros now

  job = Job(v1::SEQ_WRITE, 1 << 20, "psync");
  job.set_io_size(3 << 20);  // three times the region, wrapping around
  EXPECT_EQ(RunJob(job, path).bytes, 3u << 20);

  job.set_io_size(0);
  job.set_unlink(true);
  ASSERT_TRUE(RunJob(job, path).outcome.status.ok());
  struct stat st;
  EXPECT_NE(::stat(path.c_str(), &st), 0);
}

TEST(FioOptions, SeveralFilesPerThreadByServiceType) {
  for (auto service : {v1::JobSpec::ROUNDROBIN, v1::JobSpec::SEQUENTIAL, v1::JobSpec::RANDOM_FILE}) {
    std::vector<std::string> paths;
    for (int i = 0; i < 3; ++i) paths.push_back(FilledFile("nr" + std::to_string(service) + "_" + std::to_string(i), 256 << 10, 0));
    v1::JobSpec job = Job(v1::RAND_WRITE, 768 << 10, "psync");
    job.set_nrfiles(3);
    job.set_file_service(service);
    job.set_file_service_switch(1);
    auto stats = std::make_unique<ThreadStats>();
    StopSignal stop;
    JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = paths, .seed = 2, .start = std::chrono::steady_clock::now()}, stop, stats.get());
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(Of(stats->directions[kWriteIndex]).bytes, 768u << 10);
    if (service != v1::JobSpec::RANDOM_FILE) {
      // Round robin and sequential give every file its share: every block of each is written.
      for (const std::string& p : paths) EXPECT_EQ(UntouchedBlocks(p, 0, 256 << 10, 0), 0) << p << " service " << service;
    } else {
      int written = 0;
      for (const std::string& p : paths) written += UntouchedBlocks(p, 0, 256 << 10, 0) < 64;
      EXPECT_EQ(written, 3) << "random file choice still reaches every file";
    }
  }
}

TEST(FioOptions, VerifyReadsBackWhatWasWrittenAndFindsTheCorruptBlock) {
  for (auto kind : {v1::JobSpec::VERIFY_CRC32C, v1::JobSpec::VERIFY_MD5}) {
    const std::string path = FilledFile("verify" + std::to_string(kind), 1 << 20, 0);
    v1::JobSpec write = Job(v1::RAND_WRITE, 1 << 20, "io_uring");
    write.set_iodepth(8);
    write.set_verify(kind);
    write.set_do_verify(true);
    Ran ran = RunJob(write, path);
    ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
    EXPECT_EQ(ran.writes, 256u);
    EXPECT_EQ(ran.reads, 256u);  // every block read back and checked

    // Corrupt one byte of block 37 behind the job's back; a verifying read job names it.
    int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_EQ(::pwrite(fd, "X", 1, 37 * 4096 + 1000), 1);
    ::close(fd);
    v1::JobSpec read = Job(v1::SEQ_READ, 1 << 20, "psync");
    read.set_verify(kind);
    Ran checked = RunJob(read, path);
    EXPECT_EQ(checked.reads, 256u);  // not fatal: the whole file is checked
    ASSERT_FALSE(checked.outcome.status.ok());
    EXPECT_EQ(checked.outcome.status.code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(checked.outcome.status.message().find("1 block(s) failed verification"), std::string::npos) << checked.outcome.status;
    EXPECT_NE(checked.outcome.status.message().find("at offset 151552"), std::string::npos) << checked.outcome.status;
    read.set_verify_fatal(true);
    Ran fatal = RunJob(read, path);
    EXPECT_LT(fatal.reads, 256u);  // stopped at the bad block
    EXPECT_FALSE(fatal.outcome.status.ok());
  }
}

// surface-scan.fio's verify: verify=meta, verify_pattern=0xaa555aa5, verify_interval=512 on
// 64 KiB writes, then a read job that checks every interval: a wrong byte in one interval's
// pattern is found, and named by that interval's offset.
TEST(FioOptions, MetaVerifyWithPatternAndIntervalChecksEveryInterval) {
  const std::string path = FilledFile("surface", 1 << 20, 0);
  auto pattern = ParseDataPattern("0xaa555aa5", true);
  ASSERT_TRUE(pattern.ok());
  v1::JobSpec write = Job(v1::SEQ_WRITE, 1 << 20, "sync");
  SetFixedBlockSize(&write, 64 << 10);
  write.set_verify(v1::JobSpec::VERIFY_META);
  *write.mutable_verify_pattern() = *pattern;
  write.set_verify_interval(512);
  Ran ran = RunJob(write, path);
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_EQ(ran.writes, 16u);
  std::string contents(1 << 20, '\0');
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_EQ(::pread(fd, contents.data(), contents.size(), 0), static_cast<ssize_t>(contents.size()));
  // The data after each 80-byte header is the pattern, in fio's byte order.
  EXPECT_EQ(contents.substr(3 * 65536 + 5 * 512 + 80, 4), "\xaa\x55\x5a\xa5");
  EXPECT_EQ(contents.substr(1000, 4), "\xaa\x55\x5a\xa5");

  v1::JobSpec read = write;
  read.set_rw(v1::SEQ_READ);
  read.set_do_verify(true);
  Ran clean = RunJob(read, path);
  ASSERT_TRUE(clean.outcome.status.ok()) << clean.outcome.status;
  EXPECT_EQ(clean.reads, 16u);

  ASSERT_EQ(::pwrite(fd, "\x01", 1, 3 * 65536 + 5 * 512 + 300), 1);
  ::close(fd);
  Ran checked = RunJob(read, path);
  ASSERT_FALSE(checked.outcome.status.ok());
  EXPECT_THAT(std::string(checked.outcome.status.message()),
              ::testing::HasSubstr("verify (meta) of 512 bytes at offset 199168 in " + path + ": byte 300 of the block (file offset 199468) is 01, the pattern has aa"));
}

// verify_backlog=4: the job reads back every 4 writes as it goes, not only at the end of the
// pass. Stopped after 8 writes, it has already checked at least 4 blocks; without the backlog
// a stopped job has read nothing back.
TEST(FioOptions, VerifyBacklogChecksWritesAsTheJobGoes) {
  for (const uint32_t backlog : {4u, 0u}) {
    const std::string path = FilledFile("backlog" + std::to_string(backlog), 64 << 20, 0);
    v1::JobSpec job = Job(v1::SEQ_WRITE, 64 << 20, "psync");
    job.set_verify(v1::JobSpec::VERIFY_CRC32C);
    job.set_do_verify(true);
    job.set_verify_backlog(backlog);
    job.add_rate_iops(0);
    job.add_rate_iops(2000);  // 16,384 writes would take 8 s
    auto stats = std::make_unique<ThreadStats>();
    StopSignal stop;
    std::thread stopper([&] {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (Of(stats->directions[kWriteIndex]).ops < 8 && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      stop.Stop();
    });
    JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .seed = 1, .start = std::chrono::steady_clock::now()}, stop, stats.get());
    stopper.join();
    EXPECT_TRUE(outcome.status.ok()) << outcome.status;
    const uint64_t writes = Of(stats->directions[kWriteIndex]).ops, reads = Of(stats->directions[kReadIndex]).ops;
    EXPECT_GE(writes, 8u);
    EXPECT_LT(writes, 1000u);
    if (backlog > 0) {
      EXPECT_GE(reads, 4u) << writes << " writes";
      EXPECT_LE(reads, writes);
    } else {
      EXPECT_EQ(reads, 0u);
    }
  }
}

// A read-back finds this thread's last write to each block; a block another writer put there
// since is named (fio's verify_write_sequence), unless verify_write_sequence=0.
TEST(FioOptions, ReadBackNamesABlockOverwrittenByAnotherWriter) {
  const std::string path = FilledFile("sequence", 64 << 10, 0);
  v1::JobSpec job = Job(v1::SEQ_WRITE, 64 << 10, "psync");
  job.set_verify(v1::JobSpec::VERIFY_CRC32C);
  VerifyFormat format = VerifyFormat::Of(job);
  std::string block(4096, '\0');
  const BlockWriter mine{.job = 0, .worker = 0, .thread = 0, .seed = 7, .generation = 0, .write_number = 3};
  SealBlock(format, block.data(), block.size(), 8192, mine);
  EXPECT_TRUE(CheckBlock(format, block.data(), block.size(), 8192, 0, path, &mine).ok());
  BlockWriter later = mine;
  later.write_number = 5;
  EXPECT_THAT(std::string(CheckBlock(format, block.data(), block.size(), 8192, 0, path, &later).message()),
              ::testing::HasSubstr("found write 3 of this thread, expected its last one here, write 5"));
  BlockWriter other = mine;
  other.thread = 1;
  EXPECT_THAT(std::string(CheckBlock(format, block.data(), block.size(), 8192, 0, path, &other).message()),
              ::testing::HasSubstr("not by this thread (job 0, worker 0, thread 1): overwritten by another writer"));
  EXPECT_TRUE(CheckBlock(format, block.data(), block.size(), 8192, -1, path, nullptr).ok());
}

// verify_dump=1: the bad block goes to <file>.<offset>.received beside the file, and with a
// pattern what was expected to <file>.<offset>.expected; verify_async=2 finds the same block.
TEST(FioOptions, VerifyDumpWritesTheBadBlockAndAsyncVerifyFindsIt) {
  const std::string path = FilledFile("dump", 1 << 20, 0);
  auto pattern = ParseDataPattern("\"iofleet\"", true);
  ASSERT_TRUE(pattern.ok());
  v1::JobSpec write = Job(v1::SEQ_WRITE, 1 << 20, "psync");
  write.set_verify(v1::JobSpec::VERIFY_SHA256);
  *write.mutable_verify_pattern() = *pattern;
  ASSERT_TRUE(RunJob(write, path).outcome.status.ok());
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_EQ(::pwrite(fd, "X", 1, 37 * 4096 + 1000), 1);
  ::close(fd);
  for (const uint32_t threads : {0u, 2u}) {
    v1::JobSpec read = Job(v1::SEQ_READ, 1 << 20, "io_uring");
    read.set_iodepth(8);
    read.set_verify(v1::JobSpec::VERIFY_SHA256);
    *read.mutable_verify_pattern() = *pattern;
    read.set_verify_dump(true);
    read.set_verify_async(threads);
    Ran checked = RunJob(read, path);
    EXPECT_EQ(checked.reads, 256u);
    ASSERT_EQ(checked.outcome.status.code(), absl::StatusCode::kDataLoss) << checked.outcome.status;
    EXPECT_THAT(std::string(checked.outcome.status.message()), ::testing::HasSubstr("1 block(s) failed verification"));
    EXPECT_THAT(std::string(checked.outcome.status.message()), ::testing::HasSubstr("at offset 151552"));
    EXPECT_THAT(checked.outcome.notes, ::testing::Contains(::testing::HasSubstr("verify_dump: 1 bad block(s) written (first: " + path + ".151552.received)")));
    std::string received(4096, '\0'), expected(4096, '\0'), on_disk(4096, '\0');
    fd = ::open((path + ".151552.received").c_str(), O_RDONLY);
    ASSERT_EQ(::read(fd, received.data(), 4096), 4096);
    ::close(fd);
    fd = ::open((path + ".151552.expected").c_str(), O_RDONLY);
    ASSERT_EQ(::read(fd, expected.data(), 4096), 4096);
    ::close(fd);
    fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_EQ(::pread(fd, on_disk.data(), 4096, 37 * 4096), 4096);
    ::close(fd);
    EXPECT_EQ(received, on_disk);
    EXPECT_EQ(received[1000], 'X');
    EXPECT_EQ(expected[1000], "iofleet"[(1000) % 7]);
    int differences = 0;
    for (int i = 0; i < 4096; ++i) differences += received[i] != expected[i];
    EXPECT_EQ(differences, 1);  // only the byte changed behind the job's back
    ::unlink((path + ".151552.received").c_str());
    ::unlink((path + ".151552.expected").c_str());
  }
}

// offset_increment: thread N of the job starts N increments further in.
TEST(FioOptions, OffsetIncrementShiftsEachThread) {
  const std::string path = FilledFile("increment", 1 << 20, 0);
  v1::JobSpec job = Job(v1::SEQ_WRITE, 64 << 10, "psync");
  job.set_offset(4096);
  job.set_offset_increment(256 << 10);
  job.set_zero_buffers(false);
  auto stats = std::make_unique<ThreadStats>();
  StopSignal stop;
  JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .jobnum = 2, .seed = 1, .start = std::chrono::steady_clock::now()}, stop, stats.get());
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(UntouchedBlocks(path, 0, (512 << 10) + 4096, 0), (512 << 10) / 4096 + 1);
  EXPECT_EQ(UntouchedBlocks(path, (512 << 10) + 4096, (576 << 10) + 4096, 0), 0);
  EXPECT_EQ(UntouchedBlocks(path, (576 << 10) + 4096, 1 << 20, 0), ((1 << 20) - (576 << 10) - 4096) / 4096);
}

// fio's cmdprio-percentage.fio on a file: the thread runs at prioclass=3 (idle; ioprio_set, so
// the test thread that ran the job has it afterwards), and about 20% of its reads carry another
// class (best effort here: realtime needs CAP_SYS_ADMIN, which the test sandbox drops), each
// counted in its priority's completion latency.
TEST(FioOptions, CommandPrioritiesSplitTheReadsAndTheThreadGetsItsClass) {
  const std::string path = FilledFile("prio", 8 << 20, 1);
  v1::JobSpec job = Job(v1::RAND_READ, 8 << 20, "libaio");
  job.set_iodepth(8);
  job.set_prio_class(3);
  job.mutable_cmdprio()->add_percent(20);
  job.mutable_cmdprio()->add_priority_class(2);
  auto priorities = ResolveIoPriorities(job);
  ASSERT_TRUE(priorities.ok()) << priorities.status();
  ASSERT_EQ(priorities->distinct.size(), 2u);
  std::thread runner([&] {
    auto stats = std::make_unique<ThreadStats>(2);
    StopSignal stop;
    JobThreadOutcome outcome = RunJobThread({.job = &job, .paths = {path}, .seed = 5, .start = std::chrono::steady_clock::now()}, stop, stats.get());
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_EQ(::syscall(SYS_ioprio_get, 1, 0), static_cast<long>(IoprioValue(3, 0)));
    uint64_t by_priority[2] = {0, 0};
    for (const IntervalBuffer& b : stats->directions[kReadIndex].buffers) {
      for (int p = 0; p < 2; ++p) by_priority[p] += b.priority_completion[p].Snapshot().count();
    }
    EXPECT_EQ(by_priority[0] + by_priority[1], 2048u);
    EXPECT_NEAR(static_cast<double>(by_priority[1]) / 2048, 0.20, 0.04);
  });
  runner.join();
}

// fio's offsets for rw=read:-8k (examples/backwards-read.fio) with bs=4k over 64 KiB: block 0,
// then from 8 KiB below the end downwards, 4 KiB at a time (get_next_seq_offset).
TEST(FioOptions, BackwardsModifierFollowsFiosOffsets) {
  v1::JobSpec job = Job(v1::SEQ_READ, 64 << 10, "psync");
  job.set_rw_modifier(8192);
  job.set_rw_modifier_backwards(true);
  WorkGenerator generator(job, 1, 1);
  generator.NewPass();
  std::vector<uint64_t> offsets;
  while (!generator.PassDone()) offsets.push_back(generator.Next(DataDirection::kRead)->offset >> 10);
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0}));
}

// random_distribution=zoned:50/5:30/15:20/ (examples/rand-zones.fio): half the IOs in the first
// 5% of the range, 30% in the next 15%, the rest in the last 80%; zoned_abs by bytes.
// fio's sequence-distribution.fio: sequence:2,0,1 over 48k with io_size=24k reads blocks
// 2,0,1,2,0,1; with random_sequence_stride=1, 2,0,1,5,3,4 (fio's t/sequence.py expectations).
TEST(FioOptions, SequenceDistributionWithAndWithoutStride) {
  for (const bool stride : {false, true}) {
    v1::JobSpec job = Job(v1::RAND_READ, 48 << 10, "null");
    job.set_io_size(24 << 10);
    job.set_norandommap(true);
    job.mutable_random_distribution()->set_kind(v1::RandomDistribution::SEQUENCE);
    for (const uint64_t block : {2, 0, 1}) job.mutable_random_distribution()->add_sequence(block);
    job.set_random_sequence_stride(stride);
    WorkGenerator generator(job, 1, 1);
    generator.NewPass();
    std::vector<uint64_t> blocks;
    while (!generator.PassDone()) blocks.push_back(generator.Next(DataDirection::kRead)->offset / 4096);
    EXPECT_EQ(blocks, stride ? (std::vector<uint64_t>{2, 0, 1, 5, 3, 4}) : (std::vector<uint64_t>{2, 0, 1, 2, 0, 1}));
  }
  // Indices past the file wrap: block 13 of a 12-block file is block 1.
  v1::JobSpec job = Job(v1::RAND_READ, 48 << 10, "null");
  job.set_io_size(8 << 10);
  job.mutable_random_distribution()->set_kind(v1::RandomDistribution::SEQUENCE);
  job.mutable_random_distribution()->add_sequence(13);
  WorkGenerator generator(job, 1, 1);
  generator.NewPass();
  EXPECT_EQ(generator.Next(DataDirection::kRead)->offset, 4096u);
}

// zonemode=strided (fio's disk-zone-profile.fio): zonesize bytes, then on by zonerange +
// zoneskip, wrapping at the end. Blocks fio 3.33 read over a 1 MiB file, bs=4k, zonesize=64k,
// zoneskip=192k: zonerange=128k gives 0-15, 80-95, 160-175, 240-255, 0-15...; zonerange=32k
// reads each 32k range twice (0-7, 0-7, 56-63, 56-63...); random reads stay in each range.
TEST(FioOptions, StridedZonesFollowFiosOffsets) {
  auto blocks = [](const std::string& extra) {
    auto parsed = ParseFioJobText(absl::StrCat("[j]\nrw=read\nbs=4k\nsize=1m\nzonemode=strided\nzonesize=64k\nzoneskip=192k\n", extra), "s.fio");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    WorkGenerator generator(parsed->jobs(0), 1, 7);
    generator.NewPass();
    std::vector<uint64_t> out;
    while (!generator.PassDone()) out.push_back(generator.Next(DataDirection::kRead)->offset / 4096);
    return out;
  };
  auto run = [](uint64_t first, uint64_t count) {
    std::vector<uint64_t> v;
    for (uint64_t b = first; b < first + count; ++b) v.push_back(b);
    return v;
  };
  std::vector<uint64_t> expected;
  for (int round = 0; round < 4; ++round) {
    for (uint64_t start : {0, 80, 160, 240}) {
      for (uint64_t b : run(start, 16)) expected.push_back(b);
    }
  }
  EXPECT_EQ(blocks("zonerange=128k\n"), expected);
  const std::vector<uint64_t> narrow = blocks("zonerange=32k\n");
  ASSERT_EQ(narrow.size(), 256u);
  EXPECT_EQ(std::vector<uint64_t>(narrow.begin(), narrow.begin() + 32),
            (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 56, 57, 58, 59, 60, 61, 62, 63, 56, 57, 58, 59, 60, 61, 62, 63}));
  // Random: each 64k zone's 16 blocks once, in some order, zone after zone.
  const std::vector<uint64_t> random = blocks("rw=randread\n");
  ASSERT_EQ(random.size(), 256u);
  for (size_t zone = 0; zone < 16; ++zone) {
    std::vector<uint64_t> got(random.begin() + zone * 16, random.begin() + zone * 16 + 16);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, run((zone % 4) * 64, 16)) << "zone " << zone;
  }
}

TEST(FioOptions, ZonedDistributionsSendEachZoneItsShare) {
  auto shares = [](const std::string& distribution, uint64_t size, std::vector<uint64_t> bounds) {
    auto parsed = ParseFioJobText(absl::StrCat("[j]\nrw=randread\nsize=", size, "\nrandom_distribution=", distribution, "\n"), "zoned.fio");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    WorkGenerator generator(parsed->jobs(0), 1, 7);
    generator.NewPass();
    std::vector<double> share(bounds.size(), 0);
    constexpr int kDraws = 40000;
    for (int i = 0; i < kDraws; ++i) {
      const uint64_t offset = generator.Next(DataDirection::kRead)->offset;
      for (size_t z = 0; z < bounds.size(); ++z) {
        if (offset < bounds[z]) {
          share[z] += 1.0 / kDraws;
          break;
        }
      }
    }
    return share;
  };
  const uint64_t mib = 1 << 20;
  std::vector<double> zoned = shares("zoned:50/5:30/15:20/", 100 * mib, {5 * mib, 20 * mib, 100 * mib});
  EXPECT_NEAR(zoned[0], 0.50, 0.02);
  EXPECT_NEAR(zoned[1], 0.30, 0.02);
  EXPECT_NEAR(zoned[2], 0.20, 0.02);
  std::vector<double> absolute = shares("zoned_abs:60/1m:40/", 8 * mib, {1 * mib, 8 * mib});
  EXPECT_NEAR(absolute[0], 0.60, 0.02);
  EXPECT_NEAR(absolute[1], 0.40, 0.02);
  for (const char* bad : {"zoned:50/5:30/15", "zoned:60/5:50/95", "zoned:50/:50/", "zoned_abs:100/0", "zoned"}) {
    EXPECT_FALSE(ParseFioJobText(absl::StrCat("[j]\nrw=randread\nsize=1m\nrandom_distribution=", bad, "\n"), "bad.fio").ok()) << bad;
  }
}

TEST(FioOptions, RwModifiersCompressibleBuffersAndSizePercent) {
  // rw=write:4k: every other block; past the end the pass goes on from the start until size
  // bytes were written, as fio does (size=1m bs=4k: 256 writes, every other block twice).
  std::string path = FilledFile("holes", 1 << 20, 'x');
  v1::JobSpec job = Job(v1::SEQ_WRITE, 1 << 20, "psync");
  job.set_rw_modifier(4096);
  Ran ran = RunJob(job, path);
  ASSERT_TRUE(ran.outcome.status.ok()) << ran.outcome.status;
  EXPECT_EQ(ran.writes, 256u);
  EXPECT_EQ(ran.bytes, 1u << 20);
  EXPECT_EQ(UntouchedBlocks(path, 0, 1 << 20, 'x'), 128);

  // rw=randwrite:8: runs of 8 consecutive blocks; still every block once over the pass.
  path = FilledFile("runs", 1 << 20, 0);
  job = Job(v1::RAND_WRITE, 1 << 20, "psync");
  job.set_rw_modifier(8);
  ran = RunJob(job, path);
  EXPECT_EQ(ran.writes, 256u);
  EXPECT_LT(UntouchedBlocks(path, 0, 1 << 20, 0), 200);  // runs repeat some blocks, skip others

  // buffer_compress_percentage=60: about 60% of every written chunk is zeros.
  path = FilledFile("compress", 1 << 20, 'x');
  job = Job(v1::SEQ_WRITE, 1 << 20, "psync");
  job.set_buffer_compress_percentage(60);
  job.set_scramble_buffers(false);
  ASSERT_TRUE(RunJob(job, path).outcome.status.ok());
  std::vector<char> data(1 << 20);
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_EQ(::pread(fd, data.data(), data.size(), 0), 1 << 20);
  ::close(fd);
  const double zeros = static_cast<double>(std::count(data.begin(), data.end(), 0)) / data.size();
  EXPECT_NEAR(zeros, 0.60, 0.02);
}

TEST(ThreadStats, DepthBucketsAreFios) {
  EXPECT_EQ(DepthBucket(1), 0);
  EXPECT_EQ(DepthBucket(3), 1);
  EXPECT_EQ(DepthBucket(4), 2);
  EXPECT_EQ(DepthBucket(8), 3);
  EXPECT_EQ(DepthBucket(32), 5);
  EXPECT_EQ(DepthBucket(1000), 6);
  EXPECT_EQ(BatchBucket(0), 0);
  EXPECT_EQ(BatchBucket(4), 1);
  EXPECT_EQ(BatchBucket(5), 2);
  EXPECT_EQ(BatchBucket(64), 5);
  EXPECT_EQ(BatchBucket(65), 6);
}

TEST(FioOptions, QueueDepthIsReachedAndRecorded) {
  v1::JobSpec job = Job(v1::RAND_READ, 64 << 20, "null");
  job.set_iodepth(32);
  job.set_iodepth_batch_submit(32);
  auto stats = std::make_unique<ThreadStats>();
  StopSignal stop;
  ASSERT_TRUE(RunJobThread({.job = &job, .paths = {"(null)"}, .seed = 1, .start = std::chrono::steady_clock::now()}, stop, stats.get()).status.ok());
  // With batches of 32 the ring runs full: nearly every request is issued at depth 32..63.
  const double at_32 = static_cast<double>(stats->depth[5].load());
  double total = 0;
  for (auto& c : stats->depth) total += static_cast<double>(c.load());
  EXPECT_EQ(total, 16384);
  EXPECT_GT(at_32 / total, 0.9);
  EXPECT_GT(stats->submit[4].load(), 0u);  // 17-32 requests per submission
}

// The first `blocks` 4 KiB blocks of a file.
std::vector<std::string> Blocks(const std::string& path, int blocks) {
  std::vector<std::string> out;
  int fd = ::open(path.c_str(), O_RDONLY);
  for (int b = 0; b < blocks; ++b) {
    std::string block(4096, '\0');
    EXPECT_EQ(::pread(fd, block.data(), 4096, b * 4096), 4096);
    out.push_back(block);
  }
  ::close(fd);
  return out;
}

TEST(FioOptions, ScrambleAndRefillBuffers) {
  auto write = [](bool scramble, bool refill) {
    const std::string path = FilledFile("buffers" + std::to_string(scramble) + std::to_string(refill), 64 << 10, 0);
    v1::JobSpec job = Job(v1::SEQ_WRITE, 64 << 10, "psync");
    job.set_scramble_buffers(scramble);
    job.set_refill_buffers(refill);
    EXPECT_TRUE(RunJob(job, path).outcome.status.ok());
    return Blocks(path, 2);
  };
  auto plain = write(false, false);
  EXPECT_EQ(plain[0], plain[1]);  // one buffer, written twice
  auto scrambled = write(true, false);
  EXPECT_NE(scrambled[0].substr(0, 16), scrambled[1].substr(0, 16));   // offset + time stamped
  EXPECT_EQ(scrambled[0].substr(16, 400), scrambled[1].substr(16, 400));  // the rest unchanged
  auto refilled = write(false, true);
  EXPECT_NE(refilled[0].substr(100, 400), refilled[1].substr(100, 400));  // new data each time
}

TEST(FioOptions, CompletionBatchLimits) {
  v1::JobSpec job = Job(v1::RAND_READ, 16 << 20, "null");
  job.set_iodepth(32);
  job.set_iodepth_batch_submit(32);
  job.set_iodepth_batch_complete_max(4);
  auto stats = std::make_unique<ThreadStats>();
  StopSignal stop;
  ASSERT_TRUE(RunJobThread({.job = &job, .paths = {"(null)"}, .seed = 1, .start = std::chrono::steady_clock::now()}, stop, stats.get()).status.ok());
  EXPECT_GT(stats->complete[1].load(), 0u);
  for (int b = 2; b < kDepthBuckets; ++b) EXPECT_EQ(stats->complete[b].load(), 0u) << "reaped more than 4 at once";
}

}  // namespace
}  // namespace iofleet
