// `iofleet compare` end to end: the same job on two targets with real workers, and earlier
// result files compared (and refused when their jobs differ).
#include <sys/stat.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;

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
  ASSERT_EQ(RunIofleet({"compare", job, "--target", "a=" + a, "--target", "b=" + b, "--repeat", "2", "--hosts", worker.address(),
                 "--output-format", "json", "--output", out}, "cmp", &err), 0) << err;
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

}  // namespace
}  // namespace iofleet
