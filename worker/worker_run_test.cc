#include "worker/worker_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/block_sizes.h"
#include "worker/file_layout.h"

namespace iofleet {
namespace {


int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

v1::PrepareRequest MakeRequest(const std::string& dir) {
  v1::PrepareRequest request;
  request.set_run_id("r1");
  request.set_worker_index(3);
  request.set_worker_count(4);
  request.set_interval_ns(100'000'000);
  v1::JobSpec* job = request.mutable_spec()->add_jobs();
  job->set_name("reader");
  job->set_rw(v1::RAND_READ);
  SetFixedBlockSize(job, 4096);
  job->set_size(1 << 20);
  job->set_numjobs(2);
  job->set_iodepth(1);
  job->set_ioengine("psync");
  job->set_directory(dir);
  job->set_time_based(true);
  job->set_runtime_ns(450'000'000);
  return request;
}

TEST(FileLayout, PerWorkerPerThreadFilesFilledForReads) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/layout";
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  ASSERT_TRUE(policy.ok());
  auto layout = LayOutRunFiles(MakeRequest(dir), *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->paths[0].size(), 2u);
  EXPECT_EQ(layout->paths[0][1][0], dir + "/reader.w3.1.0");
  struct stat st;
  ASSERT_EQ(::stat(layout->paths[0][0][0].c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);
  EXPECT_GT(st.st_blocks * 512, 1 << 19);  // data, not a sparse hole
  EXPECT_TRUE(layout->response.files(0).laid_out());
  // A second layout finds the files ready.
  auto again = LayOutRunFiles(MakeRequest(dir), *policy);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->response.files(0).laid_out());
  // Outside the allowed roots: refused.
  auto outside = LayOutRunFiles(MakeRequest("/proc/iofleet"), *policy);
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kPermissionDenied);
}

// fio's lists: directory=a:b spreads the threads' generated files over the directories (thread
// k in directory k mod n), named files live in the first, and '\:' is a colon in a name.
TEST(FileLayout, DirectoryListsAndEscapedColonsAsFioReadsThem) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/lists";
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  ASSERT_TRUE(policy.ok());
  v1::PrepareRequest spread = MakeRequest(base + "/a:" + base + "/b");
  auto layout = LayOutRunFiles(spread, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->paths[0][0][0], base + "/a/reader.w3.0.0");
  EXPECT_EQ(layout->paths[0][1][0], base + "/b/reader.w3.1.0");
  v1::PrepareRequest escaped = MakeRequest(base + "/a");
  escaped.mutable_spec()->mutable_jobs(0)->set_filename("c\\:foo");
  layout = LayOutRunFiles(escaped, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->paths[0][0][0], base + "/a/c:foo");
  struct stat st;
  EXPECT_EQ(::stat((base + "/a/c:foo").c_str(), &st), 0);
}

// fio's filename_format names the generated files; $clientuid is the worker's index.
TEST(FileLayout, FilenameFormat) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/format";
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  v1::PrepareRequest request = MakeRequest(dir);
  request.mutable_spec()->mutable_jobs(0)->set_filename_format("myfiles.$clientuid.$jobnum.$filenum");
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->paths[0][0][0], dir + "/myfiles.3.0.0");
  EXPECT_EQ(layout->paths[0][1][0], dir + "/myfiles.3.1.0");
  struct stat st;
  EXPECT_EQ(::stat((dir + "/myfiles.3.1.0").c_str(), &st), 0);
}

// Every report of a started run, up to its final one (or 20 s); `ended`: whether it ended.
std::vector<v1::IntervalReport> Reports(WorkerRun& run, bool* ended) {
  std::vector<v1::IntervalReport> reports;
  *ended = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!*ended && std::chrono::steady_clock::now() < give_up) {
    v1::IntervalReport report;
    if (run.NextReport(std::chrono::milliseconds(100), &report, ended)) reports.push_back(report);
  }
  return reports;
}

// Lays out and runs `request` to its end: every report.
std::vector<v1::IntervalReport> RunToEnd(const v1::PrepareRequest& request, const PathPolicy& policy) {
  auto layout = LayOutRunFiles(request, policy);
  EXPECT_TRUE(layout.ok()) << layout.status();
  if (!layout.ok()) return {};
  WorkerRun run(request, std::move(*layout));
  EXPECT_TRUE(run.Start(WallNowNs() + 20'000'000).ok());
  bool ended = false;
  std::vector<v1::IntervalReport> reports = Reports(run, &ended);
  EXPECT_TRUE(ended);
  return reports;
}

// fio's gtod_reduce / disable_lat / disable_clat / disable_slat: the latency is not measured and
// not reported; every IO is still counted.
TEST(WorkerRun, DisabledLatenciesAreLeftOutAndIosStillCounted) {
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  for (const bool all : {true, false}) {
    v1::PrepareRequest request = MakeRequest(std::string(std::getenv("TEST_TMPDIR")) + "/untimed");
    v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
    job->set_ioengine("null");
    job->set_time_based(false);
    job->set_runtime_ns(0);
    job->set_size(64 << 20);  // 16,384 IOs of 4 KiB per thread
    job->set_disable_lat(all);
    job->set_disable_clat(all);
    job->set_disable_slat(true);
    uint64_t ops = 0, lat = 0, clat = 0, slowest = 0;
    for (const v1::IntervalReport& r : RunToEnd(request, *policy)) {
      for (const auto& d : r.directions()) {
        ops += d.ops();
        lat += d.latency().count();
        clat += d.completion_latency().count();
        slowest += d.slowest_size();
      }
    }
    EXPECT_EQ(ops, 2u * 16384) << "two threads, every IO counted (all=" << all << ")";
    EXPECT_EQ(lat, all ? 0 : ops);
    EXPECT_EQ(clat, all ? 0 : ops);
    if (all) {
      EXPECT_EQ(slowest, 0) << "no slowest requests without a latency";
    }
  }
}

// fio's exitwhat.fio: a job with number_ios stops after that many IOs, and with exitall its
// end stops the other jobs — of its reporting group (exit_what=group), or all of the run
// (stonewall, all) — which say why in their final reports.
TEST(WorkerRun, NumberIosAndExitall) {
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  for (const auto what : {v1::JobSpec::EXIT_GROUP, v1::JobSpec::EXIT_STONEWALL}) {
    v1::PrepareRequest request = MakeRequest(std::string(std::getenv("TEST_TMPDIR")) + "/exitall");
    v1::JobSpec* slow = request.mutable_spec()->mutable_jobs(0);
    slow->set_name("slow");
    slow->set_ioengine("null");
    slow->set_numjobs(1);
    slow->set_runtime_ns(2'000'000'000);
    slow->add_rate_iops(100);
    slow->set_number_ios(50);
    slow->set_exitall(true);
    slow->set_exit_what(what);
    v1::JobSpec* fast = request.mutable_spec()->add_jobs();
    *fast = *slow;
    fast->set_name("fast");
    fast->set_exitall(false);
    fast->set_number_ios(0);
    fast->clear_rate_iops();
    fast->set_new_group(true);  // its own reporting group
    const auto began = std::chrono::steady_clock::now();
    std::map<std::string, uint64_t> ops;
    std::map<std::string, std::string> notes;
    for (const v1::IntervalReport& r : RunToEnd(request, *policy)) {
      const std::string name = request.spec().jobs(static_cast<int>(r.job_index())).name();
      for (const auto& d : r.directions()) ops[name] += d.ops();
      for (const std::string& note : r.notes()) notes[name] += note;
    }
    EXPECT_EQ(ops["slow"], 50u) << "number_ios";
    if (what == v1::JobSpec::EXIT_GROUP) {
      EXPECT_EQ(notes["fast"], "") << "another group runs on";
      EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(1900));
    } else {
      EXPECT_EQ(notes["fast"], "stopped when job 'slow' ended (exitall, exit_what=stonewall)");
      EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(1500)) << "fast stopped after ~0.5 s, not 2 s";
    }
  }
}

// fio's steadystate.fio: a time_based job at a steady 2000 IOPS ends once iops:10% holds over
// its window (after the ramp), long before its runtime, and says so; one whose criterion cannot
// hold (a limit of 0) runs its time and says it was not attained.
TEST(WorkerRun, SteadyStateEndsTheJob) {
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  for (const double limit : {10.0, 0.0}) {
    v1::PrepareRequest request = MakeRequest(std::string(std::getenv("TEST_TMPDIR")) + "/steady");
    v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
    job->set_ioengine("null");
    job->set_runtime_ns(limit > 0 ? 8'000'000'000 : 1'500'000'000);
    job->add_rate_iops(1000);
    job->set_group_reporting(true);
    v1::SteadyState* ss = job->mutable_steadystate();
    ss->set_criterion(v1::SteadyState::IOPS);
    ss->set_limit(limit);
    ss->set_percent(true);
    ss->set_duration_ns(600'000'000);
    ss->set_ramp_ns(300'000'000);
    ss->set_check_interval_ns(200'000'000);
    const auto began = std::chrono::steady_clock::now();
    std::string notes;
    for (const v1::IntervalReport& r : RunToEnd(request, *policy)) {
      for (const std::string& note : r.notes()) notes += note + "\n";
    }
    const auto took = std::chrono::steady_clock::now() - began;
    if (limit > 0) {
      EXPECT_LT(took, std::chrono::seconds(4)) << notes;
      EXPECT_NE(notes.find("steady state (iops:10%) attained: largest deviation from the mean"), std::string::npos) << notes;
      // Two threads of 1000 IOPS, judged together (a sample may catch up a few late IOs).
      const size_t at = notes.find("over 3 samples of 0.2s, mean ");
      ASSERT_NE(at, std::string::npos) << notes;
      EXPECT_NEAR(std::strtod(notes.c_str() + at + 29, nullptr), 2000, 200) << notes;
    } else {
      EXPECT_GE(took, std::chrono::milliseconds(1400));
      EXPECT_NE(notes.find("steady state (iops:0%) not attained"), std::string::npos) << notes;
    }
  }
}

TEST(WorkerRun, IntervalsAreAlignedAndAddUpToTheFinalTotals) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/run";
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  v1::PrepareRequest request = MakeRequest(dir);
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok());
  WorkerRun run(request, std::move(*layout));
  const int64_t start = WallNowNs() + 50'000'000;
  ASSERT_TRUE(run.Start(start).ok());
  EXPECT_TRUE(run.Start(start).ok());           // idempotent
  EXPECT_FALSE(run.Start(start + 1).ok());      // but not for another instant
  bool ended = false;
  const std::vector<v1::IntervalReport> reports = Reports(run, &ended);
  ASSERT_TRUE(ended);
  ASSERT_GE(reports.size(), 4u);  // 450 ms at 100 ms intervals: 4 full + 1 final
  uint64_t ops = 0, bytes = 0;
  for (size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].interval_index(), i);
    EXPECT_EQ(reports[i].start_unix_ns(), start + static_cast<int64_t>(i) * 100'000'000);
    for (const auto& d : reports[i].directions()) {
      EXPECT_EQ(d.direction(), v1::READ);
      EXPECT_EQ(d.ops(), d.latency().count());
      ops += d.ops();
      bytes += d.bytes();
    }
  }
  EXPECT_TRUE(reports.back().final());
  EXPECT_GE(reports.back().elapsed_ns(), 450'000'000u);
  EXPECT_LT(reports.back().elapsed_ns(), 2'000'000'000u);
  EXPECT_GT(ops, 100u);
  EXPECT_EQ(bytes, ops * 4096);
}

// A start delivered twice (a controller retrying after a timeout) never runs the IO twice:
// a size-bounded job moves exactly its size once.
TEST(WorkerRun, DuplicateStartDoesNoDoubleIo) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/duplicate";
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  v1::PrepareRequest request = MakeRequest(dir);
  v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
  job->set_time_based(false);
  job->set_runtime_ns(0);
  job->set_rw(v1::SEQ_WRITE);
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  WorkerRun run(request, std::move(*layout));
  const int64_t start = WallNowNs() + 50'000'000;
  ASSERT_TRUE(run.Start(start).ok());
  ASSERT_TRUE(run.Start(start).ok());
  EXPECT_EQ(run.Start(start + 1).status().code(), absl::StatusCode::kFailedPrecondition);
  uint64_t bytes = 0;
  bool ended = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ended && std::chrono::steady_clock::now() < give_up) {
    v1::IntervalReport report;
    if (!run.NextReport(std::chrono::milliseconds(100), &report, &ended)) continue;
    for (const auto& d : report.directions()) bytes += d.bytes();
  }
  ASSERT_TRUE(ended);
  EXPECT_EQ(bytes, 2u << 20) << "two threads x 1 MiB, once";
}

TEST(WorkerRun, StopEndsIoPromptlyWithAReason) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/stop";
  auto policy = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  v1::PrepareRequest request = MakeRequest(dir);
  request.mutable_spec()->mutable_jobs(0)->set_runtime_ns(60'000'000'000);
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok());
  WorkerRun run(request, std::move(*layout));
  ASSERT_TRUE(run.Start(WallNowNs()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto stop_at = std::chrono::steady_clock::now();
  run.Stop("test says stop");
  v1::IntervalReport report, last;
  bool ended = false;
  while (!ended) {
    if (run.NextReport(std::chrono::milliseconds(100), &report, &ended)) last = report;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, std::chrono::seconds(2));
  EXPECT_TRUE(last.final());
  EXPECT_EQ(last.stop_reason(), "test says stop");
  EXPECT_EQ(last.stop_cause(), v1::STOP_CAUSE_REQUESTED);
}

// mdtest's phases back to back on one worker (RunSpec.jobs_in_sequence): two tasks under `dir`,
// 60 files each in a unique tree of 3 directories (-u -z 1 -b 2 -n 60 -w 100 -e 100 -N 1), one job per phase.
v1::PrepareRequest SequenceRequest(const std::string& dir, const std::vector<v1::MetadataPhase::Op>& ops) {
  v1::PrepareRequest request;
  request.set_run_id("sequence");
  request.set_worker_index(0);
  request.set_worker_count(1);
  request.set_interval_ns(1'000'000'000);
  request.mutable_spec()->set_source("mdtest");
  request.mutable_spec()->set_jobs_in_sequence(true);
  for (const v1::MetadataPhase::Op op : ops) {
    v1::JobSpec* job = request.mutable_spec()->add_jobs();
    job->set_name(absl::StrCat("phase ", request.spec().jobs_size(), " (", v1::MetadataPhase::Op_Name(op), ")"));
    job->set_numjobs(2);
    job->set_stonewall(true);
    v1::MetadataPhase* phase = job->mutable_metadata();
    phase->set_op(op);
    phase->add_test_dirs(dir);
    phase->set_task_count(2);
    phase->set_items_per_task(60);
    phase->set_depth(1);
    phase->set_branch(2);
    phase->set_unique_dir(true);
    phase->set_write_bytes(100);
    phase->set_read_bytes(100);
    phase->set_stride(1);  // -N 1: each task stats and reads the other's files
  }
  return request;
}

// Each job's final report, by job index (and every report's job index must name a job).
std::map<uint32_t, v1::IntervalReport> Finals(const std::vector<v1::IntervalReport>& reports, int jobs) {
  std::map<uint32_t, v1::IntervalReport> finals;
  for (const v1::IntervalReport& r : reports) {
    EXPECT_LT(r.job_index(), static_cast<uint32_t>(jobs));
    if (r.final()) {
      EXPECT_TRUE(finals.emplace(r.job_index(), r).second) << "two final reports of job " << r.job_index();
    }
  }
  return finals;
}

// Entries left in `dir` (recursively), "." and ".." aside.
size_t EntriesBelow(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    ++n;
  }
  return n;
}

using Op = v1::MetadataPhase;

// Each test's tree in a directory of its own beneath the allowed root.
class WorkerRunSequence : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/sequence-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0) << dir_;
    ASSERT_TRUE(policy_.ok()) << policy_.status();
  }
  // A run of `ops` whose jobs the test releases, as a controller would (RunSpec.jobs_released).
  std::unique_ptr<WorkerRun> ReleasedRun(const std::vector<v1::MetadataPhase::Op>& ops) {
    v1::PrepareRequest request = SequenceRequest(dir_, ops);
    request.mutable_spec()->set_jobs_released(true);
    auto layout = LayOutRunFiles(request, *policy_);
    EXPECT_TRUE(layout.ok()) << layout.status();
    return layout.ok() ? std::make_unique<WorkerRun>(request, std::move(*layout)) : nullptr;
  }
  absl::StatusOr<PathPolicy> policy_ = PathPolicy::Create({std::getenv("TEST_TMPDIR")});
  std::string dir_;
};

// Each phase starts when both tasks ended the one before: every stat, read and removal finds
// what the phase before made (no errors), each phase counts its own items and its own time.
TEST_F(WorkerRunSequence, PhasesFollowEachOtherOnEveryTask) {
  const std::vector<Op::Op> ops = {Op::TREE_CREATE, Op::FILE_CREATE, Op::FILE_STAT, Op::FILE_READ, Op::FILE_REMOVE, Op::TREE_REMOVE};
  const std::vector<v1::IntervalReport> reports = RunToEnd(SequenceRequest(dir_, ops), *policy_);
  const std::map<uint32_t, v1::IntervalReport> finals = Finals(reports, static_cast<int>(ops.size()));
  ASSERT_EQ(finals.size(), ops.size());
  for (const auto& [j, final] : finals) {
    SCOPED_TRACE(absl::StrCat("job ", j));
    EXPECT_EQ(final.error(), "");
    EXPECT_EQ(final.stop_reason(), "");
    EXPECT_GT(final.elapsed_ns(), 0u);
    EXPECT_LT(final.elapsed_ns(), 10'000'000'000u);
    ASSERT_EQ(final.task_items_size(), 2);
    ASSERT_EQ(final.task_elapsed_ns_size(), 2);
    for (int t = 0; t < 2; ++t) EXPECT_LE(final.task_elapsed_ns(t), final.elapsed_ns());
    const Op::Op op = ops[j];
    if (op != Op::TREE_CREATE && op != Op::TREE_REMOVE) {
      EXPECT_EQ(final.task_items(0), 60u);
      EXPECT_EQ(final.task_items(1), 60u);
    }
  }
  // Errors are counted per interval: none in any.
  for (const v1::IntervalReport& r : reports) {
    for (const auto& d : r.directions()) EXPECT_EQ(d.errors(), 0u) << "job " << r.job_index() << " interval " << r.interval_index();
  }
  EXPECT_EQ(EntriesBelow(dir_), 0u) << "the tree removal ran last and removed everything";
}

// A tree of more directories than a task names before its clock (7,381 a task, the first few
// thousand named ahead and the rest in the timed loop) is made and removed whole, in mdtest's
// order: every directory made is there, and the removal leaves nothing behind.
TEST_F(WorkerRunSequence, TreePhasesPastTheNamesMadeAhead) {
  constexpr uint64_t kDirectories = 1 + 9 + 81 + 729 + 6561;  // -z 4 -b 9
  auto request_for = [&](Op::Op op) {
    v1::PrepareRequest request = SequenceRequest(dir_, {op});
    v1::MetadataPhase* phase = request.mutable_spec()->mutable_jobs(0)->mutable_metadata();
    phase->set_depth(4);
    phase->set_branch(9);
    return request;
  };
  for (const Op::Op op : {Op::TREE_CREATE, Op::TREE_REMOVE}) {
    SCOPED_TRACE(Op::Op_Name(op));
    const std::map<uint32_t, v1::IntervalReport> finals = Finals(RunToEnd(request_for(op), *policy_), 1);
    ASSERT_EQ(finals.size(), 1u);
    const v1::IntervalReport& final = finals.at(0);
    EXPECT_EQ(final.error(), "");
    ASSERT_EQ(final.task_items_size(), 2);
    EXPECT_EQ(final.task_items(0), kDirectories);
    EXPECT_EQ(final.task_items(1), kDirectories);
    if (op == Op::TREE_CREATE) {
      EXPECT_EQ(EntriesBelow(dir_), 1 + 2 * kDirectories) << "test-dir.0-0 and both tasks' trees";
      struct stat st;
      EXPECT_EQ(::stat((dir_ + "/test-dir.0-0/mdtest_tree.1.0/mdtest_tree.1.9/mdtest_tree.1.90/mdtest_tree.1.819/mdtest_tree.1.7380").c_str(), &st), 0)
          << "the last directory, named in the timed loop";
    }
  }
  EXPECT_EQ(EntriesBelow(dir_), 0u) << "the removal took every directory and the test directory";
}

// Arrivals a run's watcher heard (RunSpec.jobs_released), in order, and a wait for the n-th.
class Arrivals {
 public:
  SessionRun::ArrivalWatcher Watcher() {
    return [this](uint32_t job, bool not_run) {
      std::lock_guard<std::mutex> lock(mu_);
      heard_.emplace_back(job, not_run);
      cv_.notify_all();
    };
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [&] { return heard_.size() >= n; });
  }
  std::vector<std::pair<uint32_t, bool>> heard() {
    std::lock_guard<std::mutex> lock(mu_);
    return heard_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<uint32_t, bool>> heard_;
};

// A task count sweep (-f 1 -l 2) runs each count's iteration under the same directory names,
// here on two workers of one task each, released by the test as a controller would: the second
// tree creation begins after the first tree removal removed the iteration directory — also on
// the worker whose task sat that removal out and arrived at the creation long before (it must
// not make or open the directory before its gate opens, or it finds the one about to go).
TEST_F(WorkerRunSequence, ATaskCountSweepRemakesTheIterationDirectory) {
  const std::vector<Op::Op> ops = {Op::TREE_CREATE, Op::TREE_REMOVE, Op::TREE_CREATE, Op::TREE_REMOVE};
  std::vector<std::unique_ptr<WorkerRun>> workers;
  std::vector<std::unique_ptr<Arrivals>> arrivals;
  for (uint32_t w = 0; w < 2; ++w) {
    v1::PrepareRequest request = SequenceRequest(dir_, ops);
    request.set_worker_index(w);
    request.set_worker_count(2);
    request.mutable_spec()->set_jobs_released(true);
    for (int j = 0; j < 4; ++j) {
      v1::JobSpec* job = request.mutable_spec()->mutable_jobs(j);
      job->set_numjobs(1);
      job->mutable_metadata()->set_depth(3);  // 1,111 directories: the first removal takes a while
      job->mutable_metadata()->set_branch(10);
      job->mutable_metadata()->set_task_count(j < 2 ? 1 : 2);  // task 1 sits the first two out
    }
    auto layout = LayOutRunFiles(request, *policy_);
    ASSERT_TRUE(layout.ok()) << layout.status();
    workers.push_back(std::make_unique<WorkerRun>(request, std::move(*layout)));
    arrivals.push_back(std::make_unique<Arrivals>());
    workers.back()->WatchArrivals(arrivals.back()->Watcher());
  }
  const int64_t start = WallNowNs() + 5'000'000;
  for (auto& w : workers) ASSERT_TRUE(w->Start(start).ok());
  for (uint32_t j = 1; j < ops.size(); ++j) {
    for (auto& a : arrivals) ASSERT_TRUE(a->WaitFor(j)) << "job " << j;
    const int64_t instant = WallNowNs() + 1'000'000;
    for (auto& w : workers) ASSERT_TRUE(w->Release(j, instant).ok()) << "job " << j;
  }
  for (uint32_t w = 0; w < 2; ++w) {
    bool ended = false;
    const std::map<uint32_t, v1::IntervalReport> finals = Finals(Reports(*workers[w], &ended), 4);
    ASSERT_TRUE(ended);
    ASSERT_EQ(finals.size(), 4u);
    for (const auto& [j, final] : finals) {
      SCOPED_TRACE(absl::StrCat("worker ", w, ", job ", j));
      EXPECT_EQ(final.error(), "");
      EXPECT_EQ(final.task_items(0), w == 1 && j < 2 ? 0u : 1111u);
    }
  }
  EXPECT_EQ(EntriesBelow(dir_), 0u);
}

// As mdtest stops at its first failure: a phase that fails (a stat of files never made) stops
// the phases after it, which say so and touch nothing (the tree stays, unremoved).
TEST_F(WorkerRunSequence, AFailedPhaseStopsTheRest) {
  const std::vector<Op::Op> ops = {Op::TREE_CREATE, Op::FILE_STAT, Op::FILE_REMOVE, Op::TREE_REMOVE};
  const std::map<uint32_t, v1::IntervalReport> finals = Finals(RunToEnd(SequenceRequest(dir_, ops), *policy_), static_cast<int>(ops.size()));
  ASSERT_EQ(finals.size(), ops.size());
  EXPECT_EQ(finals.at(0).error(), "");
  EXPECT_NE(finals.at(1).error(), "") << "the stat of files never made fails";
  for (uint32_t j : {2u, 3u}) {
    SCOPED_TRACE(absl::StrCat("job ", j));
    const v1::IntervalReport& final = finals.at(j);
    EXPECT_THAT(final.notes(), testing::Contains(testing::HasSubstr("not run: 'phase 2 (FILE_STAT)' failed before it")));
    EXPECT_EQ(final.task_items(0) + final.task_items(1), 0u);
  }
  EXPECT_GT(EntriesBelow(dir_), 0u) << "the tree removal did not run";
}

// Across workers (RunSpec.jobs_released): the worker says when its tasks have all ended a job,
// and the next starts only at the instant the controller's release names — not when the
// worker's own tasks are done. Releases that do not fit the run are refused.
TEST_F(WorkerRunSequence, ReleasedJobsStartAtTheControllersInstant) {
  const std::vector<Op::Op> ops = {Op::TREE_CREATE, Op::FILE_CREATE, Op::FILE_REMOVE, Op::TREE_REMOVE};
  const std::unique_ptr<WorkerRun> released = ReleasedRun(ops);
  ASSERT_NE(released, nullptr);
  WorkerRun& run = *released;
  Arrivals arrivals;
  run.WatchArrivals(arrivals.Watcher());
  EXPECT_EQ(run.Release(1, WallNowNs()).code(), absl::StatusCode::kFailedPrecondition) << "not started";
  ASSERT_TRUE(run.Start(WallNowNs() + 10'000'000).ok());
  ASSERT_TRUE(arrivals.WaitFor(1));
  EXPECT_EQ(arrivals.heard()[0], std::make_pair(1u, false));
  // Held at job 1 (the file creation) until released: its files do not appear.
  const size_t tree = EntriesBelow(dir_);
  EXPECT_GT(tree, 0u) << "the tree creation ran";
  const auto look_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < look_until && EntriesBelow(dir_) == tree) std::this_thread::yield();
  EXPECT_EQ(EntriesBelow(dir_), tree) << "the file creation began without a release";
  EXPECT_EQ(run.Release(0, WallNowNs()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(run.Release(4, WallNowNs()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(run.Release(2, WallNowNs()).code(), absl::StatusCode::kFailedPrecondition) << "its tasks have not arrived";
  // Released for an instant 50 ms ahead: the job's time runs from it.
  const int64_t instant = WallNowNs() + 50'000'000;
  ASSERT_TRUE(run.Release(1, instant).ok());
  EXPECT_TRUE(run.Release(1, instant).ok()) << "the same release again";
  EXPECT_EQ(run.Release(1, instant + 1).code(), absl::StatusCode::kFailedPrecondition) << "another instant";
  for (uint32_t j = 2; j < ops.size(); ++j) {
    ASSERT_TRUE(arrivals.WaitFor(j));
    EXPECT_EQ(arrivals.heard()[j - 1], std::make_pair(j, false));
    EXPECT_GE(WallNowNs(), instant) << "job 1 ended before it was released to start";
    ASSERT_TRUE(run.Release(j, WallNowNs()).ok());
  }
  bool ended = false;
  const std::map<uint32_t, v1::IntervalReport> finals = Finals(Reports(run, &ended), static_cast<int>(ops.size()));
  ASSERT_TRUE(ended);
  ASSERT_EQ(finals.size(), ops.size());
  for (const auto& [j, final] : finals) {
    SCOPED_TRACE(absl::StrCat("job ", j));
    EXPECT_EQ(final.error(), "");
    EXPECT_EQ(final.stop_reason(), "");
    if (ops[j] == Op::FILE_CREATE || ops[j] == Op::FILE_REMOVE) {
      EXPECT_EQ(final.task_items(0) + final.task_items(1), 120u);
    }
  }
  // Job 1's own time is from its instant: its items' time, not the wait before it (the 300 ms
  // looked for files, and 50 ms to the instant).
  EXPECT_LT(finals.at(1).elapsed_ns(), 300'000'000u);
  EXPECT_EQ(arrivals.heard().size(), ops.size() - 1);
  EXPECT_EQ(EntriesBelow(dir_), 0u) << "every phase ran, the tree removal last";
}

// A job that fails stops the ones after it here, as in a sequence on one worker; their arrivals
// say they will not run (the controller then stops them on every worker), and they need no
// release to end.
TEST_F(WorkerRunSequence, ReleasedJobsAfterAFailureArriveAsNotRun) {
  const std::vector<Op::Op> ops = {Op::TREE_CREATE, Op::FILE_STAT, Op::FILE_REMOVE, Op::TREE_REMOVE};
  const std::unique_ptr<WorkerRun> released = ReleasedRun(ops);
  ASSERT_NE(released, nullptr);
  WorkerRun& run = *released;
  ASSERT_TRUE(run.Start(WallNowNs()).ok());
  Arrivals arrivals;
  run.WatchArrivals(arrivals.Watcher());  // set late: an arrival before it is passed on at once
  ASSERT_TRUE(arrivals.WaitFor(1));
  ASSERT_TRUE(run.Release(1, WallNowNs()).ok());
  ASSERT_TRUE(arrivals.WaitFor(3));
  const std::vector<std::pair<uint32_t, bool>> expected = {{1, false}, {2, true}, {3, true}};
  EXPECT_EQ(arrivals.heard(), expected);
  bool ended = false;
  const std::map<uint32_t, v1::IntervalReport> finals = Finals(Reports(run, &ended), static_cast<int>(ops.size()));
  ASSERT_TRUE(ended);
  ASSERT_EQ(finals.size(), ops.size());
  EXPECT_NE(finals.at(1).error(), "") << "the stat of files never made fails";
  for (uint32_t j : {2u, 3u}) EXPECT_THAT(finals.at(j).notes(), testing::Contains(testing::HasSubstr("failed before it"))) << "job " << j;
}

// A run whose jobs are not released by a controller refuses a release.
TEST_F(WorkerRunSequence, AReleaseOfARunNotReleasedIsRefused) {
  const v1::PrepareRequest request = SequenceRequest(dir_, {Op::TREE_CREATE, Op::TREE_REMOVE});
  auto layout = LayOutRunFiles(request, *policy_);
  ASSERT_TRUE(layout.ok()) << layout.status();
  WorkerRun run(request, std::move(*layout));
  ASSERT_TRUE(run.Start(WallNowNs()).ok());
  EXPECT_EQ(run.Release(1, WallNowNs()).code(), absl::StatusCode::kFailedPrecondition);
  bool ended = false;
  EXPECT_EQ(Finals(Reports(run, &ended), 2).size(), 2u);
}

// A run stopped before its start instant ends every phase of the sequence, none begun, at once
// (not at the instant).
TEST_F(WorkerRunSequence, StopBeforeTheStartEndsEveryPhase) {
  const std::vector<Op::Op> ops = {Op::TREE_CREATE, Op::FILE_CREATE, Op::FILE_REMOVE, Op::TREE_REMOVE};
  const v1::PrepareRequest request = SequenceRequest(dir_, ops);
  auto layout = LayOutRunFiles(request, *policy_);
  ASSERT_TRUE(layout.ok()) << layout.status();
  WorkerRun run(request, std::move(*layout));
  ASSERT_TRUE(run.Start(WallNowNs() + 5'000'000'000).ok());  // 5 s ahead
  const auto stop_at = std::chrono::steady_clock::now();
  run.Stop("test says stop");
  bool ended = false;
  const std::map<uint32_t, v1::IntervalReport> finals = Finals(Reports(run, &ended), static_cast<int>(ops.size()));
  ASSERT_TRUE(ended);
  EXPECT_LT(std::chrono::steady_clock::now() - stop_at, std::chrono::seconds(3)) << "not held until the instant";
  ASSERT_EQ(finals.size(), ops.size());
  for (const auto& [j, final] : finals) {
    EXPECT_EQ(final.stop_reason(), "test says stop") << "job " << j;
    EXPECT_EQ(final.task_items(0) + final.task_items(1), 0u) << "job " << j;
  }
  // At most the iteration directory, set up before the start as mdtest makes it before its
  // timer: no tree below it, no files.
  EXPECT_LE(EntriesBelow(dir_), 1u) << "no tree directory, no file was made";
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST(FileLayout, NrfilesFilenameListsCreateOnOpenAndOverwrite) {
  const std::string root = std::getenv("TEST_TMPDIR");
  auto policy = PathPolicy::Create({root});
  v1::PrepareRequest request = MakeRequest(root + "/multi");
  v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
  job->set_nrfiles(3);
  job->set_size(3 << 20);
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->paths[0][1].size(), 3u);
  EXPECT_EQ(layout->paths[0][1][2], root + "/multi/reader.w3.1.2");
  struct stat st;
  ASSERT_EQ(::stat(layout->paths[0][1][2].c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20);  // size split over nrfiles

  // A colon-separated filename list is shared by every thread.
  job->set_filename("a.dat:b.dat");
  job->set_nrfiles(2);
  job->set_directory(root + "/list");
  layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->paths[0][0][1], root + "/list/b.dat");
  EXPECT_EQ(layout->paths[0][1][1], root + "/list/b.dat");

  // create_on_open: nothing is laid out; overwrite: a write job's file is filled with data.
  job->clear_filename();
  job->set_nrfiles(1);
  job->set_rw(v1::SEQ_WRITE);
  job->set_directory(root + "/lazy");
  job->set_create_on_open(true);
  layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok());
  EXPECT_NE(::stat(layout->paths[0][0][0].c_str(), &st), 0);
  job->set_create_on_open(false);
  job->set_overwrite(true);
  job->set_directory(root + "/over");
  layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok());
  ASSERT_EQ(::stat(layout->paths[0][0][0].c_str(), &st), 0);
  EXPECT_GE(st.st_blocks * 512, 3 << 20);  // written, not just allocated
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST(FileLayout, SizePercentIsOfTheExistingFile) {
  const std::string root = std::getenv("TEST_TMPDIR");
  auto policy = PathPolicy::Create({root});
  ::mkdir((root + "/pct").c_str(), 0755);
  int fd = ::open((root + "/pct/dev.img").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_EQ(::ftruncate(fd, 8 << 20), 0);
  ::close(fd);
  v1::PrepareRequest request = MakeRequest(root + "/pct");
  v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
  job->set_filename("dev.img");
  job->set_size(0);
  job->set_size_percent(25);
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->jobs[0].size(), 2u << 20);
  job->set_filename("missing.img");
  EXPECT_EQ(LayOutRunFiles(request, *policy).status().code(), absl::StatusCode::kNotFound);
  // allow_file_create=0: an existing file is used, a missing one is an error and is not made.
  job->set_size_percent(0);
  job->set_size(1 << 20);
  job->set_no_file_create(true);
  job->set_filename("dev.img");
  EXPECT_TRUE(LayOutRunFiles(request, *policy).ok());
  job->set_filename("missing.img");
  absl::Status refused = LayOutRunFiles(request, *policy).status();
  EXPECT_NE(refused.message().find("allow_file_create=0"), std::string::npos) << refused;
  struct stat st;
  EXPECT_NE(::stat((root + "/pct/missing.img").c_str(), &st), 0);
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// fio's fallocate= for a write-only job's files: allocated (native, posix, keep) or sparse
// (none); every one of them the job's size.
// fio's steadystate.fio writes /dev/null and reads /dev/zero: a character device has nothing
// to lay out and no size, and is left as it is.
TEST(FileLayout, CharacterDevicesNeedNoLayout) {
  auto policy = PathPolicy::Create({"/dev"});
  ASSERT_TRUE(policy.ok()) << policy.status();
  v1::PrepareRequest request = MakeRequest("");
  v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
  job->clear_directory();
  job->set_filename("/dev/zero");
  job->set_size(128 << 20);
  auto layout = LayOutRunFiles(request, *policy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->paths[0][0][0], "/dev/zero");
  EXPECT_FALSE(layout->response.files(0).laid_out());
}

TEST(FileLayout, FallocateModes) {
  const std::string root = std::getenv("TEST_TMPDIR");
  auto policy = PathPolicy::Create({root});
  ::mkdir((root + "/falloc").c_str(), 0755);
  v1::PrepareRequest request = MakeRequest(root + "/falloc");
  v1::JobSpec* job = request.mutable_spec()->mutable_jobs(0);
  job->set_rw(v1::SEQ_WRITE);
  job->set_size(4 << 20);
  for (const auto mode : {v1::JobSpec::FALLOCATE_NATIVE, v1::JobSpec::FALLOCATE_POSIX, v1::JobSpec::FALLOCATE_KEEP_SIZE, v1::JobSpec::FALLOCATE_NONE}) {
    const std::string name = absl::StrCat("f", static_cast<int>(mode));
    job->set_filename(name);
    job->set_fallocate(mode);
    ASSERT_TRUE(LayOutRunFiles(request, *policy).ok()) << mode;
    struct stat st;
    ASSERT_EQ(::stat((root + "/falloc/" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 4 << 20) << mode;
    if (mode == v1::JobSpec::FALLOCATE_NONE) {
      EXPECT_EQ(st.st_blocks, 0) << "fallocate=none allocates nothing";
    } else {
      EXPECT_GE(st.st_blocks * 512, 4 << 20) << mode;
    }
  }
}

TEST(FileLayout, NamesTheFilesystemAndRefusesDirectIoWhereItIsRefused) {
  // ramfs has no O_DIRECT (tmpfs has had it since Linux 6.6). Mounting needs root.
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/ramfs";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  if (std::system(("mount -t ramfs ramfs " + dir + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount ramfs here (not root, or no mount namespace rights)";
  }
  // Unmounted however the test ends.
  struct Unmount {
    std::string dir;
    ~Unmount() {
      if (std::system(("umount " + dir + " 2>/dev/null").c_str()) != 0) {
      }  // not mounted (the test failed before): nothing to undo
    }
  } unmount{dir};
  auto policy = PathPolicy::Create({dir});
  v1::PrepareRequest request = MakeRequest(dir);
  auto layout = LayOutRunFiles(request, *policy);
  EXPECT_TRUE(layout.ok()) << layout.status();
  if (layout.ok()) {
    ASSERT_EQ(layout->response.facts().targets_size(), 1);
    EXPECT_EQ(layout->response.facts().targets(0).fs_type(), "ramfs");
  }
  request.mutable_spec()->mutable_jobs(0)->set_direct(true);
  request.mutable_spec()->mutable_jobs(0)->set_name("direct");
  auto refused = LayOutRunFiles(request, *policy);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("O_DIRECT (direct=1): the filesystem refuses it"), std::string::npos) << refused.status();
}

}  // namespace
}  // namespace iofleet
