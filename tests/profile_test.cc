// --profile through a real worker (root: perf samples every CPU): the run's results hold a
// flame graph of the worker's host with the worker's IO path in it — its job threads, its IO
// loop and the kernel below — also inline in the HTML report; and perf is gone afterwards.
#include <dirent.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/hostname.h"
#include "controller/results_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/targets.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::MountedTarget;
using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::iofleet::testing::WaitFor;

// perf processes running now (their /proc/PID/comm).
int PerfProcesses() {
  int n = 0;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (absl::StartsWith(ReadFile(e.path() / "comm"), "perf")) ++n;
  }
  return n;
}

int ProfileScratchDirs() {
  int n = 0;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator("/tmp")) {
    n += absl::StartsWith(e.path().filename().string(), "iofleet-profile-");
  }
  return n;
}

TEST(CpuProfile, AFlameGraphOfTheHostAndOfEachWorkerWithItsIoPath) {
  if (::geteuid() != 0) GTEST_SKIP() << "perf -a needs root";
  if (::system("perf --version >/dev/null 2>&1") != 0) GTEST_FAIL() << "perf is not installed (tools/install_deps.sh installs linux-perf)";
  MountedTarget ext4("ext4", TempDir() + "/profile-ext4");
  ASSERT_EQ(ext4.error(), "");
  const int perf_before = PerfProcesses(), scratch_before = ProfileScratchDirs();
  // Two workers on one host: one host profile (all CPUs), and each worker's own out of it.
  TestWorker worker("profile-worker", {"--allow-root", ext4.path()});
  TestWorker second("profile-worker2", {"--allow-root", ext4.path()});
  const std::string job = TempDir() + "/profile.fio";
  std::ofstream(job) << "[randread]\nioengine=io_uring\ndirect=1\nrw=randread\nbs=4k\niodepth=16\nsize=32m\ntime_based\nruntime=3\ndirectory=" << ext4.path() << "\n";
  const std::string results = TempDir() + "/profile-results";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", absl::StrCat(worker.address(), ",", second.address()), "--profile", "--results-dir", results},
                  TempDir() + "/profile-run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(120)).value_or(-1), 0) << run.Stderr();
  std::string dir;
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator(results)) dir = e.path().string();
  ASSERT_FALSE(dir.empty());
  const std::string host = ResultsFileName(LocalHostname(), "host");

  // The folded stacks: the worker's job threads (named io-job), through its IO loop into the
  // kernel's io_uring and block layer.
  const std::string folded = ReadFile(absl::StrCat(dir, "/profile-", host, ".folded"));
  ASSERT_FALSE(folded.empty()) << "no profile-" << host << ".folded in " << dir;
  bool io_path = false;
  for (absl::string_view line : absl::StrSplit(folded, '\n')) {
    io_path |= absl::StartsWith(line, "io-job;") && absl::StrContains(line, "iofleet::RunJobThread") && absl::StrContains(line, "io_uring");
  }
  EXPECT_TRUE(io_path) << "no io-job stack from RunJobThread into io_uring";
  // The flame graph of the host, in the results and inline in the HTML report.
  const std::string svg = ReadFile(absl::StrCat(dir, "/flamegraph-", host, ".svg"));
  EXPECT_THAT(svg, ::testing::StartsWith("<svg"));
  EXPECT_THAT(svg, ::testing::HasSubstr("<title>io-job ("));
  EXPECT_THAT(svg, ::testing::HasSubstr("<title>iofleet::RunJobThread ("));
  const std::string html = ReadFile(dir + "/report.html");
  EXPECT_THAT(html, ::testing::HasSubstr(absl::StrCat("<h2>CPU profile: ", host, "</h2><div class=\"flame\"><svg")));
  EXPECT_THAT(ReadFile(dir + "/report.txt"), ::testing::ContainsRegex("CPU profiles.*\n  [^:]+: [0-9]+ samples at 99 Hz"));
  // Each worker's flame graph: its own process's stacks, its IO loop into io_uring, and no
  // other process's threads (the host's kworkers and idle loop stay in the host's graph).
  auto samples = [](const std::string& folded, absl::string_view root) {
    uint64_t n = 0;
    for (absl::string_view line : absl::StrSplit(folded, '\n', absl::SkipEmpty())) {
      uint64_t count = 0;
      if (absl::StartsWith(line, root) && absl::SimpleAtoi(line.substr(line.rfind(' ') + 1), &count)) n += count;
    }
    return n;
  };
  uint64_t workers_io = 0;
  for (const TestWorker* w : {&worker, &second}) {
    SCOPED_TRACE(w->address());
    const std::string name = absl::StrCat("worker-", ResultsFileName(w->address(), "worker"));
    const std::string own = ReadFile(absl::StrCat(dir, "/profile-", name, ".folded"));
    ASSERT_FALSE(own.empty()) << "no profile-" << name << ".folded in " << dir;
    bool own_io = false;
    for (absl::string_view line : absl::StrSplit(own, '\n')) {
      own_io |= absl::StartsWith(line, "io-job;") && absl::StrContains(line, "iofleet::RunJobThread") && absl::StrContains(line, "io_uring");
    }
    EXPECT_TRUE(own_io) << "no io-job stack from RunJobThread into io_uring in " << name;
    EXPECT_EQ(samples(own, "swapper;"), 0u);
    EXPECT_EQ(samples(own, "kworker"), 0u);
    workers_io += samples(own, "io-job;");
    EXPECT_THAT(ReadFile(absl::StrCat(dir, "/flamegraph-", name, ".svg")), ::testing::HasSubstr("<title>iofleet::RunJobThread ("));
    EXPECT_THAT(html, ::testing::HasSubstr(absl::StrCat("<h2>CPU profile: ", name, "</h2><div class=\"flame\"><svg")));
  }
  // The two workers' job threads are all of the host's.
  EXPECT_EQ(workers_io, samples(folded, "io-job;"));
  // perf is gone, and so are its files.
  EXPECT_TRUE(WaitFor([&] { return PerfProcesses() <= perf_before; }, std::chrono::seconds(10)));
  EXPECT_EQ(ProfileScratchDirs(), scratch_before);
}

}  // namespace
}  // namespace iofleet
