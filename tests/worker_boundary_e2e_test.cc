// The worker as a security boundary, tried the way a hostile or careless user would: the tree
// changed under a run (a directory swapped for a symlink between and during phases) must not
// take any removal, rename, stat or create outside --allow-root. Real worker and controller
// processes over gRPC on 127.0.0.1, on the test's temporary directory.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "proto/worker_service.grpc.pb.h"
#include "tests/test_process.h"
#include "tests/worker_boundary.h"

namespace iofleet {
namespace {

using ::iofleet::testing::ConnectTcp;
using ::iofleet::testing::DirectoryEntries;
using ::iofleet::testing::DirectoryNames;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::PathExists;
using ::iofleet::testing::TestWorker;
using ::iofleet::testing::WaitFor;
using ::iofleet::testing::WorkerBoundary;
using ::iofleet::testing::Outcome;
using ::iofleet::testing::Wait;
using ::iofleet::testing::Controller;
using ::testing::HasSubstr;

// mdtest -C, then the tree directory becomes a symlink to a directory holding files of the
// same names; mdtest -T (stat) and mdtest -r (removal) with the same options must refuse to
// go through it instead of statting and deleting the outside files.
TEST_F(WorkerBoundary, MdtestTreeSwappedBetweenPhasesIsRefused) {
  TestWorker worker("boundary-md-worker", {"--allow-root", root_});
  ASSERT_FALSE(worker.address().empty());
  const std::vector<std::string> md = {"mdtest", "-d", root_ + "/md", "-n", "5", "-F", "--hosts", worker.address()};
  auto with = [&](const std::string& flag) {
    std::vector<std::string> args = md;
    args.push_back(flag);
    return Controller(args);
  };
  TestProcess create(with("-C"), base_ + "/create");
  Outcome created = Wait(create);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string tree = root_ + "/md/test-dir.0-0/mdtest_tree.0";
  ASSERT_EQ(DirectoryEntries(tree), 5);

  const std::vector<std::string> planted = {"file.mdtest.0.0", "file.mdtest.0.1", "file.mdtest.0.2", "file.mdtest.0.3", "file.mdtest.0.4"};
  PlantOutside(planted);
  SwapForSymlink(tree);

  TestProcess stat(with("-T"), base_ + "/stat");
  Outcome statted = Wait(stat);
  EXPECT_NE(statted.exit_code, 0) << "a stat phase went through a swapped directory";
  EXPECT_THAT(statted.err, HasSubstr("symlink")) << statted.err;
  EXPECT_THAT(statted.err, HasSubstr(tree)) << statted.err;

  TestProcess remove(with("-r"), base_ + "/remove");
  Outcome removed = Wait(remove);
  EXPECT_NE(removed.exit_code, 0) << "a removal phase went through a swapped directory";
  EXPECT_THAT(removed.err, HasSubstr("symlink")) << removed.err;
  EXPECT_THAT(removed.err, HasSubstr("PERMISSION_DENIED")) << "a refusal comes back as a refusal: " << removed.err;
  ExpectOutsideUntouched(planted);
  EXPECT_EQ(DirectoryEntries(tree + ".moved"), 5) << "the run's own files are where it made them";
  EXPECT_TRUE(PathExists(tree)) << "tree removal went through the symlink";
}

// The tree directory is swapped while a long creation phase runs: what the task still creates
// goes into the real directory (its descriptor), never through the symlink; the phase then
// fails naming the swapped path, and the outside directory is untouched.
TEST_F(WorkerBoundary, MdtestTreeSwappedDuringAPhaseIsRefused) {
  TestWorker worker("boundary-md-during-worker", {"--allow-root", root_});
  ASSERT_FALSE(worker.address().empty());
  PlantOutside({"file.mdtest.0.0"});
  TestProcess run(Controller({"mdtest", "-d", root_ + "/md", "-n", "400000", "-F", "-C", "-W", "20", "--hosts", worker.address()}),
                  base_ + "/during");
  const std::string tree = root_ + "/md/test-dir.0-0/mdtest_tree.0";
  ASSERT_TRUE(WaitFor([&] { return DirectoryEntries(tree) > 200; }, std::chrono::seconds(30))) << "creation never got going";
  SwapForSymlink(tree);
  Outcome outcome = Wait(run);
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_THAT(outcome.err, HasSubstr("symlink")) << outcome.err;
  ExpectOutsideUntouched({"file.mdtest.0.0"});
  EXPECT_GT(DirectoryEntries(tree + ".moved"), 200);
}

// --savePerOpDataCSV: the files a task writes stay beneath the roots too. A directory that is a
// symlink out of them is refused before anything is made; one swapped for such a symlink while
// a run goes on is refused for the next phase (when the worker lays it out, or when its task
// opens its file there, beneath the root), and the outside files of the same names are left as
// they were.
TEST_F(WorkerBoundary, PerOpCsvThroughASymlinkOutOfTheRootsIsRefused) {
  TestWorker worker("boundary-perop-worker", {"--allow-root", root_});
  ASSERT_FALSE(worker.address().empty());
  const std::vector<std::string> planted = {"ops-File creation-00000.csv", "ops-File stat-00000.csv"};
  PlantOutside(planted);
  ASSERT_EQ(::symlink(outside_.c_str(), (root_ + "/linked").c_str()), 0);
  TestProcess linked(Controller({"mdtest", "-d", root_ + "/md", "-n", "5", "-F", "--savePerOpDataCSV", root_ + "/linked/ops", "--hosts",
                                 worker.address()}),
                     base_ + "/linked");
  Outcome refused = Wait(linked);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("outside this worker's allowed roots")) << refused.err;
  EXPECT_FALSE(PathExists(root_ + "/md")) << "a test directory was made for a refused run";

  ASSERT_EQ(::mkdir((root_ + "/csv").c_str(), 0755), 0);
  TestProcess run(Controller({"mdtest", "-d", root_ + "/md", "-n", "400000", "-F", "-C", "-T", "-W", "3", "--savePerOpDataCSV",
                              root_ + "/csv/ops", "--hosts", worker.address()}),
                  base_ + "/swapped");
  const std::string tree = root_ + "/md/test-dir.0-0/mdtest_tree.0";
  ASSERT_TRUE(WaitFor([&] { return DirectoryEntries(tree) > 200; }, std::chrono::seconds(30))) << "creation never got going";
  SwapForSymlink(root_ + "/csv");
  Outcome outcome = Wait(run);
  EXPECT_NE(outcome.exit_code, 0) << "the stat phase wrote its file through the symlink";
  EXPECT_THAT(outcome.err, HasSubstr("--savePerOpDataCSV")) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr(root_ + "/csv/ops")) << outcome.err;
  ExpectOutsideUntouched(planted);
  EXPECT_TRUE(PathExists(root_ + "/csv.moved/ops-File creation-00000.csv")) << "the creation's file is where it was opened";
}

// fio unlink=1: the job's directory is swapped for a symlink while the job runs; the end-of-job
// unlink must not delete the outside file of the same name, and the run must say why it failed.
TEST_F(WorkerBoundary, UnlinkAfterTheDirectoryWasSwappedIsRefused) {
  TestWorker worker("boundary-unlink-worker", {"--allow-root", root_});
  ASSERT_FALSE(worker.address().empty());
  PlantOutside({"victim.conf"});
  const std::string dir = root_ + "/job";
  const std::string job = base_ + "/unlink.fio";
  // create_on_open: the job thread itself creates the file, so its appearance means IO began.
  std::ofstream(job) << "[j]\nrw=write\nbs=4k\nsize=1m\ntime_based=1\nruntime=2s\nunlink=1\ncreate_on_open=1\nfilename=victim.conf\n"
                     << "directory=" << dir << "\n";
  TestProcess run(Controller({"run", job, "--hosts", worker.address()}), base_ + "/unlink");
  ASSERT_TRUE(WaitFor([&] { return PathExists(dir + "/victim.conf"); }, std::chrono::seconds(30)));
  SwapForSymlink(dir);
  Outcome outcome = Wait(run);
  EXPECT_NE(outcome.exit_code, 0) << "the run claimed success although its unlink was refused";
  EXPECT_THAT(outcome.err, HasSubstr("PERMISSION_DENIED: unlink " + dir + "/victim.conf")) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("symlink")) << outcome.err;
  ExpectOutsideUntouched({"victim.conf"});
  EXPECT_TRUE(PathExists(dir + ".moved/victim.conf")) << "the run's own file is where it made it";
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// gRPC listens with SO_REUSEPORT: a second worker on a port in use used to start and take
// half of the controller's calls. It must refuse, naming the port.
TEST_F(WorkerBoundary, ASecondWorkerOnAPortInUseRefusesToStart) {
  TestWorker first("boundary-port-first", {"--allow-root", root_});
  ASSERT_FALSE(first.address().empty());
  TestProcess second({Runfile("worker/iofleet-worker"), "--listen", first.address(), "--allow-root", root_}, base_ + "/second");
  const std::optional<int> code = second.Wait(std::chrono::seconds(10));
  ASSERT_TRUE(code.has_value()) << "the second worker is still running on " << first.address();
  EXPECT_EQ(*code, 1);
  const std::string port = first.address().substr(first.address().rfind(':') + 1);
  EXPECT_THAT(second.Stderr(), HasSubstr("port " + port + " on 127.0.0.1 is already in use")) << second.Stderr();
}

// A worker that cannot run for three leases (SIGSTOP here; a saturated or frozen host in the
// field) is late, not lost: its controller was there all along, the connection stays, and the
// worker does not count the time it could not run against its lease. The run completes and the
// report shows the stall.
TEST_F(WorkerBoundary, AWorkerPausedForAFewLeasesIsLateNotLost) {
  TestWorker a("boundary-pause-a", {"--allow-root", root_}), b("boundary-pause-b", {"--allow-root", root_});
  ASSERT_FALSE(a.address().empty());
  ASSERT_FALSE(b.address().empty());
  const std::string job = base_ + "/pause.fio";
  std::ofstream(job) << "[paced]\nrw=randwrite\nbs=4k\nsize=1m\ntime_based=1\nruntime=8s\nrate_iops=200\ncreate_on_open=1\ndirectory=" << root_ << "/pause\n";
  TestProcess run(Controller({"run", job, "--hosts", a.address() + "," + b.address(), "--lease", "1s", "--output-format", "iofleet-json",
                              "--output", base_ + "/pause.json"}),
                  base_ + "/pause");
  ASSERT_TRUE(WaitFor([&] { return DirectoryEntries(root_ + "/pause") == 2; }, std::chrono::seconds(30)));
  ASSERT_TRUE(WaitFor([&] { return ::iofleet::testing::BytesMovedDuring(b.process().pid(), std::chrono::milliseconds(300)) >=
                                   ::iofleet::testing::kIdleBytesPerSecond; },
                      std::chrono::seconds(30)));  // running, not only prepared
  b.process().Signal(SIGSTOP);
  // The pause's length is the scenario (three leases, less than the four after which the
  // controller takes a silent connection for dead), not a wait for something to happen.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  b.process().Signal(SIGCONT);
  Outcome outcome = Wait(run);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::Not(HasSubstr(" lost"))) << outcome.err;
  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(::iofleet::testing::ReadFile(base_ + "/pause.json"), &report).ok());
  EXPECT_EQ(report.workers_completed(), 2u);
  ASSERT_EQ(report.workers_size(), 2);
  // The 3 s pause, less at most the transit of the last message sent before it (a loaded machine
  // delivers it late); the worker that ran on is heard every interval (1 s).
  EXPECT_GE(report.workers(1).longest_silence_ns(), 2'500'000'000) << "the stall is not in the report";
  EXPECT_LT(report.workers(0).longest_silence_ns(), 2'500'000'000);
}

// A worker paused for longer than its controller waits (its connection taken for dead after
// four leases, no resume within two more): it is lost, and the report says how — not that the
// worker "was restarted", which it never was. Resumed, it stops its IO within a lease.
TEST_F(WorkerBoundary, AWorkerPausedTooLongIsLostNotRestartedAndStopsItsIo) {
  TestWorker a("boundary-stall-a", {"--allow-root", root_}), b("boundary-stall-b", {"--allow-root", root_});
  const std::string job = base_ + "/stall.fio";
  std::ofstream(job) << "[paced]\nrw=randwrite\nbs=4k\nsize=1m\ntime_based=1\nruntime=10s\nrate_iops=200\ncreate_on_open=1\ndirectory=" << root_ << "/stall\n";
  TestProcess run(Controller({"run", job, "--hosts", a.address() + "," + b.address(), "--lease", "1s"}), base_ + "/stall");
  ASSERT_TRUE(WaitFor([&] { return DirectoryEntries(root_ + "/stall") == 2; }, std::chrono::seconds(30)));
  // Its run has started (it writes), not only been prepared: paused before the start, the run
  // would end without ever starting (a loaded machine got there first).
  ASSERT_TRUE(WaitFor([&] { return ::iofleet::testing::BytesMovedDuring(b.process().pid(), std::chrono::milliseconds(300)) >=
                                   ::iofleet::testing::kIdleBytesPerSecond; },
                      std::chrono::seconds(30)));
  b.process().Signal(SIGSTOP);
  // Paused until the controller has given it up and ended the run.
  Outcome outcome = Wait(run);
  b.process().Signal(SIGCONT);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("worker " + b.address() + " lost")) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("not heard for two leases")) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::Not(HasSubstr("restarted"))) << outcome.err;
  EXPECT_TRUE(WaitFor([&] { return ::iofleet::testing::BytesMovedDuring(b.process().pid(), std::chrono::milliseconds(500)) <
                                   ::iofleet::testing::kIdleBytesPerSecond / 2; },
                      std::chrono::seconds(5)))
      << "the worker given up on still does IO";
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// A worker killed while the workers lay out a large read job: the controller used to wait for
// every other layout to finish (10 s for 3 GB) before saying anything. It must name the lost
// worker at once and stop the others' layouts.
TEST_F(WorkerBoundary, AWorkerLostDuringPrepareIsReportedAtOnceAndTheOthersStop) {
  TestWorker a("boundary-prep-a", {"--allow-root", root_}), b("boundary-prep-b", {"--allow-root", root_});
  ASSERT_FALSE(a.address().empty());
  ASSERT_FALSE(b.address().empty());
  const std::string job = base_ + "/layout.fio";
  // A read job: each worker fills its 4 GiB file with data before the start.
  std::ofstream(job) << "[big]\nrw=read\nbs=1m\nsize=4g\ndirectory=" << root_ << "/prep\n";
  TestProcess run(Controller({"run", job, "--hosts", a.address() + "," + b.address()}), base_ + "/prep");
  auto size_of = [&](const std::string& worker_index) {
    struct stat st;
    return ::stat((root_ + "/prep/big.w" + worker_index + ".0.0").c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  };
  // Both layouts under way.
  ASSERT_TRUE(WaitFor([&] { return size_of("0") > (64u << 20) && size_of("1") > (64u << 20); }, std::chrono::seconds(60)));
  b.process().Signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  const std::optional<int> code = run.Wait(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(3)) << "the loss was not reported at once";
  EXPECT_EQ(*code, 1) << run.Stderr();
  EXPECT_THAT(run.Stderr(), HasSubstr(b.address())) << run.Stderr();
  EXPECT_THAT(run.Stderr(), HasSubstr("preparation stopped on 1 other worker(s)")) << run.Stderr();
  // The surviving worker's layout has stopped: its file no longer grows.
  const uint64_t settled = size_of("0");
  EXPECT_LT(settled, 4ull << 30) << "worker a finished its whole layout";
  EXPECT_FALSE(WaitFor([&] { return size_of("0") > settled + (8u << 20); }, std::chrono::milliseconds(1500))) << "worker a kept laying out";
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// Connections that open and never send a request used to hold the metrics server's only
// thread for 30 s each: ~220 of them made /metrics unreachable. A scrape must still answer.
TEST_F(WorkerBoundary, MetricsAnswerWhileHalfOpenConnectionsAreHeld) {
  TestProcess worker({Runfile("worker/iofleet-worker"), "--listen", "127.0.0.1:0", "--allow-root", root_, "--metrics-listen", "127.0.0.1:0"},
                     base_ + "/metrics-worker");
  ASSERT_TRUE(worker.WaitForOutput("/metrics", std::chrono::seconds(10)));
  const std::string out = worker.Stdout();
  const size_t at = out.find("http://") + 7;
  const std::string address = out.substr(at, out.find("/metrics", at) - at);
  std::vector<int> held;
  for (int i = 0; i < 220; ++i) {
    const int fd = ConnectTcp(address);
    ASSERT_GE(fd, 0) << "connection " << i;
    held.push_back(fd);
  }
  const auto began = std::chrono::steady_clock::now();
  const int fd = ConnectTcp(address);
  ASSERT_GE(fd, 0);
  timeval timeout{.tv_sec = 15, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + address + "\r\n\r\n";
  ASSERT_EQ(::write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  const auto took = std::chrono::steady_clock::now() - began;
  for (int h : held) ::close(h);
  EXPECT_THAT(response, HasSubstr("200 OK")) << "no answer while half-open connections were held";
  EXPECT_LT(took, std::chrono::seconds(5)) << "the scrape waited behind the half-open connections";
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// A token over plaintext beyond loopback can be read by anyone on the path: the worker says so
// loudly at start-up. Run in a network namespace of its own (nothing reaches it there).
TEST_F(WorkerBoundary, ATokenOverPlaintextBeyondLoopbackIsWarnedAbout) {
  if (::geteuid() != 0) GTEST_SKIP() << "a private network namespace (unshare -n) needs root";
  const std::string token = base_ + "/token";
  std::ofstream(token) << "s3cret\n";
  TestProcess worker({"/usr/bin/unshare", "-n", Runfile("worker/iofleet-worker"), "--listen", "0.0.0.0:0", "--allow-root", root_,
                      "--token-file", token},
                     base_ + "/plaintext-worker");
  ASSERT_TRUE(worker.WaitForOutput("listening on", std::chrono::seconds(10))) << worker.Stderr();
  EXPECT_THAT(worker.Stderr(), HasSubstr("WARNING: listening on 0.0.0.0:0 in plaintext with --token-file"));
  EXPECT_THAT(worker.Stderr(), HasSubstr("Use mutual TLS"));
}

}  // namespace
}  // namespace iofleet
