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
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/worker_service.grpc.pb.h"
#include "tests/test_process.h"

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
using ::testing::HasSubstr;

struct Outcome {
  int exit_code = -1;
  std::string err;
};

Outcome Wait(TestProcess& process) {
  Outcome outcome;
  outcome.exit_code = process.Wait(std::chrono::seconds(90)).value_or(-1);
  outcome.err = process.Stderr();
  return outcome;
}

std::vector<std::string> Controller(std::vector<std::string> args) {
  args.insert(args.begin(), Runfile("controller/iofleet"));
  args.insert(args.end(), {"--quiet", "--results-dir", "none"});
  return args;
}



class WorkerBoundary : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = absl::StrCat(TempDir(), "/boundary-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    root_ = base_ + "/root";
    outside_ = base_ + "/outside";
    ASSERT_EQ(::mkdir(base_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(outside_.c_str(), 0755), 0);
  }
  // Files outside the root named like the ones a run makes, so that a followed symlink would
  // stat, remove or overwrite them.
  void PlantOutside(const std::vector<std::string>& names) {
    for (const std::string& name : names) std::ofstream(outside_ + "/" + name) << "outside " << name;
  }
  void ExpectOutsideUntouched(const std::vector<std::string>& names) {
    EXPECT_EQ(DirectoryNames(outside_).size(), names.size()) << "something was created in or removed from the outside directory";
    for (const std::string& name : names) {
      EXPECT_EQ(testing::ReadFile(outside_ + "/" + name), "outside " + name) << name << " outside the root was changed or removed";
    }
  }
  // Replaces `path` (a directory the run made) with a symlink to the outside directory; the
  // real directory moves aside, still inside the root.
  void SwapForSymlink(const std::string& path) {
    ASSERT_EQ(::rename(path.c_str(), (path + ".moved").c_str()), 0) << path;
    ASSERT_EQ(::symlink(outside_.c_str(), path.c_str()), 0);
  }

  std::string base_, root_, outside_;
};

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

// ---------------------------------------------------------------------------------------------
// Hostile requests straight over gRPC: each is refused with a clear reason, and the worker
// then still serves a legitimate controller with its memory bounded.
namespace iofleet {
namespace {

class HostileRequests : public WorkerBoundary {
 protected:
  void SetUp() override {
    WorkerBoundary::SetUp();
    worker_ = std::make_unique<TestWorker>("hostile-worker-" + std::to_string(++count_), std::vector<std::string>{"--allow-root", root_});
    ASSERT_FALSE(worker_->address().empty());
    stub_ = v1::WorkerService::NewStub(grpc::CreateChannel(worker_->address(), grpc::InsecureChannelCredentials()));
  }

  // A valid request: one small write job in the root.
  v1::PrepareRequest ValidPrepare(const std::string& run_id) {
    v1::PrepareRequest request;
    request.set_run_id(run_id);
    request.set_worker_index(0);
    request.set_worker_count(1);
    request.set_interval_ns(1'000'000'000);
    request.set_lease_ns(5'000'000'000);
    v1::JobSpec* job = request.mutable_spec()->add_jobs();
    job->set_name("j");
    job->set_rw(v1::RAND_WRITE);
    job->set_size(1 << 20);
    job->set_numjobs(1);
    job->set_iodepth(1);
    job->set_ioengine("psync");
    job->set_directory(root_ + "/hostile");
    for (auto* bs : {job->mutable_read_bs(), job->mutable_write_bs(), job->mutable_trim_bs()}) {
      bs->set_min(4096);
      bs->set_max(4096);
    }
    job->set_loops(1);
    return request;
  }

  grpc::Status Prepare(const v1::PrepareRequest& request) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::PrepareResponse response;
    return stub_->Prepare(&context, request, &response);
  }

  grpc::Status Start(const std::string& run_id, int64_t start_unix_ns) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::StartRequest request;
    request.set_run_id(run_id);
    request.set_start_unix_ns(start_unix_ns);
    v1::StartResponse response;
    return stub_->Start(&context, request, &response);
  }

  // The worker answers a real controller's run afterwards.
  void ExpectServesAController() {
    const std::string job = base_ + "/after.fio";
    std::ofstream(job) << "[after]\nrw=write\nbs=4k\nsize=256k\ndirectory=" << root_ << "/after\n";
    TestProcess run(Controller({"run", job, "--hosts", worker_->address()}), base_ + "/after-" + std::to_string(++count_));
    Outcome outcome = Wait(run);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  }

  uint64_t WorkerRssKiB() {
    std::ifstream status("/proc/" + std::to_string(worker_->process().pid()) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
    }
    return 0;
  }

  static inline int count_ = 0;
  std::unique_ptr<TestWorker> worker_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
};

int64_t NowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One field used to wedge the worker (interval_ns = 1, or a start a day in the past: the
// collector cut an interval per elapsed nanosecond-long interval under the run lock).
TEST_F(HostileRequests, FieldsThatWedgedTheWorkerAreRefused) {
  v1::PrepareRequest tiny = ValidPrepare("tiny-interval");
  tiny.set_interval_ns(1);
  grpc::Status refused = Prepare(tiny);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("below the minimum of 10ms"));

  v1::PrepareRequest lease = ValidPrepare("tiny-lease");
  lease.set_lease_ns(1);
  EXPECT_EQ(Prepare(lease).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  ASSERT_TRUE(Prepare(ValidPrepare("past-start")).ok());
  for (const int64_t start : {int64_t{0}, NowUnixNs() - 86'400'000'000'000, int64_t{INT64_MIN}, int64_t{INT64_MAX}}) {
    grpc::Status started = Start("past-start", start);
    EXPECT_EQ(started.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << start;
    EXPECT_THAT(started.error_message(), ::testing::AnyOf(HasSubstr("in the past"), HasSubstr("ahead"))) << start;
  }
  // A start slightly late is taken at once (the worker says how late in lead_ns).
  ASSERT_TRUE(Prepare(ValidPrepare("late-start")).ok());
  EXPECT_TRUE(Start("late-start", NowUnixNs() - 1'000'000'000).ok());

  v1::PrepareRequest long_id = ValidPrepare(std::string(100'000, 'r'));
  EXPECT_THAT(Prepare(long_id).error_message(), HasSubstr("above the maximum of 128"));
  v1::PrepareRequest place = ValidPrepare("place");
  place.set_worker_index(5);
  EXPECT_THAT(Prepare(place).error_message(), HasSubstr("not below worker_count"));
  ExpectServesAController();
  EXPECT_LT(WorkerRssKiB(), 200u * 1024) << "the worker's memory grew";
}

// Values that crashed the worker (SIGFPE, bad_alloc) or misbehaved, straight over gRPC where
// the controller's parser never saw them.
TEST_F(HostileRequests, ValuesThatCrashedTheWorkerAreRefused) {
  struct Case {
    std::string name;
    std::function<void(v1::JobSpec*)> spoil;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"bssplit-zero", [](v1::JobSpec* j) { auto* e = j->add_write_bssplit(); e->set_size(0); e->set_percent(100); }, "block size of 0"},
      {"bssplit-250", [](v1::JobSpec* j) {
         for (int i = 0; i < 3; ++i) { auto* e = j->add_write_bssplit(); e->set_size(4096); e->set_percent(i == 0 ? 50 : 100); }
       }, "add up to 250"},
      {"runtime", [](v1::JobSpec* j) { j->set_runtime_ns(UINT64_MAX - 5); j->set_time_based(true); }, "runtime is longer than"},
      {"startdelay", [](v1::JobSpec* j) { j->set_startdelay_ns(UINT64_MAX); }, "startdelay is longer than"},
      {"ramp", [](v1::JobSpec* j) { j->set_ramp_time_ns(UINT64_MAX / 2); }, "ramp_time is longer than"},
      {"thinktime", [](v1::JobSpec* j) { j->set_thinktime_ns(UINT64_MAX); }, "thinktime is longer than"},
      {"zipf-nan", [](v1::JobSpec* j) { j->mutable_random_distribution()->set_kind(v1::RandomDistribution::ZIPF); j->mutable_random_distribution()->set_parameter(NAN); }, "zipf"},
      {"pareto-inf", [](v1::JobSpec* j) { j->mutable_random_distribution()->set_kind(v1::RandomDistribution::PARETO); j->mutable_random_distribution()->set_parameter(INFINITY); }, "pareto"},
      {"iodepth-0", [](v1::JobSpec* j) { j->set_iodepth(0); }, "iodepth must be at least 1"},
      {"name-dotdot", [](v1::JobSpec* j) { j->set_name("../../x"); }, "holds a '/'"},
      {"filename-empty-entry", [](v1::JobSpec* j) { j->set_filename("f1:f2::f3"); }, "empty name"},
      {"percentile-nan", [](v1::JobSpec* j) { j->add_percentile_list(NAN); }, "percentile"},
      {"rw-unknown", [](v1::JobSpec* j) { j->set_rw(static_cast<v1::ReadWrite>(42)); }, "unknown rw value 42"},
      {"verify-unknown", [](v1::JobSpec* j) { j->set_verify(static_cast<v1::JobSpec::Verify>(9)); }, "unknown verify value"},
      {"mdtest-write", [](v1::JobSpec* j) {
         j->mutable_metadata()->set_op(v1::MetadataPhase::FILE_CREATE);
         j->mutable_metadata()->add_test_dirs("/tmp");
         j->mutable_metadata()->set_task_count(1);
         j->mutable_metadata()->set_items_per_task(1);
         j->mutable_metadata()->set_write_bytes(99999999999999);
       }, "-w, -e"},
      {"mdtest-tree", [](v1::JobSpec* j) {
         j->mutable_metadata()->set_op(v1::MetadataPhase::TREE_CREATE);
         j->mutable_metadata()->add_test_dirs("/tmp");
         j->mutable_metadata()->set_task_count(1);
         j->mutable_metadata()->set_depth(100);
         j->mutable_metadata()->set_branch(10);
       }, "directories (-z, -b)"},
  };
  for (const Case& c : cases) {
    v1::PrepareRequest request = ValidPrepare("crash-" + c.name);
    c.spoil(request.mutable_spec()->mutable_jobs(0));
    grpc::Status status = Prepare(request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(c.expected)) << c.name;
  }
  // 10,000 small jobs: refused for their thread count before anything is allocated.
  v1::PrepareRequest many = ValidPrepare("many-jobs");
  for (int i = 1; i < 10'000; ++i) *many.mutable_spec()->add_jobs() = many.spec().jobs(0);
  EXPECT_THAT(Prepare(many).error_message(), HasSubstr("more than 4096 threads"));
  // Within the thread limit but not the memory limit: named, with the flag that raises it.
  v1::PrepareRequest big = ValidPrepare("big-buffers");
  v1::JobSpec* job = big.mutable_spec()->mutable_jobs(0);
  job->set_numjobs(64);
  job->set_iodepth(4096);
  job->mutable_write_bs()->set_max(1 << 20);
  job->mutable_write_bs()->set_min(1 << 20);
  job->set_size(1 << 30);
  grpc::Status memory = Prepare(big);
  EXPECT_EQ(memory.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(memory.error_message(), HasSubstr("--max-run-memory"));
  ExpectServesAController();
  EXPECT_LT(WorkerRssKiB(), 200u * 1024) << "the worker's memory grew";
}

// A second reader of a run's reports would silently take them from the first.
TEST_F(HostileRequests, ASecondStreamOfARunIsRefused) {
  ASSERT_TRUE(Prepare(ValidPrepare("two-streams")).ok());
  grpc::ClientContext first_context, second_context;
  v1::StreamIntervalsRequest request;
  request.set_run_id("two-streams");
  auto first = stub_->StreamIntervals(&first_context, request);
  // The first stream is registered once the worker has seen it: wait for that, not a time.
  ASSERT_TRUE(WaitFor([&] {
    grpc::ClientContext probe;
    probe.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    auto second = stub_->StreamIntervals(&probe, request);
    v1::IntervalReport report;
    while (second->Read(&report)) {}
    const grpc::Status status = second->Finish();
    if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
      EXPECT_THAT(status.error_message(), HasSubstr("already has a stream"));
      return true;
    }
    return false;
  }, std::chrono::seconds(10)));
  first_context.TryCancel();
}

// A controller that starts a run and never reads its reports (stalled, connection held) used
// to make the worker queue them without bound for as long as the lease was renewed. The worker
// stops the run once 65,536 wait, and says why.
TEST_F(HostileRequests, UnreadReportsAreBoundedAndStopTheRun) {
  v1::PrepareRequest request = ValidPrepare("unread");
  request.set_interval_ns(10'000'000);  // 100 jobs every 10 ms: 10,000 reports a second, the limit
  request.set_lease_ns(60'000'000'000);
  v1::JobSpec job = request.spec().jobs(0);
  job.set_ioengine("null");
  job.clear_directory();
  job.set_time_based(true);
  job.set_runtime_ns(120'000'000'000);
  job.add_rate_iops(100);
  job.add_rate_iops(100);
  request.mutable_spec()->clear_jobs();
  for (int i = 0; i < 100; ++i) {
    job.set_name("j" + std::to_string(i));
    *request.mutable_spec()->add_jobs() = job;
  }
  ASSERT_TRUE(Prepare(request).ok()) << Prepare(request).error_message();
  ASSERT_TRUE(Start("unread", NowUnixNs() + 100'000'000).ok());
  // Heartbeats keep the lease; nobody reads the stream. The run must end by itself.
  bool active = true;
  ASSERT_TRUE(WaitFor([&] {
    grpc::ClientContext context;
    v1::HeartbeatRequest beat;
    beat.set_run_id("unread");
    v1::HeartbeatResponse response;
    if (stub_->Heartbeat(&context, beat, &response).ok()) active = response.run_active();
    return !active;
  }, std::chrono::seconds(60))) << "the run went on with its reports unread";
  EXPECT_LT(WorkerRssKiB(), 400u * 1024) << "the queued reports grew without bound";
  // The reports that were kept are delivered, the last ones saying why the run stopped.
  grpc::ClientContext context;
  v1::StreamIntervalsRequest stream_request;
  stream_request.set_run_id("unread");
  auto stream = stub_->StreamIntervals(&context, stream_request);
  v1::IntervalReport report;
  size_t reports = 0;
  std::string reason;
  std::string note;
  while (stream->Read(&report)) {
    ++reports;
    if (report.final()) reason = report.stop_reason();
    if (report.final() && report.notes_size() > 0) note = report.notes(report.notes_size() - 1);
  }
  EXPECT_GE(reports, 65'536u);
  EXPECT_LE(reports, 65'536u + 100) << "more than the cap and one final report per job";
  EXPECT_THAT(reason, HasSubstr("stopped reading interval reports"));
  EXPECT_THAT(note, HasSubstr("were dropped: nobody read them"));
}

// mdtest with ten billion items per task used to abort with std::bad_alloc (a list of every
// step); now it runs in bounded memory: a one-second stonewalled creation, then removal.
TEST_F(HostileRequests, MdtestWithTenBillionItemsRunsInBoundedMemory) {
  TestProcess run(Controller({"mdtest", "-d", root_ + "/huge", "-n", "10000000000", "-F", "-C", "-W", "1", "--hosts", worker_->address()}),
                  base_ + "/huge");
  uint64_t peak = 0;
  while (!run.Wait(std::chrono::milliseconds(100)).has_value()) peak = std::max(peak, WorkerRssKiB());
  Outcome outcome{run.Wait(std::chrono::seconds(0)).value_or(-1), run.Stderr()};
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_LT(peak, 200u * 1024) << "the worker's memory grew with the item count";
  ExpectServesAController();
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

// A worker paused past its lease drops the run (it stops IO when it cannot hear the
// controller). The report must say so — not that the worker "was restarted", which it never was.
TEST_F(WorkerBoundary, APausedWorkerIsReportedAsLeaseExpiredNotRestarted) {
  TestWorker a("boundary-pause-a", {"--allow-root", root_}), b("boundary-pause-b", {"--allow-root", root_});
  ASSERT_FALSE(a.address().empty());
  ASSERT_FALSE(b.address().empty());
  const std::string job = base_ + "/pause.fio";
  std::ofstream(job) << "[paced]\nrw=randwrite\nbs=4k\nsize=1m\ntime_based=1\nruntime=8s\nrate_iops=200\ncreate_on_open=1\ndirectory=" << root_ << "/pause\n";
  TestProcess run(Controller({"run", job, "--hosts", a.address() + "," + b.address(), "--lease", "1s"}), base_ + "/pause");
  // Both workers are doing IO once their files exist (create_on_open: made by the job threads).
  ASSERT_TRUE(WaitFor([&] { return DirectoryEntries(root_ + "/pause") == 2; }, std::chrono::seconds(30)));
  b.process().Signal(SIGSTOP);
  // The fault under test is a pause three times the 1 s lease (its length is the scenario, not a
  // wait for something to happen): the controller gives the worker up after a lease without
  // answers; the worker, once resumed, finds its lease expired and drops the run.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  b.process().Signal(SIGCONT);
  Outcome outcome = Wait(run);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("worker " + b.address() + " lost")) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("lease expired")) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::Not(HasSubstr("restarted"))) << outcome.err;
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
