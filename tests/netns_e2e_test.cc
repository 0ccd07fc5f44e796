// Controller and worker on two hosts — network namespaces joined by a veth pair — and the
// network between them cut mid-run. Cut for longer than the lease: the worker stops its IO when
// the lease runs out, and the controller reports the worker lost. Cut for less: the session
// resumes on a new connection, and nothing is lost. Everything created is removed, also on
// failure.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "proto/report.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int Sh(const std::string& command) { return std::system(("PATH=/usr/sbin:/sbin:/usr/bin:/bin; " + command + " >/dev/null 2>&1").c_str()); }

// Two namespaces, "controller" 10.200.N.1 and "worker" 10.200.N.2, deleted on destruction.
struct TwoHosts {
  std::string controller = absl::StrCat("iofc", ::getpid()), worker = absl::StrCat("iofw", ::getpid());
  std::string subnet = absl::StrCat("10.200.", 100 + ::getpid() % 100, ".");
  bool ok = false;
  TwoHosts() {
    ok = Sh("ip netns add " + controller) == 0 && Sh("ip netns add " + worker) == 0 &&
         Sh(absl::StrCat("ip link add vc netns ", controller, " type veth peer name vw netns ", worker)) == 0 &&
         Sh(absl::StrCat("ip -n ", controller, " addr add ", subnet, "1/24 dev vc")) == 0 &&
         Sh(absl::StrCat("ip -n ", worker, " addr add ", subnet, "2/24 dev vw")) == 0 &&
         Sh("ip -n " + controller + " link set lo up") == 0 && Sh("ip -n " + worker + " link set lo up") == 0 &&
         Sh("ip -n " + controller + " link set vc up") == 0 && Sh("ip -n " + worker + " link set vw up") == 0;
  }
  ~TwoHosts() {
    Sh("ip netns del " + controller);
    Sh("ip netns del " + worker);
  }
};

TEST(NetworkCut, WorkerStopsIoAndControllerReportsItLost) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  TwoHosts hosts;
  ASSERT_TRUE(hosts.ok) << "could not create the network namespaces";
  const std::string dir = TempDir() + "/netcut", token = TempDir() + "/netcut.token";
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(token) << "cut-test-token\n";
  const std::string address = hosts.subnet + "2:7420";
  TestProcess worker({"/usr/bin/ip", "netns", "exec", hosts.worker, Runfile("worker/iofleet-worker"), "--listen", address,
                      "--allow-root", dir, "--token-file", token},
                     TempDir() + "/netcut-worker");
  ASSERT_TRUE(worker.WaitForOutput("listening on", std::chrono::seconds(10))) << worker.Stderr();
  const std::string job = TempDir() + "/netcut.fio";
  std::ofstream(job) << "[long]\nrw=randwrite\nsize=4m\nruntime=60s\ntime_based\ndirectory=" << dir << "\n";
  TestProcess controller({"/usr/bin/ip", "netns", "exec", hosts.controller, Runfile("controller/iofleet"), "run", job, "--hosts", address,
                          "--token-file", token, "--lease", "2s"},
                         TempDir() + "/netcut-controller");
  struct stat st;
  const auto started = std::chrono::steady_clock::now();
  while (::stat((dir + "/long.w0.0.0").c_str(), &st) != 0 && std::chrono::steady_clock::now() - started < std::chrono::seconds(15)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(controller.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << controller.Stderr();  // IO under way
  ASSERT_EQ(Sh("ip -n " + hosts.controller + " link set vc down"), 0);
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_TRUE(worker.WaitForOutput("stopping its IO", std::chrono::seconds(10), /*in_stderr=*/true)) << worker.Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - cut, std::chrono::seconds(5));
  // The controller gives up on the worker and says so.
  const auto code = controller.Wait(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(controller.Stderr(), HasSubstr(absl::StrCat("worker ", address, " lost")));
  // And the worker is ready for the next run: nothing writes to the file any more.
  ASSERT_EQ(::stat((dir + "/long.w0.0.0").c_str(), &st), 0);
  const auto mtime = st.st_mtim;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(::stat((dir + "/long.w0.0.0").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_nsec, mtime.tv_nsec);
  EXPECT_LT(::iofleet::testing::BytesMovedDuring(worker.pid(), std::chrono::seconds(1)), ::iofleet::testing::kIdleBytesPerSecond)
      << "orphan load";
}

// A cut in which the worker's end of the connection goes (a NAT timeout, say), shorter than
// the lease: the controller reconnects and resumes the session, the worker sends
// again what the controller missed, and the run ends as if nothing happened — no worker lost,
// every interval there once, totals equal to the sum of the intervals.
TEST(NetworkCut, ACutShorterThanTheLeaseIsHealedAndNothingIsLost) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  TwoHosts hosts;
  ASSERT_TRUE(hosts.ok) << "could not create the network namespaces";
  const std::string dir = TempDir() + "/shortcut", results = TempDir() + "/shortcut-results", token = TempDir() + "/shortcut.token";
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(token) << "short-cut-token\n";
  const std::string address = hosts.subnet + "2:7421";
  TestProcess worker({"/usr/bin/ip", "netns", "exec", hosts.worker, Runfile("worker/iofleet-worker"), "--listen", address,
                      "--allow-root", dir, "--token-file", token},
                     TempDir() + "/shortcut-worker");
  ASSERT_TRUE(worker.WaitForOutput("listening on", std::chrono::seconds(10))) << worker.Stderr();
  const std::string job = TempDir() + "/shortcut.fio";
  std::ofstream(job) << "[steady]\nrw=randwrite\nsize=1m\nrate_iops=200\nruntime=14s\ntime_based\ndirectory=" << dir << "\n";
  TestProcess controller({"/usr/bin/ip", "netns", "exec", hosts.controller, Runfile("controller/iofleet"), "run", job, "--hosts",
                          address, "--token-file", token, "--lease", "12s", "--results-dir", results},
                         TempDir() + "/shortcut-controller");
  ASSERT_TRUE(controller.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << controller.Stderr();  // IO under way
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_EQ(Sh("ip -n " + hosts.controller + " link set vc down"), 0);
  // While cut, the worker's end of the connection goes (as behind a NAT that timed it out):
  // healed, the controller's next packet meets a reset, not a connection that carries on.
  ASSERT_EQ(Sh("ip netns exec " + hosts.worker + " ss -K src " + hosts.subnet + "2"), 0);
  const bool detached = worker.WaitForOutput("waits for a resume", std::chrono::seconds(9), /*in_stderr=*/true);
  ASSERT_EQ(Sh("ip -n " + hosts.controller + " link set vc up"), 0);
  const auto cut_length = std::chrono::steady_clock::now() - cut;
  ASSERT_TRUE(detached) << worker.Stderr();
  const auto code = controller.Wait(std::chrono::seconds(40));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << controller.Stderr();
  EXPECT_THAT(controller.Stderr(), HasSubstr("the session resumed, nothing lost"));
  EXPECT_THAT(controller.Stderr(), Not(HasSubstr(absl::StrCat("worker ", address, " lost"))));
  std::vector<std::string> runs;
  for (const auto& entry : std::filesystem::directory_iterator(results)) runs.push_back(entry.path());
  ASSERT_EQ(runs.size(), 1u);
  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(runs[0] + "/result.json"), &report).ok());
  EXPECT_EQ(report.workers_completed(), 1u);
  ASSERT_EQ(report.workers_size(), 1);
  EXPECT_EQ(report.workers(0).session_resumes(), 1u);
  EXPECT_GE(report.workers(0).longest_silence_ns(), std::chrono::duration_cast<std::chrono::nanoseconds>(cut_length).count()) << controller.Stderr() << worker.Stderr();
  ASSERT_EQ(report.jobs_size(), 1);
  const v1::JobResult& result = report.jobs(0);
  ASSERT_GE(result.intervals_size(), 14);
  uint64_t interval_ops = 0;
  for (int i = 0; i < result.intervals_size(); ++i) {
    EXPECT_EQ(result.intervals(i).interval_index(), static_cast<uint32_t>(i));
    EXPECT_EQ(result.intervals(i).workers_reporting(), 1u) << "interval " << i << " is missing its worker's report";
    for (const v1::WorkerInterval& w : result.intervals(i).workers()) interval_ops += w.ops();
  }
  uint64_t total_ops = 0;
  for (const v1::DirectionResult& d : result.directions()) total_ops += d.ops();
  EXPECT_EQ(interval_ops, total_ops);
  EXPECT_GE(total_ops, 200u * 13) << "the IO went on through the cut";
}

}  // namespace
}  // namespace iofleet
