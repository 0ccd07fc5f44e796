// Relays (iofleet relay) between the workers and the controller: the same run through a relay,
// or through a relay of relays, gives the cluster figures a direct run gives — per-job latency
// summaries and histograms, every interval, totals — because each relay merges its workers'
// reports exactly. The simulated fleet (sim/fleet_sim.cc) makes the same reports for the same
// worker index and seed whichever way they travel, so "the same" is exact equality. Real
// workers through a relay keep their own files, and a relay whose controller is gone stops its
// workers' IO within the lease. Real processes over real gRPC on 127.0.0.1.

#include <csignal>
#include <fstream>
#include <map>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/listening_controller.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::DirectoryNames;
using ::iofleet::testing::ListeningControllerTest;
using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TestProcess;
using ::testing::HasSubstr;

class Relay : public ListeningControllerTest {
 protected:
  // A relay for `workers` dialling `upstream_port` (with `extra` options); returns it, its own
  // port in *port.
  std::unique_ptr<TestProcess> RelayTo(const std::string& upstream_port, int workers, const std::string& name, std::string* port,
                                       const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {Runfile("controller/iofleet"), "relay", "--listen", "127.0.0.1:0", "--controller", "127.0.0.1:" + upstream_port,
                                     "--expect-workers", std::to_string(workers)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto relay = std::make_unique<TestProcess>(argv, base_ + "/" + name);
    *port = PortOf(*relay, workers);
    return relay;
  }
  // A real worker dialling `port`, writing under data_.
  std::unique_ptr<TestProcess> WorkerDialling(const std::string& port, const std::string& name) {
    return std::make_unique<TestProcess>(
        std::vector<std::string>{Runfile("worker/iofleet-worker"), "--controller", "127.0.0.1:" + port, "--allow-root", data_}, base_ + "/" + name);
  }
  std::unique_ptr<TestProcess> Fleet(const std::string& port, int workers, const std::string& name, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {Runfile("sim/iofleet-fleet-sim"), "--controller", "127.0.0.1:" + port, "--workers", std::to_string(workers),
                                     "--seed", "5", "--buckets", "150", "--stragglers", "1", "--straggler-delay", "2500ms"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<TestProcess>(argv, base_ + "/" + name);
  }
  // The one worker of run `name`, behind a relay, stopped on a lease (`reason`) before the job's
  // `runtime_ns`: the controller (its `stderr`) names it, and its figures up to then came in.
  void ExpectStoppedOnLease(const std::string& name, const std::string& stderr_text, const std::string& reason, uint64_t runtime_ns) {
    EXPECT_THAT(stderr_text, HasSubstr("1 worker stopped before the jobs' end (" + reason));
    const v1::RunReport report = Result(name);
    ASSERT_EQ(report.relayed_workers_size(), 1) << report.DebugString();
    const v1::RelayedWorkerSummary& worker = report.relayed_workers(0);
    EXPECT_THAT(worker.stop_reason(), HasSubstr(reason));
    EXPECT_EQ(worker.stop_cause(), v1::STOP_CAUSE_LEASE_EXPIRED);
    EXPECT_TRUE(worker.lost().empty()) << "it delivered what it measured";
    EXPECT_GT(worker.ops(), 0u);
    EXPECT_LT(worker.elapsed_ns(), runtime_ns);
    bool named = false;
    for (const std::string& problem : report.problems()) named |= absl::StrContains(problem, worker.address());
    EXPECT_TRUE(named) << report.DebugString();
  }
  // Under ThreadSanitizer (tools/run_tests.sh) a race in a relay or the simulator is reported on
  // its stderr; their exit codes are not seen (they are stopped, not ended).
  static void ExpectNoRaceReported(const TestProcess& process, const std::string& name) {
    EXPECT_EQ(process.Stderr().find("ThreadSanitizer"), std::string::npos) << name << ":\n" << process.Stderr();
  }
};

// What must come out the same whichever way the reports travelled: each job's merged latency
// (summary and histogram) per direction, and every interval's figures.
void ExpectSameClusterFigures(const v1::RunReport& direct, const v1::RunReport& relayed, const std::string& how) {
  ASSERT_EQ(direct.jobs_size(), relayed.jobs_size()) << how;
  for (int j = 0; j < direct.jobs_size(); ++j) {
    const v1::JobResult& a = direct.jobs(j);
    const v1::JobResult& b = relayed.jobs(j);
    ASSERT_EQ(a.directions_size(), b.directions_size()) << how;
    for (int d = 0; d < a.directions_size(); ++d) {
      EXPECT_EQ(a.directions(d).ops(), b.directions(d).ops()) << how << ", job " << a.name();
      EXPECT_EQ(a.directions(d).bytes(), b.directions(d).bytes()) << how << ", job " << a.name();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a.directions(d).latency(), b.directions(d).latency()))
          << how << ", job " << a.name() << ":\n" << a.directions(d).latency().DebugString() << "vs\n" << b.directions(d).latency().DebugString();
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a.directions(d).histogram(), b.directions(d).histogram()))
          << how << ", job " << a.name();
    }
    ASSERT_EQ(a.intervals_size(), b.intervals_size()) << how << ", job " << a.name();
    for (int i = 0; i < a.intervals_size(); ++i) {
      EXPECT_EQ(a.intervals(i).workers_reporting(), b.intervals(i).workers_reporting()) << how << ", interval " << i << ": workers, not relays";
      ASSERT_EQ(a.intervals(i).directions_size(), b.intervals(i).directions_size()) << how;
      for (int d = 0; d < a.intervals(i).directions_size(); ++d) {
        EXPECT_EQ(a.intervals(i).directions(d).ops(), b.intervals(i).directions(d).ops()) << how << ", interval " << i;
        EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(a.intervals(i).directions(d).latency(),
                                                                      b.intervals(i).directions(d).latency()))
            << how << ", interval " << i;
      }
    }
  }
}

uint64_t TotalOps(const v1::RunReport& report) {
  uint64_t ops = 0;
  for (const v1::JobResult& job : report.jobs()) {
    for (const v1::DirectionResult& d : job.directions()) ops += d.ops();
  }
  return ops;
}

// Six simulated workers (one of them reporting 2.5 s late, past the relay's grace) run the same
// job three times: straight to the controller, through one relay, through a relay of two
// relays. The cluster figures are identical; the relays account for every worker.
TEST_F(Relay, ThroughRelaysTheClusterFiguresAreExactlyThoseOfADirectRun) {
  const std::string job = Job("[global]\nioengine=null\nbs=4k\nsize=1m\nruntime=4s\ntime_based\n[a]\nrw=randread\n[b]\nrw=randrw\n");
  constexpr int kWorkers = 6;
  {
    auto controller = Controller(job, kWorkers, {}, "direct");
    ASSERT_FALSE(port_.empty());
    auto fleet = Fleet(port_, kWorkers, "fleet-direct");
    ASSERT_EQ(controller->Wait(std::chrono::seconds(90)).value_or(-1), 0) << controller->Stderr();
  }
  {
    auto controller = Controller(job, 1, {"--interval-log", base_ + "/one-relay.ndjson"}, "one-relay");
    ASSERT_FALSE(port_.empty());
    std::string relay_port;
    auto relay = RelayTo(port_, kWorkers, "relay", &relay_port);
    ASSERT_FALSE(relay_port.empty());
    // Three workers' sessions to a connection (the simulator's way of playing more workers than
    // a machine could as processes): each is still a session of its own.
    auto fleet = Fleet(relay_port, kWorkers, "fleet-relay", {"--workers-per-connection", "3"});
    ASSERT_EQ(controller->Wait(std::chrono::seconds(90)).value_or(-1), 0) << controller->Stderr() << relay->Stderr();
    ExpectNoRaceReported(*relay, "relay");
    ExpectNoRaceReported(*fleet, "fleet");
  }
  {
    auto controller = Controller(job, 1, {"--interval-log", base_ + "/stacked.ndjson"}, "stacked");
    ASSERT_FALSE(port_.empty());
    std::string top_port, left_port, right_port;
    auto top = RelayTo(port_, 2, "top", &top_port);
    ASSERT_FALSE(top_port.empty());
    auto left = RelayTo(top_port, 3, "left", &left_port);
    auto right = RelayTo(top_port, 3, "right", &right_port);
    ASSERT_FALSE(left_port.empty());
    ASSERT_FALSE(right_port.empty());
    // Worker indices follow the order the relays dialled in: the fleets are started one after
    // the other, so that order matches the direct run's (indices 0-2, then 3-5).
    auto fleet_left = Fleet(left_port, 3, "fleet-left");
    ASSERT_TRUE(left->WaitForOutput("opened by the controller", std::chrono::seconds(30), true)) << left->Stderr();
    auto fleet_right = Fleet(right_port, 3, "fleet-right");
    ASSERT_EQ(controller->Wait(std::chrono::seconds(90)).value_or(-1), 0) << controller->Stderr() << top->Stderr();
    for (const auto& [process, name] : {std::pair{top.get(), "top"}, {left.get(), "left"}, {right.get(), "right"}}) {
      ExpectNoRaceReported(*process, name);
    }
  }
  const v1::RunReport direct = Result("direct"), one = Result("one-relay"), stacked = Result("stacked");
  EXPECT_GT(TotalOps(direct), 0u);
  ExpectSameClusterFigures(direct, one, "through one relay");
  ExpectSameClusterFigures(direct, stacked, "through a relay of relays");
  for (const v1::RunReport* relayed : {&one, &stacked}) {
    EXPECT_EQ(relayed->workers_expected(), static_cast<uint32_t>(kWorkers));
    EXPECT_EQ(relayed->workers_completed(), static_cast<uint32_t>(kWorkers)) << relayed->DebugString();
    EXPECT_EQ(relayed->workers_size(), 1) << "the controller had one session: the relay";
    EXPECT_THAT(relayed->workers(0).hostname(), HasSubstr("relay of 6 workers"));
    // Every worker summed up once, with its own index; their figures add up to the totals.
    ASSERT_EQ(relayed->relayed_workers_size(), kWorkers);
    std::map<uint32_t, uint64_t> ops_by_index;
    for (const v1::RelayedWorkerSummary& w : relayed->relayed_workers()) {
      ops_by_index[w.worker_index()] += w.ops();
      EXPECT_GT(w.latency_p99_ns(), w.latency_p50_ns());
      EXPECT_TRUE(w.lost().empty()) << w.lost();
      EXPECT_EQ(w.relays_size(), relayed == &one ? 1 : 2);
    }
    ASSERT_EQ(ops_by_index.size(), static_cast<size_t>(kWorkers));
    EXPECT_EQ(ops_by_index.rbegin()->first, static_cast<uint32_t>(kWorkers - 1));
    uint64_t sum = 0;
    for (const auto& [index, ops] : ops_by_index) sum += ops;
    EXPECT_EQ(sum, TotalOps(*relayed));
  }
  // The straggler's intervals went up after the relay's grace, as amendments.
  uint32_t late = 0;
  for (const v1::RelayedWorkerSummary& w : one.relayed_workers()) late += w.late_intervals();
  EXPECT_GT(late, 0u);
  // The controller counted workers, not relays: the straggler's report came after its grace
  // too (2.5 s), so each cluster interval it worked in went out without it — incomplete, 5 of 6
  // workers — and was whole, 6 of 6, once the relays sent it on.
  for (const std::string how : {"one-relay", "stacked"}) {
    std::map<int64_t, std::vector<std::string>> published;  // interval -> its lines' (complete, reporting, expected)
    const std::vector<std::string> lines = absl::StrSplit(ReadFile(base_ + "/" + how + ".ndjson"), '\n', absl::SkipEmpty());
    for (const std::string& line : lines) {
      if (!absl::StrContains(line, "\"scope\":\"cluster\"")) continue;
      std::smatch m;
      ASSERT_TRUE(std::regex_search(line, m, std::regex("\"interval\":([0-9]+)"))) << line;
      std::smatch counts;
      ASSERT_TRUE(std::regex_search(line, counts, std::regex("\"complete\":(true|false).*\"workers_reporting\":([0-9]+),\"workers_expected\":([0-9]+)")))
          << line;
      published[std::stoll(m[1])].push_back(absl::StrCat(counts[1].str(), " ", counts[2].str(), "/", counts[3].str()));
    }
    ASSERT_GE(published.size(), 3u) << how;
    const std::vector<std::string>& second = published[1];  // a whole interval of the 4 s run
    ASSERT_GE(second.size(), 2u) << how;
    EXPECT_EQ(second.front(), "false 5/6") << how << ": published first without the straggler";
    EXPECT_EQ(second.back(), "true 6/6") << how << ": and amended once its report came";
  }
}

// One simulator feeding two relays (--controller A,B: the benchmark's way of playing a fleet
// from fewer processes): its workers are split between them in equal blocks.
TEST_F(Relay, OneSimulatorFeedsSeveralRelaysInEqualBlocks) {
  auto controller = Controller(Job("[global]\nioengine=null\nbs=4k\nsize=1m\nruntime=2s\ntime_based\n[a]\nrw=randread\n"), 2, {}, "split");
  ASSERT_FALSE(port_.empty());
  std::string a_port, b_port;
  auto a = RelayTo(port_, 3, "relay-a", &a_port);
  auto b = RelayTo(port_, 3, "relay-b", &b_port);
  ASSERT_FALSE(a_port.empty());
  ASSERT_FALSE(b_port.empty());
  auto fleet = Fleet(a_port + ",127.0.0.1:" + b_port, 6, "fleet", {"--workers-per-connection", "2"});
  ASSERT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller->Stderr() << a->Stderr() << b->Stderr() << fleet->Stderr();
  const v1::RunReport report = Result("split");
  EXPECT_EQ(report.workers_completed(), 6u);
  ASSERT_EQ(report.relayed_workers_size(), 6);
  std::map<std::string, int> behind;
  uint64_t ops = 0;
  for (const v1::RelayedWorkerSummary& w : report.relayed_workers()) {
    ASSERT_EQ(w.relays_size(), 1);
    ++behind[w.relays(0)];
    ops += w.ops();
  }
  EXPECT_EQ(behind.size(), 2u);
  for (const auto& [relay, workers] : behind) EXPECT_EQ(workers, 3) << relay;
  EXPECT_EQ(ops, TotalOps(report));
  EXPECT_GT(ops, 0u);
}

// Real workers behind a relay: each gets its own place in the run (its own files), and the
// controller counts them as workers.
TEST_F(Relay, RealWorkersBehindARelayWriteTheirOwnFiles) {
  auto controller = Controller(Job("[w]\nrw=write\nbs=64k\nsize=1m\n"), 1, {}, "real");
  ASSERT_FALSE(port_.empty());
  std::string relay_port;
  auto relay = RelayTo(port_, 2, "relay", &relay_port);
  ASSERT_FALSE(relay_port.empty());
  std::vector<std::unique_ptr<TestProcess>> workers;
  for (const char* name : {"a", "b"}) workers.push_back(WorkerDialling(relay_port, name));
  ASSERT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 0) << controller->Stderr() << relay->Stderr();
  const v1::RunReport report = Result("real");
  EXPECT_EQ(report.workers_completed(), 2u);
  EXPECT_EQ(report.workers_expected(), 2u);
  EXPECT_EQ(TotalOps(report), 2u * 16) << "1 MiB in 64 KiB writes on each of two workers";
  EXPECT_EQ(DirectoryNames(data_).size(), 2u) << "one file per worker, not one shared";
  ASSERT_EQ(report.relayed_workers_size(), 2);
  EXPECT_EQ(report.relayed_workers(0).bytes() + report.relayed_workers(1).bytes(), 2u << 20);
}

// The controller dies mid-run: the relay hears nothing for a lease and stops its workers' IO,
// as a worker stops its own when its controller goes silent.
TEST_F(Relay, ARelayWhoseControllerIsGoneStopsItsWorkersWithinTheLease) {
  auto controller = Controller(Job("[w]\nrw=randwrite\nbs=4k\nsize=1m\nruntime=120s\ntime_based\nrate_iops=200\n"), 1, {"--lease", "2s"}, "gone");
  ASSERT_FALSE(port_.empty());
  std::string relay_port;
  auto relay = RelayTo(port_, 1, "relay", &relay_port);
  ASSERT_FALSE(relay_port.empty());
  auto worker = WorkerDialling(relay_port, "worker");
  ASSERT_TRUE(controller->WaitForOutput("IOPS", std::chrono::seconds(30), true)) << controller->Stderr() << relay->Stderr();
  controller->Signal(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(relay->WaitForOutput("the controller was not heard for a lease; stopping the workers' IO", std::chrono::seconds(20), true))
      << relay->Stderr();
  // The worker's run ends with its final reports (it does not wait for its own lease: the relay
  // is still there and tells it to stop).
  ASSERT_TRUE(worker->WaitForOutput("IO stopped early: the controller was not heard for a lease", std::chrono::seconds(20), true))
      << worker->Stderr();
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(15));
}

// A relay frozen (SIGSTOP) for longer than its workers' lease, not gone: the worker behind it
// stops its IO on its lease, and the run says so — the worker named among the problems, exit 1,
// its stop reason in its summary — instead of a report whose totals quietly lack the rest of
// its run (the controller's own lease, longer, keeps the relay in the run).
TEST_F(Relay, WorkersThatStoppedOnTheirLeaseBehindARelayAreNamed) {
  auto controller = Controller(Job("[w]\nrw=randwrite\nbs=4k\nsize=1m\nruntime=8s\ntime_based\nrate_iops=100\n"), 1, {"--lease", "20s"}, "frozen");
  ASSERT_FALSE(port_.empty());
  std::string relay_port;
  auto relay = RelayTo(port_, 1, "relay", &relay_port, {"--lease", "1s"});
  ASSERT_FALSE(relay_port.empty());
  auto worker = WorkerDialling(relay_port, "worker");
  ASSERT_TRUE(controller->WaitForOutput("IOPS", std::chrono::seconds(30), true)) << controller->Stderr() << relay->Stderr();
  relay->Signal(SIGSTOP);
  const bool stopped = worker->WaitForOutput("no heartbeat from the controller within the lease", std::chrono::seconds(20), true);
  relay->Signal(SIGCONT);
  ASSERT_TRUE(stopped) << worker->Stderr();
  EXPECT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 1) << controller->Stderr() << relay->Stderr();
  ExpectStoppedOnLease("frozen", controller->Stderr(), "lease expired", 8'000'000'000u);
}

// The relay's own lease: a controller silent past it (here frozen) has the relay stop its
// workers' IO, with the cause a lease stop has, not that of a stop the controller asked for; once
// the controller is back, it hears the workers' figures up to then and names them.
TEST_F(Relay, ARelayWhoseControllerWentSilentStopsItsWorkersOnTheLease) {
  auto controller = Controller(Job("[w]\nrw=randwrite\nbs=4k\nsize=1m\nruntime=10s\ntime_based\nrate_iops=100\n"), 1, {"--lease", "1s"}, "silent");
  ASSERT_FALSE(port_.empty());
  std::string relay_port;
  auto relay = RelayTo(port_, 1, "relay", &relay_port, {"--lease", "30s"});  // (the worker's own lease does not run out)
  ASSERT_FALSE(relay_port.empty());
  auto worker = WorkerDialling(relay_port, "worker");
  ASSERT_TRUE(controller->WaitForOutput("IOPS", std::chrono::seconds(30), true)) << controller->Stderr() << relay->Stderr();
  controller->Signal(SIGSTOP);
  const bool stopped = relay->WaitForOutput("the controller was not heard for a lease; stopping the workers' IO", std::chrono::seconds(20), true);
  controller->Signal(SIGCONT);
  ASSERT_TRUE(stopped) << relay->Stderr();
  EXPECT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 1) << controller->Stderr() << relay->Stderr();
  ExpectStoppedOnLease("silent", controller->Stderr(), "the controller was not heard for a lease", 10'000'000'000u);
}

// mdtest counts its tasks, ranks and nodes by the sessions it holds: through a relay those would
// be the relay's. It says so and stops, before any directory is made.
TEST_F(Relay, MdtestThroughARelayIsRefusedWithTheReason) {
  auto controller = std::make_unique<TestProcess>(
      std::vector<std::string>{Runfile("controller/iofleet"), "mdtest", "-n", "10", "-d", data_ + "/mdtest", "--listen", "127.0.0.1:0",
                               "--expect-workers", "1", "--results-dir", "none"},
      base_ + "/mdtest");
  port_ = PortOf(*controller, 1);
  ASSERT_FALSE(port_.empty());
  std::string relay_port;
  auto relay = RelayTo(port_, 2, "relay", &relay_port);
  ASSERT_FALSE(relay_port.empty());
  auto a = WorkerDialling(relay_port, "a");
  auto b = WorkerDialling(relay_port, "b");
  EXPECT_EQ(controller->Wait(std::chrono::seconds(60)).value_or(-1), 2) << controller->Stderr();
  EXPECT_THAT(controller->Stderr(), HasSubstr("2 workers came through 1 session(s) with relays"));
  EXPECT_THAT(controller->Stderr(), HasSubstr("mdtest does not run through relays yet"));
  EXPECT_TRUE(DirectoryNames(data_).empty()) << "nothing made";
}

}  // namespace
}  // namespace iofleet
