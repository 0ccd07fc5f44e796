// End-to-end faults: unreachable, silent, dead and restarted workers, --on-worker-loss=abort,
// escapes refused at open, incompatible versions, a controller that dies and a run
// interrupted by the user. Real iofleet-worker processes and the real controller on 127.0.0.1.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/test_process.h"

#include "tests/e2e_fixture.h"

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
using ::testing::HasSubstr;
using ::testing::Not;

using ::iofleet::testing::ControllerRun;
using ::iofleet::testing::EndToEnd;
using ::iofleet::testing::FindDirection;
using ::iofleet::testing::FioNumber;
using ::iofleet::testing::kRunTimeout;
using ::iofleet::testing::P99;
using ::iofleet::testing::ParseJsonReport;
using ::iofleet::testing::RunController;
using ::iofleet::testing::RunJson;
using ::iofleet::testing::WriteJob;

TEST_F(EndToEnd, BadJobFileGivesFileLineBeforeTouchingWorkers) {
  // The host is unreachable: the job error must come first, without waiting for it.
  const std::string job = WriteJob("bad.fio", "[global]\nbs=4k\n\n[j]\nrw=randread\nszie=1m\n");
  const auto started = std::chrono::steady_clock::now();
  ControllerRun run = RunController({"run", job, "--hosts", "127.0.0.1:1"}, "badjob");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr(job + ":6: unknown option 'szie' (did you mean size?)"));
  EXPECT_THAT(run.err, Not(HasSubstr("unreachable")));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_EQ(run.out, "");
}

TEST_F(EndToEnd, UnreachableHostIsNamedWithinSeconds) {
  TestWorker a("worker-unreach", {"--allow-root", data_});
  const auto started = std::chrono::steady_clock::now();
  ControllerRun run = RunController({"run", WriteJob("u.fio", absl::StrCat("[j]\nsize=1m\ndirectory=", data_, "\n")),
                                     "--hosts", absl::StrCat(a.address(), ",127.0.0.1:1")}, "unreachable");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("worker 127.0.0.1:1 unreachable"));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
}

TEST_F(EndToEnd, HostThatAcceptsButNeverAnswersIsNamedWithinSeconds) {
  // A listening socket nobody accepts on: TCP connects, gRPC never gets an answer.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string silent = absl::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  const auto started = std::chrono::steady_clock::now();
  ControllerRun run = RunController({"run", WriteJob("s.fio", absl::StrCat("[j]\nsize=1m\ndirectory=", data_, "\n")), "--hosts", silent}, "silent");
  ::close(fd);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("worker ", silent, " unreachable")));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(8));
}

TEST_F(EndToEnd, DeadWorkerIsReportedAndTheOthersResultsKept) {
  TestWorker a("worker-live", {"--allow-root", data_});
  auto b = std::make_unique<TestWorker>("worker-dies", std::vector<std::string>{"--allow-root", data_});
  const std::string dead = b->address();
  const std::string json_path = TempDir() + "/dead.json";
  TestProcess controller({Runfile("controller/iofleet"), "run",
                          WriteJob("dead.fio", absl::StrCat("[j]\nrw=randwrite\nsize=1m\nruntime=4s\ntime_based\ndirectory=", data_, "\n")),
                          "--hosts", absl::StrCat(a.address(), ",", dead), "--interval", "500ms", "--output-format", "json", "--output", json_path},
                         TempDir() + "/dead");
  ASSERT_TRUE(controller.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << controller.Stderr();  // IO under way
  b.reset();  // SIGKILL: the worker vanishes mid-run
  const auto exit_code = controller.Wait(std::chrono::seconds(20));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 1);
  v1::RunReport report;
  google::protobuf::Struct fio;
  ASSERT_TRUE(ParseJsonReport(ReadFile(json_path), &fio, &report)) << controller.Stderr();
  EXPECT_THAT(absl::StrJoin(report.problems(), "\n"), HasSubstr(absl::StrCat("worker ", dead, " lost at ")));
  EXPECT_EQ(report.workers_completed(), 1u);
  EXPECT_EQ(report.workers_expected(), 2u);
  const v1::JobResult& job = report.jobs(0);
  const v1::DirectionResult* live = FindDirection(job.workers(0).directions(), "write");
  const v1::DirectionResult* lost = FindDirection(job.workers(1).directions(), "write");
  ASSERT_NE(live, nullptr);
  ASSERT_NE(lost, nullptr) << "the dead worker's intervals before it died are kept";
  EXPECT_GT(lost->ops(), 0u);
  EXPECT_GE(job.workers(0).elapsed_ns(), 4'000'000'000u);
  EXPECT_LT(job.workers(1).elapsed_ns(), 3'500'000'000u);
  EXPECT_EQ(FindDirection(job.directions(), "write")->ops(), live->ops() + lost->ops());
  EXPECT_LT(BytesMovedDuring(a.process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
}

// A worker restarted on the same address mid-run: the controller names it as lost and
// restarted (it no longer knows the run), keeps the other worker's results, and the new
// process does no IO for the old run.
TEST_F(EndToEnd, WorkerRestartedMidRunIsNamedAndDoesNoIo) {
  TestWorker a("worker-stays", {"--allow-root", data_});
  auto b = std::make_unique<TestWorker>("worker-restarts", std::vector<std::string>{"--allow-root", data_});
  const std::string address = b->address();
  TestProcess controller({Runfile("controller/iofleet"), "run",
                          WriteJob("restart.fio", absl::StrCat("[j]\nrw=randwrite\nsize=1m\nruntime=5s\ntime_based\ndirectory=", data_, "\n")),
                          "--hosts", absl::StrCat(a.address(), ",", address)},
                         TempDir() + "/restart");
  ASSERT_TRUE(controller.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << controller.Stderr();  // IO under way
  b.reset();  // SIGKILL
  TestProcess again({Runfile("worker/iofleet-worker"), "--listen", address, "--allow-root", data_}, TempDir() + "/worker-restarted");
  ASSERT_TRUE(again.WaitForOutput("listening", std::chrono::seconds(10))) << again.Stderr();
  const auto exit_code = controller.Wait(std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 1);
  EXPECT_THAT(controller.Stderr(), HasSubstr(absl::StrCat("worker ", address, " lost at ")));
  EXPECT_THAT(controller.Stderr(), HasSubstr("it was restarted (or another worker now listens there), and does no IO for this run")) << controller.Stderr();
  EXPECT_THAT(controller.Stdout(), HasSubstr("1 of 2 workers completed"));
  EXPECT_LT(BytesMovedDuring(again.pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "the restarted worker does IO";
  EXPECT_LT(BytesMovedDuring(a.process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
}

TEST_F(EndToEnd, OnWorkerLossAbortStopsEveryWorker) {
  TestWorker a("worker-abort-live", {"--allow-root", data_});
  auto b = std::make_unique<TestWorker>("worker-abort-dies", std::vector<std::string>{"--allow-root", data_});
  TestProcess controller({Runfile("controller/iofleet"), "run",
                          WriteJob("abort.fio", absl::StrCat("[j]\nrw=randwrite\nsize=1m\nruntime=30s\ntime_based\ndirectory=", data_, "\n")),
                          "--hosts", absl::StrCat(a.address(), ",", b->address()), "--on-worker-loss", "abort"},
                         TempDir() + "/abort");
  ASSERT_TRUE(controller.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << controller.Stderr();  // IO under way
  const auto killed = std::chrono::steady_clock::now();
  b.reset();
  const auto exit_code = controller.Wait(std::chrono::seconds(20));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 1);
  // The loss is noticed at once (the stream breaks) and the whole run stops within 2 s + the
  // final reports: well under 4 s.
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(4)) << "the loss was not noticed, or the live worker was not stopped";
  EXPECT_THAT(controller.Stderr(), HasSubstr("aborted (--on-worker-loss=abort)"));
  EXPECT_LT(BytesMovedDuring(a.process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
}

// Escapes that pass the directory check and would be followed by a plain open(2): a file
// name that is a symlink to a file outside, a symlinked directory pointing out, "..", and an
// mdtest tree whose iteration directory is a planted symlink. Each is refused with the
// reason; the outside file keeps its contents and nothing appears outside.
TEST_F(EndToEnd, SymlinkAndDotDotEscapesAreRefusedAtOpen) {
  const std::string root = data_ + "/jail", outside = data_ + "/outside";
  ::mkdir(root.c_str(), 0755);
  ::mkdir(outside.c_str(), 0755);
  std::ofstream(outside + "/precious") << "keep me";
  ASSERT_EQ(::symlink((outside + "/precious").c_str(), (root + "/link-to-file").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/link-to-dir").c_str()), 0);
  TestWorker a("worker-jail", {"--allow-root", root});
  const std::vector<std::pair<std::string, std::string>> escapes = {
      {"file-symlink", absl::StrCat("[j]\nrw=write\nsize=64k\ndirectory=", root, "\nfilename=link-to-file\n")},
      {"create-on-open", absl::StrCat("[j]\nrw=write\nsize=64k\ncreate_on_open=1\ndirectory=", root, "\nfilename=link-to-file\n")},
      {"dir-symlink-name", absl::StrCat("[j]\nrw=write\nsize=64k\nfilename=", root, "/link-to-dir/new\n")},
      {"dotdot", absl::StrCat("[j]\nrw=write\nsize=64k\nfilename=", root, "/../outside/new\n")},
  };
  for (const auto& [name, job] : escapes) {
    ControllerRun run = RunController({"run", WriteJob(name + ".fio", job), "--hosts", a.address()}, "escape-" + name);
    EXPECT_NE(run.exit_code, 0) << name;
    EXPECT_THAT(run.err, ::testing::AnyOf(HasSubstr("leads outside the worker's allowed roots"), HasSubstr("outside this worker's allowed roots")))
        << name << ": " << run.err;
  }
  // mdtest: the tree's iteration directory planted as a symlink to the outside.
  ::mkdir((root + "/md").c_str(), 0755);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/md/test-dir.0-0").c_str()), 0);
  ControllerRun md = RunController({"mdtest", "-d", root + "/md", "-n", "5", "-F", "--hosts", a.address()}, "escape-mdtest");
  EXPECT_NE(md.exit_code, 0);
  EXPECT_THAT(md.err, HasSubstr("a symlink is refused")) << md.err;

  EXPECT_TRUE(ReadFile(outside + "/precious") == "keep me") << "the file outside the root was written";
  EXPECT_EQ(DirectoryEntries(outside), 1) << "something was created outside the allowed root";
}

TEST_F(EndToEnd, WorkerRefusesPathsOutsideItsRoots) {
  const std::string allowed = data_ + "/allowed";
  ::mkdir(allowed.c_str(), 0755);
  TestWorker a("worker-roots", {"--allow-root", allowed});
  ControllerRun run = RunController({"run", WriteJob("o.fio", absl::StrCat("[j]\nrw=write\nsize=1m\ndirectory=", data_, "/elsewhere\n")),
                                     "--hosts", a.address()}, "outside");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("outside this worker's allowed roots"));
  struct stat st;
  EXPECT_NE(::stat((data_ + "/elsewhere").c_str(), &st), 0) << "the refused directory was created";
}

// Each worker's clock is measured over its session: the report gives every worker's offset and
// round trip, and names one whose clock is off by more than 1% of the interval (its intervals
// are cut that far from the others').
TEST_F(EndToEnd, AWorkerClockOffByMoreThanOnePercentOfTheIntervalIsNamed) {
  TestWorker steady("worker-steady", {"--allow-root", data_});
  TestWorker skewed("worker-skewed", {"--allow-root", data_, "--clock-skew", "40ms"});
  ControllerRun run = RunJson({"run", WriteJob("clock.fio", absl::StrCat("[j]\nrw=write\nsize=256k\ndirectory=", data_, "\n")),
                               "--hosts", absl::StrCat(steady.address(), ",", skewed.address()), "--interval", "1s"}, "clock");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("worker ", skewed.address(), ": its clock is ")));
  EXPECT_THAT(run.err, HasSubstr("ms ahead of the controller's"));
  EXPECT_THAT(run.err, Not(HasSubstr(absl::StrCat("worker ", steady.address(), ": its clock"))));
  ASSERT_EQ(run.report.workers_size(), 2);
  EXPECT_GT(run.report.workers(0).round_trip_ns(), 0);
  EXPECT_LT(std::abs(run.report.workers(0).clock_offset_ns()), 5'000'000) << "the steady worker shares our clock";
  EXPECT_GT(run.report.workers(1).clock_offset_ns(), 35'000'000);
  EXPECT_LT(run.report.workers(1).clock_offset_ns(), 45'000'000);
  EXPECT_GT(run.report.workers(0).start_lead_ns(), 0) << "the start command arrived ahead of the instant";
}

TEST_F(EndToEnd, IncompatibleWorkerVersionIsNamed) {
  TestWorker old_worker("worker-old", {"--allow-root", data_, "--advertise-protocol-version", "0"});
  ControllerRun run = RunController({"run", WriteJob("v.fio", absl::StrCat("[j]\nsize=1m\ndirectory=", data_, "\n")),
                                     "--hosts", old_worker.address()}, "version");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("worker ", old_worker.address(), " speaks protocol 0, but this controller (protocol 4) needs at least 3")));
}

TEST_F(EndToEnd, NewerCompatibleWorkerWorks) {
  // A worker from the future that still accepts protocol 3 runs the job.
  TestWorker newer("worker-newer", {"--allow-root", data_, "--advertise-protocol-version", "7"});
  ControllerRun run = RunController({"run", WriteJob("newer.fio", absl::StrCat("[j]\nrw=write\nsize=256k\ndirectory=", data_, "\n")),
                                     "--hosts", newer.address()}, "newer");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(EndToEnd, WorkerStopsIoWhenItsControllerDies) {
  TestWorker a("worker-lease", {"--allow-root", data_});
  // Two jobs: one keeps its file, the other says to clean up (unlink=1).
  const std::string job = WriteJob("long.fio", absl::StrCat("[global]\nrw=randwrite\nsize=4m\nruntime=60s\ntime_based\ndirectory=", data_,
                                                            "\n[long]\n[scratch]\nunlink=1\n"));
  TestProcess controller({Runfile("controller/iofleet"), "run", job, "--hosts", a.address(), "--lease", "2s"}, TempDir() + "/lease-controller");
  const std::string file = data_ + "/long.w0.0.0";
  // Wait until IO is under way, then kill the controller without a chance to say goodbye.
  struct stat st;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline && ::stat(file.c_str(), &st) != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(::iofleet::testing::WaitFor([&] { return BytesMovedDuring(a.process().pid(), std::chrono::milliseconds(500)) > (1u << 20); }, std::chrono::seconds(10)))
      << "the probe sees the load";
  controller.Signal(SIGKILL);
  ASSERT_TRUE(controller.Wait(std::chrono::seconds(5)).has_value());
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(a.process().WaitForOutput("stopping its IO", std::chrono::seconds(10), /*in_stderr=*/true)) << a.process().Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(5));
  // And IO has really stopped: the file no longer changes.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  const auto mtime = st.st_mtim;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, mtime.tv_sec);
  EXPECT_EQ(st.st_mtim.tv_nsec, mtime.tv_nsec);
  EXPECT_LT(BytesMovedDuring(a.process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
  // The job that said to clean up was cleaned up, without its controller.
  EXPECT_NE(::stat((data_ + "/scratch.w0.0.0").c_str(), &st), 0) << "unlink=1 was not honoured after the lease expired";
  // And the worker takes the next run.
  ControllerRun next = RunController({"run", WriteJob("next.fio", absl::StrCat("[next]\nrw=write\nsize=256k\ndirectory=", data_, "\n")),
                                      "--hosts", a.address()}, "after-lease");
  EXPECT_EQ(next.exit_code, 0) << next.err;
}

TEST_F(EndToEnd, InterruptedRunStillReportsWhatWasMeasured) {
  TestWorker a("worker-int-a", {"--allow-root", data_});
  TestWorker b("worker-int-b", {"--allow-root", data_});
  const std::string json_path = TempDir() + "/interrupted.json";
  TestProcess controller({Runfile("controller/iofleet"), "run",
                          WriteJob("int.fio", absl::StrCat("[j]\nrw=randread\nsize=1m\nruntime=60s\ntime_based\ndirectory=", data_, "\n")),
                          "--hosts", absl::StrCat(a.address(), ",", b.address()), "--output-format", "json", "--output", json_path},
                         TempDir() + "/interrupted");
  ASSERT_TRUE(controller.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << controller.Stderr();  // IO under way
  controller.Signal(SIGINT);
  const auto exit_code = controller.Wait(std::chrono::seconds(10));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 1);
  v1::RunReport report;
  google::protobuf::Struct fio;
  ASSERT_TRUE(ParseJsonReport(ReadFile(json_path), &fio, &report)) << controller.Stderr();
  ASSERT_GE(report.problems_size(), 1);
  EXPECT_THAT(absl::StrJoin(report.problems(), "\n"), HasSubstr("interrupted"));
  const v1::DirectionResult* d = FindDirection(report.jobs(0).directions(), "read");
  ASSERT_NE(d, nullptr);
  EXPECT_GT(d->ops(), 100u);
  EXPECT_LT(report.jobs(0).elapsed_ns(), 10'000'000'000u);
  EXPECT_EQ(report.jobs(0).workers(0).stop_reason(), "interrupted by the user (Ctrl-C)");
  EXPECT_EQ(report.jobs(0).workers(0).stop_cause(), v1::STOP_CAUSE_REQUESTED) << "a stop asked for is no lease stop";
  for (TestWorker* w : {&a, &b}) {
    EXPECT_LT(BytesMovedDuring(w->process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load on " << w->address();
  }
}

}  // namespace
}  // namespace iofleet
