// The worker as a security boundary, tried with hostile requests straight over gRPC: fields
// that wedged or crashed it, a second stream of a run, reports nobody reads, an mdtest of ten
// billion items. Each is refused with a clear reason or bounded, and the worker then still
// serves a legitimate controller with its memory bounded.
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

}  // namespace
}  // namespace iofleet

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
  v1::PrepareRequest group = ValidPrepare("long-group");
  group.mutable_spec()->set_run_group(std::string(100'000, 'g'));
  EXPECT_THAT(Prepare(group).error_message(), HasSubstr("run_group is 100000 bytes long, above the maximum of 128"));
  v1::PrepareRequest place = ValidPrepare("place");
  place.set_worker_index(5);
  EXPECT_THAT(Prepare(place).error_message(), HasSubstr("not below worker_count"));
  // Jobs released by a controller (mdtest across workers) would wait for releases that only a
  // session carries; over the unary call, and without a sequence, refused.
  v1::PrepareRequest released = ValidPrepare("released");
  released.mutable_spec()->set_jobs_released(true);
  EXPECT_THAT(Prepare(released).error_message(), HasSubstr("prepared over a session"));
  ExpectServesAController();
  EXPECT_LT(WorkerRssKiB(), 200u * 1024) << "the worker's memory grew";
}

// A job turned into one mdtest phase of `op` for one task under /tmp (its other fields spoilt by
// the caller).
v1::MetadataPhase* MetadataJob(v1::JobSpec* job, v1::MetadataPhase::Op op) {
  v1::MetadataPhase* phase = job->mutable_metadata();
  phase->set_op(op);
  phase->add_test_dirs("/tmp");
  phase->set_task_count(1);
  return phase;
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
      {"verify-unknown", [](v1::JobSpec* j) { j->set_verify(static_cast<v1::JobSpec::Verify>(99)); }, "unknown verify value"},
      // Patterns and intervals: a pattern the size of a message, a %o past its end, a
      // one-byte verify unit (a header per byte), RWF_ATOMIC on an engine that cannot send it,
      // fill_device on a job that reads.
      {"pattern-huge", [](v1::JobSpec* j) { j->mutable_verify_pattern()->set_bytes(std::string(1 << 20, 'x')); }, "verify_pattern: the pattern is longer than 512 bytes"},
      {"pattern-offset-past-end", [](v1::JobSpec* j) {
         j->mutable_verify_pattern()->set_bytes("abcdefgh");
         j->mutable_verify_pattern()->add_block_offset_at(4000000000u);
       }, "a %o of the pattern lies past its end"},
      {"verify-interval-1", [](v1::JobSpec* j) {
         j->set_verify(v1::JobSpec::VERIFY_CRC32C);
         j->set_verify_interval(1);
       }, "verify_interval must be at least 128 bytes"},
      {"atomic-psync", [](v1::JobSpec* j) { j->set_atomic(true); }, "atomic=1 needs an engine that sends RWF_ATOMIC"},
      {"fill-device-read", [](v1::JobSpec* j) {
         j->set_fill_device(true);
         j->set_rw(v1::SEQ_READ);
       }, "fill_device is for jobs that only write"},
      // zonemode=zbd: a zone table the size of the file over 512-byte zones; fractions that
      // would make 1/f overflow; a mode no version defines.
      {"zones-billions", [](v1::JobSpec* j) {
         j->mutable_zones()->set_mode(v1::ZoneSpec::ZBD);
         j->mutable_zones()->set_size(512);
         j->set_size(uint64_t{1} << 50);
       }, "more than 67108864 zones"},
      {"zone-frequency-nan", [](v1::JobSpec* j) {
         j->mutable_zones()->set_mode(v1::ZoneSpec::ZBD);
         j->mutable_zones()->set_size(1 << 20);
         j->mutable_zones()->set_reset_frequency(NAN);
       }, "zone_reset_frequency must be a fraction from 0 to 1"},
      {"zone-mode-unknown", [](v1::JobSpec* j) { j->mutable_zones()->set_mode(static_cast<v1::ZoneSpec::Mode>(7)); }, "unknown zonemode value"},
      {"mdtest-write", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::FILE_CREATE)->set_items_per_task(1);
         j->mutable_metadata()->set_write_bytes(99999999999999);
       }, "-w, -e"},
      // A test directory to remove that is not there, or from a phase that is not the tree's removal.
      {"mdtest-remove-index", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::TREE_REMOVE)->add_remove_test_dirs(7);
       }, "test directory to remove #7 does not exist"},
      {"mdtest-remove-in-stat", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::DIR_STAT)->add_remove_test_dirs(0);
       }, "test directories are removed only by a tree removal"},
      {"mdtest-tree", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::TREE_CREATE)->set_depth(100);
         j->mutable_metadata()->set_branch(10);
       }, "directories (-z, -b)"},
      // A chain (-b 1) of 4 billion levels: few enough directories, but paths of 60 GB.
      {"mdtest-deep-chain", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::TREE_REMOVE)->set_depth(UINT32_MAX);
         j->mutable_metadata()->set_branch(1);
       }, "deeper than 256 levels"},
      // mdtest's directory loops: -n/-I copies of a 1,111-directory tree, -I in each directory.
      {"mdtest-loops", [](v1::JobSpec* j) {
         v1::MetadataPhase* phase = MetadataJob(j, v1::MetadataPhase::FILE_CREATE);
         phase->set_depth(3);
         phase->set_branch(10);
         phase->set_items_per_task(uint64_t{1} << 39);
         phase->set_items_per_dir(1);
       }, "items in every tree directory"},
      // --savePerOpDataCSV: the files a worker writes go by an absolute path it checks.
      {"mdtest-per-op-relative", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::FILE_STAT)->set_items_per_task(1);
         j->mutable_metadata()->set_per_op_csv("../../etc/ops");
       }, "must be an absolute path"},
      {"mdtest-per-op-nul", [](v1::JobSpec* j) {
         MetadataJob(j, v1::MetadataPhase::FILE_STAT)->set_items_per_task(1);
         j->mutable_metadata()->set_per_op_csv(std::string("/tmp/ops\0/etc/passwd", 20));
       }, "holds a NUL byte"},
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
