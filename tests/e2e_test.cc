// End-to-end: real iofleet-worker processes and the real iofleet controller over gRPC on
// 127.0.0.1, doing real IO in the test's temporary directory.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/e2e_fixture.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::BytesMovedDuring;
using ::iofleet::testing::DirectoryEntries;
using ::iofleet::testing::kIdleBytesPerSecond;
using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::iofleet::testing::ControllerRun;
using ::iofleet::testing::EndToEnd;
using ::iofleet::testing::FindDirection;
using ::iofleet::testing::FioNumber;
using ::iofleet::testing::kRunTimeout;
using ::iofleet::testing::P99;
using ::iofleet::testing::ParseJsonReport;
using ::iofleet::testing::RunController;
using ::iofleet::testing::RunJson;
using ::iofleet::testing::WaitFor;
using ::iofleet::testing::WriteJob;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(EndToEnd, RandwriteThenRandreadOnTwoWorkers) {
  TestWorker a("worker-a", {"--allow-root", data_});
  TestWorker b("worker-b", {"--allow-root", data_});
  ASSERT_FALSE(a.address().empty());
  ASSERT_FALSE(b.address().empty());
  const std::string hosts = absl::StrCat(a.address(), ",", b.address());
  const std::string common = absl::StrCat("[global]\nioengine=psync\nbs=4k\nsize=2m\ndirectory=", data_, "\n");

  ControllerRun write = RunJson({"run", WriteJob("w.fio", common + "[wr]\nrw=randwrite\nnumjobs=2\nfsync=64\n"), "--hosts", hosts, "--interval", "200ms"}, "write");
  ASSERT_EQ(write.exit_code, 0) << write.err;
  // Files of the right size exist: one per thread per worker.
  for (const char* file : {"wr.w0.0.0", "wr.w0.1.0", "wr.w1.0.0", "wr.w1.1.0"}) {
    struct stat st;
    ASSERT_EQ(::stat((data_ + "/" + file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_size, 2 << 20) << file;
  }
  ASSERT_EQ(write.report.jobs_size(), 1);
  // Each worker's host facts and its target's filesystem are in the report.
  for (const auto& w : write.report.workers()) {
    EXPECT_FALSE(w.facts().hostname().empty());
    EXPECT_GT(w.facts().memory_bytes(), 0u);
    ASSERT_EQ(w.facts().targets_size(), 1);
    EXPECT_FALSE(w.facts().targets(0).fs_type().empty());
    EXPECT_TRUE(w.differs().empty()) << "two workers on one host cannot differ";
  }
  const v1::JobResult& wjob = write.report.jobs(0);
  const v1::DirectionResult* cluster_write = FindDirection(wjob.directions(), "write");
  ASSERT_NE(cluster_write, nullptr);
  // One pass over 2 MiB in 4 KiB blocks per thread: 512 IOs x 2 threads x 2 workers.
  EXPECT_EQ(cluster_write->ops(), 2048u);
  EXPECT_EQ(cluster_write->bytes(), 2048u * 4096);
  ASSERT_NE(FindDirection(wjob.directions(), "sync"), nullptr);
  EXPECT_EQ(FindDirection(wjob.directions(), "sync")->ops(), 2u * 2 * (512 / 64 - 1));  // fio issues none after the last write
  // The same figures where fio's JSON has them, for scripts written against fio.
  EXPECT_EQ(FioNumber(write.fio, 0, {"write", "total_ios"}), 2048);
  EXPECT_EQ(FioNumber(write.fio, 0, {"write", "io_bytes"}), 2048.0 * 4096);
  EXPECT_EQ(FioNumber(write.fio, 0, {"read", "total_ios"}), 0);
  EXPECT_EQ(FioNumber(write.fio, 0, {"sync", "total_ios"}), 28);
  EXPECT_GT(FioNumber(write.fio, 0, {"write", "clat_ns", "percentile", "99.000000"}), 0);

  ControllerRun read = RunJson({"run", WriteJob("r.fio", common + "[rd]\nrw=randread\nruntime=2s\ntime_based\nfilename=wr.w0.0.0\n"), "--hosts", hosts, "--interval", "250ms"}, "read");
  ASSERT_EQ(read.exit_code, 0) << read.err;
  const v1::JobResult& rjob = read.report.jobs(0);
  const v1::DirectionResult* cluster_read = FindDirection(rjob.directions(), "read");
  ASSERT_NE(cluster_read, nullptr);
  ASSERT_EQ(rjob.workers_size(), 2);
  uint64_t sum_ops = 0;
  std::vector<uint64_t> worker_p99;
  for (const v1::WorkerResult& w : rjob.workers()) {
    const v1::DirectionResult* d = FindDirection(w.directions(), "read");
    ASSERT_NE(d, nullptr) << w.worker();
    EXPECT_GT(d->ops(), 100u);
    sum_ops += d->ops();
    worker_p99.push_back(P99(*d));
  }
  // The cluster op count is the sum of the workers'.
  EXPECT_EQ(cluster_read->ops(), sum_ops);
  EXPECT_EQ(cluster_read->bytes(), sum_ops * 4096);
  // The cluster p99 lies between the workers' p99s (to the histogram's 1% resolution).
  const auto [lo, hi] = std::minmax_element(worker_p99.begin(), worker_p99.end());
  EXPECT_GE(P99(*cluster_read) * 1.01, static_cast<double>(*lo));
  EXPECT_LE(P99(*cluster_read), *hi * 1.01);
  // Time-based for 2 s: the run took about that long, in 250 ms intervals that add up.
  EXPECT_GE(rjob.elapsed_ns(), 2'000'000'000u);
  EXPECT_LT(rjob.elapsed_ns(), 4'000'000'000u);
  ASSERT_GE(rjob.intervals_size(), 8);
  uint64_t interval_ops = 0;
  for (const auto& interval : rjob.intervals()) {
    EXPECT_EQ(interval.workers_reporting(), 2u);
    if (const auto* d = FindDirection(interval.directions(), "read")) interval_ops += d->ops();
  }
  EXPECT_EQ(interval_ops, cluster_read->ops());
}

TEST_F(EndToEnd, AsyncEnginesAtQueueDepthReportSlatAndClat) {
  TestWorker a("worker-async-a", {"--allow-root", data_});
  TestWorker b("worker-async-b", {"--allow-root", data_});
  ControllerRun run = RunJson({"run", WriteJob("async.fio", absl::StrCat("[global]\nbs=4k\nsize=1m\niodepth=8\ndirectory=", data_,
                                                                      "\n[uring]\nioengine=io_uring\nrw=randwrite\n[aio]\nioengine=libaio\nrw=randread\n")),
                               "--hosts", absl::StrCat(a.address(), ",", b.address())}, "async");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.report.jobs_size(), 2);
  for (const auto& job : run.report.jobs()) {
    ASSERT_EQ(job.directions_size(), 1) << job.name();
    const v1::DirectionResult& d = job.directions(0);
    EXPECT_EQ(d.ops(), 2u * 256) << job.name();  // one pass of 256 blocks on each of 2 workers
    EXPECT_TRUE(d.has_submit_latency()) << job.name();
    EXPECT_TRUE(d.has_completion_latency()) << job.name();
    EXPECT_LE(d.completion_latency().max_ns(), d.latency().max_ns()) << job.name();
  }
}

TEST_F(EndToEnd, StonewallIsAClusterWideBarrier) {
  TestWorker a("worker-wall-a", {"--allow-root", data_});
  TestWorker b("worker-wall-b", {"--allow-root", data_});
  const std::string job = WriteJob("wall.fio", absl::StrCat("[global]\nsize=1m\ntime_based\nruntime=1s\ndirectory=", data_,
                                                            "\ngroup_reporting\n[first]\nrw=randwrite\n[second]\nstonewall\nrw=randread\n"));
  const std::string hosts = absl::StrCat(a.address(), ",", b.address());
  ControllerRun run = RunJson({"run", job, "--hosts", hosts, "--interval", "250ms"}, "wall");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.report.jobs_size(), 2);
  const v1::JobResult& first = run.report.jobs(0);
  const v1::JobResult& second = run.report.jobs(1);
  EXPECT_EQ(second.phase(), 1u);
  EXPECT_EQ(second.group(), 1u);
  // The second job started on every worker only after the first had ended on every worker.
  int64_t first_end = 0;
  for (const auto& interval : first.intervals()) first_end = std::max(first_end, interval.end_unix_ns());
  ASSERT_GT(second.intervals_size(), 0);
  EXPECT_GE(second.intervals(0).start_unix_ns(), first_end);
  // The run took both phases, one after the other.
  EXPECT_GE(run.report.cluster_elapsed_ns(), 2'000'000'000u);
  ASSERT_EQ(run.report.groups_size(), 2);
  EXPECT_EQ(run.report.groups(1).jobs(0), "second");
  ControllerRun text = RunController({"run", job, "--hosts", hosts}, "wall-text");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("group 1 (second)"));
  EXPECT_THAT(text.out, HasSubstr("Run status group 1 (all jobs):"));
}

// verify_across_workers: after a cluster-wide barrier every worker reads back and verifies
// what the next worker wrote; a block corrupted on disk is reported by exactly the worker that
// read it, at its offset in the other worker's file, and by nobody else.
TEST_F(EndToEnd, VerifyAcrossWorkersChecksAnotherWorkersBlocks) {
  TestWorker a("worker-xv-a", {"--allow-root", data_});
  TestWorker b("worker-xv-b", {"--allow-root", data_});
  const std::string hosts = absl::StrCat(a.address(), ",", b.address());
  const std::string common = absl::StrCat("[global]\nioengine=psync\nbs=4k\nsize=1m\nverify=crc32c\nverify_across_workers=1\ndirectory=", data_, "\n");
  ControllerRun write = RunJson({"run", WriteJob("xv.fio", common + "[x]\nrw=randwrite\n"), "--hosts", hosts}, "xv-write");
  ASSERT_EQ(write.exit_code, 0) << write.err;
  ASSERT_EQ(write.report.jobs_size(), 2);
  EXPECT_EQ(write.report.jobs(1).name(), "x-verify");
  EXPECT_EQ(write.report.jobs(1).phase(), 1u);  // after the barrier
  EXPECT_EQ(FioNumber(write.fio, 0, {"read", "io_bytes"}), 0);  // the writers did not read back themselves
  EXPECT_EQ(FioNumber(write.fio, 1, {"read", "io_bytes"}), 2 << 20);  // both files, each read by the other worker

  const std::string victim = data_ + "/x.w1.0.0";  // written by worker 1 (b), verified by worker 0 (a)
  const int fd = ::open(victim.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "corrupt", 7, 100 * 4096 + 2000), 7);
  ::close(fd);
  ControllerRun verify = RunController({"run", WriteJob("xv-read.fio", common + "[x]\nrw=read\n"), "--hosts", hosts}, "xv-read");
  EXPECT_NE(verify.exit_code, 0);
  const std::string failure = absl::StrCat("job 'x' on ", a.address(), ": DATA_LOSS: 1 block(s) failed verification; first: verify (crc32c) of 4096 bytes at offset 409600 in ", victim);
  EXPECT_THAT(verify.out + verify.err, HasSubstr(failure));
  EXPECT_THAT(verify.out + verify.err, HasSubstr("written by job 0, worker 1, thread 0"));
  EXPECT_THAT(verify.out + verify.err, Not(HasSubstr(absl::StrCat("job 'x' on ", b.address(), ": DATA_LOSS"))));
}

// The same check inside one run: the block is corrupted on disk after the cluster-wide end of
// the write phase and before the other host reads it back (verify_across_workers_delay).
TEST_F(EndToEnd, VerifyAcrossWorkersCatchesCorruptionWithinOneRun) {
  TestWorker a("worker-xv1-a", {"--allow-root", data_});
  TestWorker b("worker-xv1-b", {"--allow-root", data_});
  const std::string job = WriteJob("xv1.fio", absl::StrCat("[y]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n"
                                                           "verify_across_workers=1\nverify_across_workers_delay=4s\ndirectory=", data_, "\n"));
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", absl::StrCat(a.address(), ",", b.address())}, TempDir() + "/xv1");
  // The verify phase begins (its progress line) once the write phase has ended on every
  // worker; its reads wait out the 4 s delay, the window to corrupt a block in.
  const std::string victim = data_ + "/y.w1.0.0";
  ASSERT_TRUE(run.WaitForOutput("phase 2/2 (y-verify)", std::chrono::seconds(30), /*in_stderr=*/true)) << run.Stderr();
  const int fd = ::open(victim.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "corrupt", 7, 100 * 4096 + 2000), 7);
  ::close(fd);
  const auto exit_code = run.Wait(std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 1);
  const std::string all = run.Stdout() + run.Stderr();
  EXPECT_THAT(all, HasSubstr(absl::StrCat("job 'y-verify' on ", a.address(),
                                          ": DATA_LOSS: 1 block(s) failed verification; first: verify (crc32c) of 4096 bytes at offset 409600 in ", victim)))
      << all;
  EXPECT_THAT(all, HasSubstr("written by job 0, worker 1, thread 0"));
  EXPECT_THAT(all, Not(HasSubstr(absl::StrCat("on ", b.address(), ": DATA_LOSS"))));
  for (TestWorker* w : {&a, &b}) {
    EXPECT_LT(BytesMovedDuring(w->process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
  }
}

TEST_F(EndToEnd, TextReportHasClusterPercentilesAndPerWorkerTable) {
  TestWorker a("worker-text-a", {"--allow-root", data_});
  TestWorker b("worker-text-b", {"--allow-root", data_});
  ControllerRun run = RunController({"run", WriteJob("t.fio", absl::StrCat("[seq]\nrw=write\nbs=64k\nsize=4m\nioengine=sync\ndirectory=", data_, "\n")),
                                     "--hosts", absl::StrCat(a.address(), ",", b.address())}, "text");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Cluster (all jobs, 2 workers)"));
  EXPECT_THAT(run.out, HasSubstr("99.99th=["));
  EXPECT_THAT(run.out, HasSubstr(a.address()));
  EXPECT_THAT(run.out, HasSubstr(b.address()));
  EXPECT_THAT(run.out, HasSubstr("write: IOPS="));
}

TEST_F(EndToEnd, LocalWorkersNeedNoHosts) {
  ControllerRun run = RunJson({"run", WriteJob("local.fio", "[l]\nrw=randrw\nrwmixread=50\nsize=1m\nruntime=1s\ntime_based\n"),
                               "--worker-binary", Runfile("worker/iofleet-worker")}, "local");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.report.workers_size(), 2);
  for (const auto& w : run.report.workers()) EXPECT_THAT(w.address(), HasSubstr("127.0.0.1:"));
  ASSERT_NE(FindDirection(run.report.cluster(), "read"), nullptr);
  ASSERT_NE(FindDirection(run.report.cluster(), "write"), nullptr);
}

// The worker's control threads (gRPC's, the session's) are SCHED_BATCH, so that a controller's
// message does not preempt an IO thread; the IO threads and the interval cut are not.
TEST_F(EndToEnd, WorkerControlThreadsDoNotPreemptIoThreads) {
  TestWorker worker("worker-sched", {"--allow-root", data_});
  TestProcess controller({Runfile("controller/iofleet"), "run", "--ioengine=null", "--name=paced", "--rw=randread", "--size=1m",
                          "--rate_iops=200", "--runtime=20s", "--time_based", "--hosts", worker.address()},
                         TempDir() + "/sched-controller");
  // Thread name -> the policies seen, read while the job runs (threads come and go: a thread
  // gone between the listing and the look is skipped).
  const std::string tasks = absl::StrCat("/proc/", worker.process().pid(), "/task");
  std::multimap<std::string, int> policies;
  auto look = [&] {
    policies.clear();
    DIR* dir = ::opendir(tasks.c_str());
    if (dir == nullptr) return false;
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      std::string name = ReadFile(tasks + "/" + entry->d_name + "/comm");
      const int policy = ::sched_getscheduler(std::atoi(entry->d_name));
      if (name.empty() || policy < 0) continue;
      name.pop_back();  // its newline
      policies.emplace(name, policy);
    }
    ::closedir(dir);
    return policies.count("io-job") == 1 && policies.count("interval-cut") == 1;
  };
  ASSERT_TRUE(WaitFor(look, std::chrono::seconds(30))) << "no IO thread and interval cut seen in the worker";
  int batch = 0;
  for (const auto& [name, policy] : policies) {
    if (name == "io-job" || name == "interval-cut") {
      EXPECT_EQ(policy, SCHED_OTHER) << name;
    } else {
      EXPECT_EQ(policy, SCHED_BATCH) << name;
      ++batch;
    }
  }
  EXPECT_GE(batch, 3) << "the main thread, gRPC's, the session's";
  controller.Signal(SIGINT);  // (what it measured is reported; the test needs no more of it)
  EXPECT_TRUE(controller.Wait(kRunTimeout).has_value());
}

TEST_F(EndToEnd, JobGivenOnTheCommandLineAsInFio) {
  TestWorker a("worker-cli", {"--allow-root", data_});
  ControllerRun run = RunJson({"run", "--ioengine=psync", "--size=1m", absl::StrCat("--directory=", data_), "--name=clijob",
                               "--rw=randwrite", "--bs=8k", "--hosts", a.address()}, "cli");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.report.jobs_size(), 1);
  EXPECT_EQ(run.report.jobs(0).name(), "clijob");
  EXPECT_EQ(run.report.jobs(0).bs(), "8KiB");
  EXPECT_EQ(FindDirection(run.report.jobs(0).directions(), "write")->ops(), 128u);
  ControllerRun typo = RunController({"run", "--name=x", "--rw=read", "--bz=4k", "--hosts", a.address()}, "cli-typo");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, HasSubstr("unknown option --bz (did you mean --bs?)"));
}

// fio's single-dash long options, as fio lines are pasted from runbooks (the line from the
// issue, with fewer jobs and smaller files); iofleet's own options work with one dash too.
TEST_F(EndToEnd, FioLinesWithSingleDashOptionsRun) {
  TestWorker a("worker-dash", {"--allow-root", data_});
  ControllerRun run = RunJson({"run", absl::StrCat("-directory=", data_), "-ioengine=libaio", "-iodepth=1", "-direct=1", "-fsync=1",
                               "-bs=4K", "-filesize=256k", "--rw=write", "-numjobs=3", "-name=fiotest", "-group_reporting", "-hosts",
                               a.address()},
                              "dash");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.report.jobs_size(), 1);
  EXPECT_EQ(run.report.jobs(0).name(), "fiotest");
  EXPECT_EQ(FindDirection(run.report.jobs(0).directions(), "write")->ops(), 3u * 64) << "3 jobs x 256 KiB / 4 KiB";
  // fsync=1: one after every write but the last, which ends the pass (fio 3.33 counts 63 for
  // the same job).
  EXPECT_EQ(FindDirection(run.report.jobs(0).directions(), "sync")->ops(), 3u * 63);
  ControllerRun typo = RunController({"run", "-name=x", "-rw=read", "-bz=4k", "--hosts", a.address()}, "dash-typo");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, HasSubstr("unknown option -bz (did you mean -bs?)"));
}

}  // namespace
}  // namespace iofleet
