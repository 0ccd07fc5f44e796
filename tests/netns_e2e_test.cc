// Controller and worker on two hosts — network namespaces joined by a veth pair — and the
// network between them cut mid-run: the worker stops its IO when the lease runs out, and the
// controller reports the worker lost. Everything created is removed, also on failure.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::testing::HasSubstr;

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

}  // namespace
}  // namespace iofleet
