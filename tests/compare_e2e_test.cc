// `iofleet compare` end to end: the same job on two targets with real workers, and earlier
// result files compared (and refused when their jobs differ).
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::DirectoryNames;
using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;
using ::testing::Not;

int RunIofleet(std::vector<std::string> args, const std::string& name, std::string* err = nullptr) {
  args.insert(args.begin(), Runfile("controller/iofleet"));
  TestProcess process(args, TempDir() + "/" + name);
  const int code = process.Wait(std::chrono::seconds(120)).value_or(-1);
  if (err) *err = process.Stderr();
  return code;
}

TEST(CompareEndToEnd, SameJobOnTwoTargetsAndResultFiles) {
  const std::string a = TempDir() + "/cmp-a", b = TempDir() + "/cmp-b";
  ::mkdir(a.c_str(), 0755);
  ::mkdir(b.c_str(), 0755);
  TestWorker worker("cmp-worker", {"--allow-root", TempDir()});
  const std::string job = TempDir() + "/cmp.fio";
  std::ofstream(job) << "[w]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=1m\n";
  const std::string out = TempDir() + "/cmp.json";
  std::string err;
  const std::string results = TempDir() + "/cmp-results";
  ASSERT_EQ(RunIofleet({"compare", job, "--target", "a=" + a, "--target", "b=" + b, "--repeat", "2", "--hosts", worker.address(),
                 "--output-format", "json", "--output", out, "--results-dir", results}, "cmp", &err), 0) << err;
  v1::CompareReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(out), &report).ok());
  ASSERT_EQ(report.targets_size(), 2);
  EXPECT_EQ(report.repeat(), 2u);
  ASSERT_GT(report.metrics_size(), 0);
  EXPECT_EQ(report.metrics(0).name(), "write IOPS");
  for (const auto& e : report.metrics(0).entries()) {
    EXPECT_EQ(e.samples_size(), 2) << e.target();
    EXPECT_GT(e.median(), 0) << e.target();
  }
  EXPECT_DOUBLE_EQ(report.metrics(0).entries(0).ratio(), 1.0);
  // Interleaved runs put files on both targets.
  struct stat st;
  EXPECT_EQ(::stat((a + "/w.w0.0.0").c_str(), &st), 0);
  EXPECT_EQ(::stat((b + "/w.w0.0.0").c_str(), &st), 0);

  // The results directory: the comparison, and every run's own results under <target>/<run>/.
  std::vector<std::string> dirs = DirectoryNames(results);
  ASSERT_EQ(dirs.size(), 1u);
  const std::string saved = results + "/" + dirs[0];
  EXPECT_THAT(dirs[0], ::testing::EndsWith("-compare-cmp"));
  EXPECT_THAT(DirectoryNames(saved), ::testing::ElementsAre("a", "b", "command.txt", "compare.json", "compare.txt"));
  v1::CompareReport saved_report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(saved + "/compare.json"), &saved_report).ok());
  EXPECT_EQ(saved_report.metrics(0).entries(1).samples(1), report.metrics(0).entries(1).samples(1));
  for (const std::string target : {"a", "b"}) {
    EXPECT_THAT(DirectoryNames(saved + "/" + target), ::testing::ElementsAre("1", "2"));
    for (const std::string run : {"1", "2"}) {
      const std::string dir = saved + "/" + target + "/" + run;
      EXPECT_THAT(DirectoryNames(dir), ::testing::ElementsAre("hosts.json", "intervals.csv", "intervals.ndjson", "job-resolved.json", "job.fio",
                                                       "report.html", "report.txt", "result.json"));
      v1::RunReport run_report;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(dir + "/result.json"), &run_report).ok()) << dir;
      ASSERT_EQ(run_report.jobs_size(), 1);
      EXPECT_EQ(run_report.jobs(0).directions(0).ops(), 256u) << dir << ": 1 MiB in 4 KiB writes";
      EXPECT_THAT(ReadFile(dir + "/job-resolved.json"), HasSubstr(target == "a" ? a : b)) << "the job as run on the target";
      EXPECT_FALSE(ReadFile(dir + "/intervals.ndjson").empty());
    }
  }

  // Result files: comparable ones compare; a different job is refused unless --force.
  const std::string r1 = TempDir() + "/r1.json", r2 = TempDir() + "/r2.json", r3 = TempDir() + "/r3.json";
  ASSERT_EQ(RunIofleet({"run", job, "--hosts", worker.address(), "--directory", a, "--output-format", "json", "--output", r1}, "r1"), 0);
  ASSERT_EQ(RunIofleet({"run", job, "--hosts", worker.address(), "--directory", b, "--output-format", "json", "--output", r2}, "r2"), 0);
  ASSERT_EQ(RunIofleet({"run", "--name=other", "--rw=randread", "--size=1m", "--directory=" + a, "--hosts", worker.address(),
                 "--output-format", "json", "--output", r3}, "r3"), 0);
  EXPECT_EQ(RunIofleet({"compare", r1, r2}, "files"), 0);
  EXPECT_EQ(RunIofleet({"compare", r1, r3}, "files-differ", &err), 2);
  EXPECT_THAT(err, HasSubstr("ran a different job"));
  EXPECT_EQ(RunIofleet({"compare", r1, r3, "--force"}, "files-force"), 0);
}

// Ctrl-C during a comparison ends it after the interrupted run: the results directory keeps
// what ran, says PARTIAL, and the exit status is 1.
TEST(CompareEndToEnd, InterruptedComparisonKeepsWhatRan) {
  const std::string a = TempDir() + "/int-a", b = TempDir() + "/int-b", results = TempDir() + "/int-results";
  ::mkdir(a.c_str(), 0755);
  ::mkdir(b.c_str(), 0755);
  TestWorker worker("int-worker", {"--allow-root", TempDir()});
  const std::string job = TempDir() + "/long.fio";
  std::ofstream(job) << "[l]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nruntime=60s\ntime_based\n";
  TestProcess compare({Runfile("controller/iofleet"), "compare", job, "--target", "a=" + a, "--target", "b=" + b, "--hosts", worker.address(),
                       "--results-dir", results},
                      TempDir() + "/int-compare");
  // Once run 1 measures (its progress line; the worker's IO alone may be the file's layout,
  // and a run stopped before it measured has nothing to keep).
  ASSERT_TRUE(compare.WaitForOutput("run 1 of 1 on a", std::chrono::seconds(20), /*in_stderr=*/true)) << compare.Stderr();
  ASSERT_TRUE(compare.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << compare.Stderr();
  compare.Signal(SIGINT);
  ASSERT_EQ(compare.Wait(std::chrono::seconds(30)).value_or(-1), 1) << compare.Stderr();
  EXPECT_THAT(compare.Stderr(), Not(HasSubstr("on b (")));
  std::vector<std::string> dirs = DirectoryNames(results);
  ASSERT_EQ(dirs.size(), 1u);
  const std::string saved = results + "/" + dirs[0];
  EXPECT_THAT(DirectoryNames(saved), ::testing::ElementsAre("PARTIAL", "a", "command.txt", "compare.json", "compare.txt"));
  EXPECT_THAT(ReadFile(saved + "/PARTIAL"), HasSubstr("interrupted by the user during run 1 on a"));
  EXPECT_THAT(DirectoryNames(saved + "/a/1"), ::testing::Contains("result.json"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// One rule for --local-workers in every command (compare had none: 100000 local workers were
// accepted and started one by one).
TEST(CompareEndToEnd, LocalWorkersHaveTheSameLimitInEveryCommand) {
  const std::string job = TempDir() + "/many-local.fio";
  std::ofstream(job) << "[l]\nrw=randread\nbs=4k\nsize=1m\n";
  const std::vector<std::vector<std::string>> commands = {
      {"compare", job, "--target", "a=" + TempDir() + "/many-a", "--local-workers", "100000"},
      {"run", job, "--local-workers", "100000"},
      {"mdtest", "-d", TempDir() + "/many-md", "-n", "5", "--local-workers", "100000"},
  };
  for (std::vector<std::string> args : commands) {
    args.insert(args.begin(), ::iofleet::testing::Runfile("controller/iofleet"));
    ::iofleet::testing::TestProcess process(args, TempDir() + "/many-local-" + args[1]);
    EXPECT_EQ(process.Wait(std::chrono::seconds(20)).value_or(-1), 2) << args[1] << ": " << process.Stderr();
    EXPECT_THAT(process.Stderr(), ::testing::HasSubstr("--local-workers must be a number from 1 to 64 (got '100000')")) << args[1];
  }
}

}  // namespace
}  // namespace iofleet
