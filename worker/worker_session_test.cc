// The session stream over real gRPC, in-process: a controller's commands in, answers, reports
// and problems out; leases that live as long as the controller talks; refusals.
#include "worker/worker_session.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "job/block_sizes.h"
#include "worker/in_process_worker.h"
#include "worker/worker_service.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;
using Stream = grpc::ClientReaderWriter<v1::ControllerMessage, v1::WorkerMessage>;

class WorkerSessionTest : public ::testing::Test {
 protected:
  void Serve(const std::string& token = "") {
    worker_ = std::make_unique<::iofleet::testing::InProcessWorker>(token);
    ASSERT_TRUE(worker_->serving());
    stub_ = v1::WorkerService::NewStub(grpc::CreateChannel(worker_->address(), grpc::InsecureChannelCredentials()));
  }
  static v1::ControllerMessage Prepare(const std::string& run_id, int runtime_ms, uint64_t lease_ms = 5000) {
    return ::iofleet::testing::PrepareNullRun(run_id, runtime_ms, lease_ms);
  }
  static v1::ControllerMessage Start(const std::string& run_id, absl::Duration ahead) { return ::iofleet::testing::StartRun(run_id, ahead); }
  static v1::ControllerMessage Hello() { return ::iofleet::testing::HelloMessage(); }

  std::unique_ptr<::iofleet::testing::InProcessWorker> worker_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
};

// hello, prepare, start; then the run's interval reports, its final report and the end of its
// reports arrive on the same stream, in that order.
TEST_F(WorkerSessionTest, OneStreamCarriesARunFromHelloToItsLastReport) {
  Serve();
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub_->Session(&context);
  v1::WorkerMessage in;
  ASSERT_TRUE(stream->Write(Hello()));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_hello()) << in.DebugString();
  EXPECT_EQ(in.hello().protocol_version(), kProtocolVersion);

  ASSERT_TRUE(stream->Write(Prepare("r1", 400)));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_prepared()) << in.DebugString();
  EXPECT_EQ(in.prepared().run_id(), "r1");

  ASSERT_TRUE(stream->Write(Start("r1", absl::Milliseconds(100))));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_started()) << in.DebugString();
  EXPECT_GT(in.started().lead_ns(), 0);

  int intervals = 0, finals = 0;
  uint64_t ops = 0;
  while (stream->Read(&in) && !in.has_ended()) {
    ASSERT_TRUE(in.has_report()) << in.DebugString();
    EXPECT_EQ(in.report().run_id(), "r1");
    EXPECT_EQ(finals, 0) << "nothing after the job's final report but the end";
    for (const v1::DirectionStats& d : in.report().directions()) ops += d.ops();
    (in.report().final() ? finals : intervals)++;
  }
  ASSERT_TRUE(in.has_ended());
  EXPECT_EQ(in.ended().run_id(), "r1");
  EXPECT_EQ(finals, 1);
  EXPECT_GE(intervals, 3);
  EXPECT_GE(ops, 500u) << "2,000 IOPS for 0.4 s";
  EXPECT_LE(ops, 1000u);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A command that fails is answered with a problem naming the command, its run and why; the
// session goes on. A clock probe comes back with the worker's receive and send times.
TEST_F(WorkerSessionTest, ProblemsAreAnsweredAndTheSessionGoesOn) {
  Serve();
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub_->Session(&context);
  v1::WorkerMessage in;
  v1::ControllerMessage bad = Prepare("r2", 400);
  bad.mutable_prepare()->mutable_spec()->mutable_jobs(0)->set_iodepth(0);
  ASSERT_TRUE(stream->Write(bad));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_problem()) << in.DebugString();
  EXPECT_EQ(in.problem().command(), "prepare");
  EXPECT_EQ(in.problem().run_id(), "r2");
  EXPECT_EQ(in.problem().code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(in.problem().message(), HasSubstr("iodepth must be at least 1"));

  ASSERT_TRUE(stream->Write(Start("never-prepared", absl::Milliseconds(100))));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_problem()) << in.DebugString();
  EXPECT_EQ(in.problem().command(), "start");
  EXPECT_EQ(in.problem().code(), static_cast<int>(absl::StatusCode::kNotFound));

  v1::ControllerMessage probe;
  const int64_t sent = absl::ToUnixNanos(absl::Now());
  probe.mutable_probe()->set_sequence(7);
  probe.mutable_probe()->set_controller_send_unix_ns(sent);
  ASSERT_TRUE(stream->Write(probe));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_echo()) << in.DebugString();
  EXPECT_EQ(in.echo().sequence(), 7u);
  EXPECT_EQ(in.echo().controller_send_unix_ns(), sent);
  EXPECT_GE(in.echo().worker_receive_unix_ns(), sent);
  EXPECT_GE(in.echo().worker_send_unix_ns(), in.echo().worker_receive_unix_ns());
  EXPECT_LE(in.echo().worker_send_unix_ns(), absl::ToUnixNanos(absl::Now()));

  ASSERT_TRUE(stream->Write(Hello()));
  ASSERT_TRUE(stream->Read(&in));
  EXPECT_TRUE(in.has_hello()) << "the session went on";
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A run lives as long as its session is open — well past its lease, whether the controller
// talks or not (a busy controller is not a gone one) — and stops at its lease, counted from the
// controller's last message, once the session ends.
TEST_F(WorkerSessionTest, RunsLiveWhileTheSessionIsOpenAndStopAtTheLeaseAfter) {
  Serve();
  auto context = std::make_unique<grpc::ClientContext>();
  std::unique_ptr<Stream> stream = stub_->Session(context.get());
  v1::WorkerMessage in;
  ASSERT_TRUE(stream->Write(Prepare("r3", 20'000, /*lease_ms=*/500)));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_prepared()) << in.DebugString();
  ASSERT_TRUE(stream->Write(Start("r3", absl::Milliseconds(50))));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_started()) << in.DebugString();
  // Three leases of silence from the controller, reading the interval reports as they come.
  int intervals = 0;
  const absl::Time until = absl::Now() + absl::Milliseconds(1500);
  while (absl::Now() < until && stream->Read(&in)) {
    ASSERT_TRUE(in.has_report()) << in.DebugString();
    ASSERT_FALSE(in.report().final()) << "the run ended while its session was open: " << in.report().stop_reason();
    ++intervals;
  }
  EXPECT_GE(intervals, 5);
  // The controller goes away: the run stops at its lease; the worker says why.
  context->TryCancel();
  (void)stream->Finish();
  // Asked (without renewing anything: the same prepare again, on a new session) until the
  // worker says the run ended; bounded, not after a fixed sleep.
  std::string said;
  for (const absl::Time give_up = absl::Now() + absl::Seconds(10); absl::Now() < give_up;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    grpc::ClientContext ask_context;
    std::unique_ptr<Stream> ask = stub_->Session(&ask_context);
    ASSERT_TRUE(ask->Write(Prepare("r3", 20'000, 500)));
    ASSERT_TRUE(ask->Read(&in));
    ask_context.TryCancel();
    (void)ask->Finish();
    said = in.has_problem() ? in.problem().message() : in.DebugString();
    if (in.has_problem() && in.problem().code() == static_cast<int>(absl::StatusCode::kFailedPrecondition)) break;
  }
  EXPECT_THAT(said, HasSubstr("its lease expired"));
}

// While a run's files are laid out the session keeps answering, and a stop for that run gives
// the layout up: its prepare answers CANCELLED.
TEST_F(WorkerSessionTest, ALayoutCanBeGivenUpWhileTheSessionAnswers) {
  Serve();
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub_->Session(&context);
  v1::ControllerMessage prepare = Prepare("big", 1000);
  v1::JobSpec* job = prepare.mutable_prepare()->mutable_spec()->mutable_jobs(0);
  job->set_ioengine("psync");  // a read job on disk: its 8 GiB file is filled first
  job->set_size(8ull << 30);
  job->set_directory(std::string(std::getenv("TEST_TMPDIR")) + "/big");
  ASSERT_TRUE(stream->Write(prepare));
  v1::ControllerMessage probe;
  probe.mutable_probe()->set_sequence(1);
  ASSERT_TRUE(stream->Write(probe));
  v1::WorkerMessage in;
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_echo()) << "answered during the layout: " << in.DebugString();
  v1::ControllerMessage stop;
  stop.mutable_stop()->set_run_id("big");
  ASSERT_TRUE(stream->Write(stop));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_problem()) << in.DebugString();
  EXPECT_EQ(in.problem().command(), "prepare");
  EXPECT_EQ(in.problem().run_id(), "big");
  EXPECT_EQ(in.problem().code(), static_cast<int>(absl::StatusCode::kCancelled)) << in.problem().message();
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(WorkerSessionTest, ASessionWithoutTheTokenIsRefused) {
  Serve("s3cret");
  grpc::ClientContext context;
  std::unique_ptr<Stream> stream = stub_->Session(&context);
  stream->Write(Hello());
  v1::WorkerMessage in;
  EXPECT_FALSE(stream->Read(&in));
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("--token-file"));
}

}  // namespace
}  // namespace iofleet
