// Workers that dial their controller (iofleet-worker --controller, iofleet run --listen
// --expect-workers): started after the controller, they find it; a token that does not match is
// refused both ways; a connection cut mid-run is dialled again and the session resumed with
// nothing lost. Real processes over real gRPC on 127.0.0.1.
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/listening_controller.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::ListeningControllerTest;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::WaitFor;
using ::testing::HasSubstr;
using ::testing::Not;

class DialIn : public ListeningControllerTest {
 protected:
  std::unique_ptr<TestProcess> Worker(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {Runfile("worker/iofleet-worker"), "--controller", "127.0.0.1:" + port_, "--allow-root", data_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<TestProcess>(argv, base_ + "/" + name);
  }
};

// The controller first, waiting for three workers; the workers, started after it, dial in; the
// run is theirs, and each worker then waits for the next run.
TEST_F(DialIn, WorkersStartedAfterTheControllerFindItAndRunTheJob) {
  auto controller = Controller(Job("[j]\nrw=randwrite\nsize=1m\nruntime=2s\ntime_based\nrate_iops=100\n"), 3);
  ASSERT_FALSE(port_.empty()) << controller->Stderr();
  auto a = Worker("a"), b = Worker("b"), c = Worker("c");
  ASSERT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller->Stderr();
  const v1::RunReport report = Result();
  EXPECT_EQ(report.workers_size(), 3);
  EXPECT_EQ(report.workers_completed(), 3u);
  uint64_t ops = 0;
  for (const v1::DirectionResult& d : report.jobs(0).directions()) ops += d.ops();
  EXPECT_GE(ops, 3u * 100 * 2 * 9 / 10) << "three workers at 100 IOPS for 2 s";
  // Each worker's real start (clock offset taken out) and the spread of them are reported.
  int64_t earliest = INT64_MAX, latest = INT64_MIN;
  for (const v1::WorkerInfo& w : report.workers()) {
    EXPECT_GT(w.round_trip_ns(), 0);
    earliest = std::min(earliest, w.start_offset_ns());
    latest = std::max(latest, w.start_offset_ns());
  }
  EXPECT_GT(report.start_skew_ns(), 0);
  EXPECT_EQ(report.start_skew_ns(), latest - earliest);
  EXPECT_TRUE(a->WaitForOutput("ended by the controller", std::chrono::seconds(10), true)) << a->Stderr();
  EXPECT_EQ(a->Wait(std::chrono::milliseconds(200)), std::nullopt) << "a worker that dialled in serves the next run too";
}

// mdtest on workers that dialled in: the phases after the first run as one sequence the
// controller releases over the workers' own sessions (RunSpec.jobs_released) — each worker's
// arrivals go out from a thread of the run's, never from a task's, whose descriptor table has
// none of gRPC's (from there the session's stream broke: "Kick failed: Bad file descriptor").
TEST_F(DialIn, MdtestPhasesAcrossDialledInWorkersFollowOnTheControllersRelease) {
  const std::string dir = data_ + "/md";
  TestProcess controller({Runfile("controller/iofleet"), "mdtest", "-d", dir, "-n", "200", "-z", "1", "-b", "3", "-u", "-w", "64", "-e", "64",
                          "-i", "2", "--listen", "127.0.0.1:0", "--expect-workers", "2", "--tasks-per-worker", "2", "--results-dir", "none"},
                         base_ + "/mdtest");
  port_ = PortOf(controller, 2);
  ASSERT_FALSE(port_.empty()) << controller.Stderr();
  auto a = Worker("a"), b = Worker("b");
  ASSERT_EQ(controller.Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller.Stderr();
  EXPECT_THAT(controller.Stdout(), HasSubstr("SUMMARY rate (in ops/sec): (of 2 iterations)"));
  EXPECT_THAT(controller.Stderr(), Not(HasSubstr("dialled in again"))) << "a session's stream broke";
  for (TestProcess* worker : {a.get(), b.get()}) {
    const std::string log = worker->Stderr();
    EXPECT_THAT(log, Not(HasSubstr("Kick failed")));
    EXPECT_THAT(log, Not(HasSubstr("was cut")));
    EXPECT_EQ(::iofleet::testing::CountIn(log, ": prepared "), 2u) << "the first phase, then the other nineteen as one sequence:\n" << log;
  }
  EXPECT_EQ(::iofleet::testing::DirectoryEntries(data_), 0) << "the last tree removal (and the test directory the workers made) went last";
}

// Workers a launcher numbered (mpirun's OMPI_COMM_WORLD_RANK, srun's SLURM_PROCID) are that
// worker of the run, whatever order they dial in; a second worker with a rank already taken,
// or one beyond the workers expected, is refused and told why.
TEST_F(DialIn, LaunchRanksNumberTheWorkersWhateverOrderTheyDialIn) {
  auto controller = Controller(Job("[j]\nrw=randwrite\nsize=1m\nruntime=1s\ntime_based\nrate_iops=50\n"), 3);
  ASSERT_FALSE(port_.empty()) << controller->Stderr();
  auto ranked = [&](const std::string& name, const std::string& variable, int rank) {
    std::vector<std::string> argv = {"/usr/bin/env", variable + "=" + std::to_string(rank), Runfile("worker/iofleet-worker"),
                                     "--controller", "127.0.0.1:" + port_, "--allow-root", data_, "--sessions", "1"};
    return std::make_unique<TestProcess>(argv, base_ + "/" + name);
  };
  auto two = ranked("two", "SLURM_PROCID", 2);
  ASSERT_TRUE(two->WaitForOutput("dialling the controller", std::chrono::seconds(10)));
  auto beyond = ranked("beyond", "OMPI_COMM_WORLD_RANK", 3);
  EXPECT_TRUE(beyond->WaitForOutput("launch rank 3 is beyond the 3 worker(s) this controller expects", std::chrono::seconds(10), true))
      << beyond->Stderr();
  auto twin = ranked("twin", "SLURM_PROCID", 2);
  EXPECT_TRUE(twin->WaitForOutput("launch rank 2 has dialled in already", std::chrono::seconds(10), true)) << twin->Stderr();
  beyond.reset();
  twin.reset();
  auto one = ranked("one", "PMIX_RANK", 1);
  auto zero = ranked("zero", "OMPI_COMM_WORLD_RANK", 0);
  ASSERT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller->Stderr();
  const v1::RunReport report = Result();
  ASSERT_EQ(report.workers_size(), 3);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(report.workers(i).has_launch_rank()) << i;
    EXPECT_EQ(report.workers(i).launch_rank(), static_cast<uint32_t>(i));
  }
  // --sessions 1: each worker leaves once its run is over.
  for (TestProcess* w : {zero.get(), one.get(), two.get()}) EXPECT_EQ(w->Wait(std::chrono::seconds(10)).value_or(-1), 0) << w->Stderr();
}

// The worker checks the controller before obeying it, the controller checks the worker before
// counting it: with tokens that differ, neither accepts the other, and each says so.
TEST_F(DialIn, AControllerAndAWorkerWithDifferentTokensRefuseEachOther) {
  std::ofstream(base_ + "/right.token") << "the-right-token\n";
  std::ofstream(base_ + "/wrong.token") << "another-token\n";
  auto controller = Controller(Job("[j]\nrw=randwrite\nsize=1m\nruntime=1s\ntime_based\n"), 1,
                               {"--token-file", base_ + "/right.token", "--wait", "4s"});
  ASSERT_FALSE(port_.empty());
  // A worker with another token: the controller's proof does not match; it obeys nothing.
  auto impostor_victim = Worker("wrong-token", {"--token-file", base_ + "/wrong.token"});
  EXPECT_TRUE(impostor_victim->WaitForOutput("did not prove it holds this worker's token", std::chrono::seconds(10), true))
      << impostor_victim->Stderr();
  // A worker with no token at all: the controller refuses it, and the worker hears why.
  auto tokenless = Worker("no-token");
  EXPECT_TRUE(tokenless->WaitForOutput("refused this worker: this controller needs the worker's --token-file", std::chrono::seconds(10), true))
      << tokenless->Stderr();
  const auto code = controller->Wait(std::chrono::seconds(30));
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  EXPECT_THAT(controller->Stderr(), HasSubstr("0 of 1 worker(s) dialled in within --wait 4s"));
  EXPECT_THAT(controller->Stderr(), HasSubstr("refused a worker dialling in from 127.0.0.1:"));
  // Nothing was written for either.
  EXPECT_TRUE(::iofleet::testing::DirectoryNames(data_).empty());
}

// Mutual TLS, the worker dialling: each side checks the other's certificate against its CA. A
// worker whose certificate another CA signed (and which trusts only that CA) gets nowhere, and
// the run goes on with the worker that belongs.
TEST_F(DialIn, MutualTlsChecksBothEnds) {
  const std::string d = base_ + "/pki";
  const std::string script = absl::StrCat(
      "set -e; mkdir -p ", d, "; cd ", d, "; printf 'subjectAltName=IP:127.0.0.1\\n' > san;",
      "for ca in ca other; do openssl req -x509 -newkey rsa:2048 -nodes -keyout $ca.key -out $ca.pem -days 1 -subj /CN=$ca 2>/dev/null; done;",
      "for who in worker controller stranger; do openssl req -newkey rsa:2048 -nodes -keyout $who.key -out $who.csr -subj /CN=$who 2>/dev/null; done;",
      "for who in worker controller; do openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $who.pem -days 1 -extfile san 2>/dev/null; done;",
      "openssl x509 -req -in stranger.csr -CA other.pem -CAkey other.key -CAcreateserial -out stranger.pem -days 1 -extfile san 2>/dev/null");
  if (std::system(("PATH=/usr/bin:/bin; " + script).c_str()) != 0) GTEST_SKIP() << "openssl could not make test certificates";
  auto controller = Controller(Job("[j]\nrw=randwrite\nsize=1m\nruntime=1s\ntime_based\nrate_iops=100\n"), 1,
                               {"--tls-cert", d + "/controller.pem", "--tls-key", d + "/controller.key", "--tls-ca", d + "/ca.pem"});
  ASSERT_FALSE(port_.empty());
  auto stranger = Worker("stranger", {"--tls-cert", d + "/stranger.pem", "--tls-key", d + "/stranger.key", "--tls-ca", d + "/other.pem"});
  EXPECT_TRUE(stranger->WaitForOutput("cannot reach the controller", std::chrono::seconds(10), true)) << stranger->Stderr();
  auto worker = Worker("w", {"--tls-cert", d + "/worker.pem", "--tls-key", d + "/worker.key", "--tls-ca", d + "/ca.pem"});
  ASSERT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller->Stderr();
  EXPECT_EQ(Result().workers_completed(), 1u);
  EXPECT_THAT(stranger->Stderr(), Not(HasSubstr("session")));
}

// The worker's connection is reset mid-run (ss -K: as a NAT or firewall that dropped it): the
// worker dials again, the session resumes, and the run ends as if nothing happened — every
// interval there once, totals equal to the sum of the intervals, the resume counted.
TEST_F(DialIn, AConnectionResetMidRunIsDialledAgainAndNothingIsLost) {
  if (::geteuid() != 0) GTEST_SKIP() << "ss -K needs CAP_NET_ADMIN";
  auto controller = Controller(Job("[j]\nrw=randwrite\nsize=1m\nruntime=6s\ntime_based\nrate_iops=200\n"), 1, {"--lease", "10s"});
  ASSERT_FALSE(port_.empty());
  auto worker = Worker("w");
  ASSERT_TRUE(controller->WaitForOutput("IOPS", std::chrono::seconds(30), true)) << controller->Stderr();
  ASSERT_EQ(std::system(("PATH=/usr/sbin:/usr/bin:/sbin:/bin ss -K dst 127.0.0.1 dport = " + port_ + " >/dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller->Stderr();
  EXPECT_THAT(controller->Stderr(), HasSubstr("dialled in again: its session resumed, nothing lost"));
  EXPECT_THAT(worker->Stderr(), HasSubstr("resumed with the controller"));
  const v1::RunReport report = Result();
  EXPECT_EQ(report.workers_completed(), 1u);
  ASSERT_EQ(report.workers_size(), 1);
  EXPECT_EQ(report.workers(0).session_resumes(), 1u);
  const v1::JobResult& job = report.jobs(0);
  ASSERT_GE(job.intervals_size(), 6);
  uint64_t interval_ops = 0, total_ops = 0;
  for (int i = 0; i < job.intervals_size(); ++i) {
    EXPECT_EQ(job.intervals(i).interval_index(), static_cast<uint32_t>(i));
    EXPECT_EQ(job.intervals(i).workers_reporting(), 1u) << "interval " << i;
    for (const v1::WorkerInterval& w : job.intervals(i).workers()) interval_ops += w.ops();
  }
  for (const v1::DirectionResult& d : job.directions()) total_ops += d.ops();
  EXPECT_EQ(interval_ops, total_ops);
  EXPECT_GE(total_ops, 200u * 6 * 9 / 10);
}

}  // namespace
}  // namespace iofleet
