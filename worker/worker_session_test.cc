// The session stream over real gRPC, in-process: a controller's commands in, answers, reports
// and problems out; leases that live as long as the controller talks; refusals.
#include "worker/worker_session.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

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
    ASSERT_TRUE(in.has_reports()) << in.DebugString();
    for (const v1::IntervalReport& report : in.reports().reports()) {
      EXPECT_EQ(report.run_id(), "r1");
      EXPECT_EQ(finals, 0) << "nothing after the job's final report but the end";
      for (const v1::DirectionStats& d : report.directions()) ops += d.ops();
      (report.final() ? finals : intervals)++;
    }
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

  // Releases (RunSpec.jobs_released) of no run here, of a run whose jobs are not released, for
  // an instant a day away: each refused, naming why.
  ASSERT_TRUE(stream->Write(Prepare("r3", 400)));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_prepared()) << in.DebugString();
  const int64_t day = int64_t{86400} * 1'000'000'000;
  const std::vector<std::tuple<std::string, int64_t, absl::StatusCode, std::string>> releases = {
      {"never-prepared", absl::ToUnixNanos(absl::Now()), absl::StatusCode::kNotFound, "no run never-prepared in this session"},
      {"r3", absl::ToUnixNanos(absl::Now()), absl::StatusCode::kFailedPrecondition, "not on a release"},
      {"r3", absl::ToUnixNanos(absl::Now()) + day, absl::StatusCode::kInvalidArgument, "ahead of this worker's clock"},
      {"", absl::ToUnixNanos(absl::Now()), absl::StatusCode::kInvalidArgument, "run_id"}};
  for (const auto& [run_id, instant, code, why] : releases) {
    v1::ControllerMessage release;
    release.mutable_release()->set_run_id(run_id);
    release.mutable_release()->set_job_index(1);
    release.mutable_release()->set_start_unix_ns(instant);
    ASSERT_TRUE(stream->Write(release));
    ASSERT_TRUE(stream->Read(&in));
    ASSERT_TRUE(in.has_problem()) << in.DebugString();
    EXPECT_EQ(in.problem().command(), "release");
    EXPECT_EQ(in.problem().code(), static_cast<int>(code)) << in.problem().message();
    EXPECT_THAT(in.problem().message(), HasSubstr(why));
  }
  v1::ControllerMessage stop;
  stop.mutable_stop()->set_run_id("r3");
  ASSERT_TRUE(stream->Write(stop));
  while (stream->Read(&in) && !in.has_ended()) {
  }
  ASSERT_TRUE(in.has_ended()) << in.DebugString();

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

  // A probe for silent workers only: the echo above was heard since the previous probe, so
  // probe 8 gets no answer; the worker has been silent since 8, so 9 gets one. After a hello,
  // a probe that asks everyone is answered still.
  for (uint64_t sequence : {8, 9}) {
    probe.mutable_probe()->set_sequence(sequence);
    probe.mutable_probe()->set_answer_only_if_silent(true);
    ASSERT_TRUE(stream->Write(probe));
  }
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_echo()) << in.DebugString();
  EXPECT_EQ(in.echo().sequence(), 9u);
  ASSERT_TRUE(stream->Write(Hello()));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_hello()) << in.DebugString();
  probe.mutable_probe()->set_sequence(10);
  probe.mutable_probe()->set_answer_only_if_silent(false);
  ASSERT_TRUE(stream->Write(probe));
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_echo()) << in.DebugString();
  EXPECT_EQ(in.echo().sequence(), 10u);

  ASSERT_TRUE(stream->Write(Hello()));
  ASSERT_TRUE(stream->Read(&in));
  EXPECT_TRUE(in.has_hello()) << "the session went on";
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// A run lives as long as its controller talks — well past its lease, renewed by every message
// (a probe here each lease/5) — and stops at its lease once the controller goes quiet, whether
// its stream is still open (a controller hung, or a connection dead without a reset) or not.
TEST_F(WorkerSessionTest, RunsLiveWhileTheControllerTalksAndStopAtTheLeaseWhenItGoesQuiet) {
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
  // Three leases, probing every 100 ms and reading the interval reports as they come.
  int intervals = 0;
  absl::Time next_probe = absl::Now();
  const absl::Time until = absl::Now() + absl::Milliseconds(1500);
  while (absl::Now() < until && stream->Read(&in)) {
    if (absl::Now() >= next_probe) {
      v1::ControllerMessage probe;
      probe.mutable_probe()->set_sequence(1);
      ASSERT_TRUE(stream->Write(probe));
      next_probe = absl::Now() + absl::Milliseconds(100);
    }
    if (in.has_echo()) continue;
    ASSERT_TRUE(in.has_reports()) << in.DebugString();
    for (const v1::IntervalReport& report : in.reports().reports()) {
      ASSERT_FALSE(report.final()) << "the run ended while its controller talked: " << report.stop_reason();
      ++intervals;
    }
  }
  EXPECT_GE(intervals, 5);
  // The controller goes quiet, its stream still open: the run stops at its lease and its final
  // report says why.
  std::string stop_reason;
  v1::StopCause stop_cause = v1::STOP_CAUSE_UNSPECIFIED;
  while (stream->Read(&in)) {
    for (const v1::IntervalReport& report : in.reports().reports()) {
      if (report.final()) {
        stop_reason = report.stop_reason();
        stop_cause = report.stop_cause();
      }
    }
    if (!stop_reason.empty()) break;
  }
  EXPECT_THAT(stop_reason, HasSubstr("lease expired"));
  EXPECT_EQ(stop_cause, v1::STOP_CAUSE_LEASE_EXPIRED);
  context->TryCancel();
  (void)stream->Finish();
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

// A stream cut mid-run (the controller's connection went): the session waits, detached, and a
// new stream that resumes it gets the worker's messages from the first one the controller did
// not receive — none missing, none twice — and the run goes on to its end. A session the worker
// does not have cannot be resumed, and says why.
TEST_F(WorkerSessionTest, ACutStreamIsResumedWithNothingLostOrRepeated) {
  Serve();
  uint64_t sent = 0;
  auto numbered = [&sent](v1::ControllerMessage message) {
    message.set_sequence(++sent);
    return message;
  };
  auto first_context = std::make_unique<grpc::ClientContext>();
  std::unique_ptr<Stream> first = stub_->Session(first_context.get());
  v1::ControllerMessage hello = Hello();
  hello.mutable_hello()->set_session_id("s-resume");
  v1::WorkerMessage in;
  ASSERT_TRUE(first->Write(numbered(hello)));
  ASSERT_TRUE(first->Read(&in));
  ASSERT_TRUE(in.has_hello());
  ASSERT_TRUE(first->Write(numbered(Prepare("r5", 1500, /*lease_ms=*/5000))));
  ASSERT_TRUE(first->Read(&in));
  ASSERT_TRUE(in.has_prepared()) << in.DebugString();
  ASSERT_TRUE(first->Write(numbered(Start("r5", absl::Milliseconds(50)))));
  ASSERT_TRUE(first->Read(&in));
  ASSERT_TRUE(in.has_started()) << in.DebugString();
  std::vector<uint32_t> intervals;
  uint64_t received = in.sequence();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(first->Read(&in));
    ASSERT_TRUE(in.has_reports()) << in.DebugString();
    ASSERT_EQ(in.sequence(), received + 1);
    received = in.sequence();
    for (const v1::IntervalReport& report : in.reports().reports()) intervals.push_back(report.interval_index());
  }
  first_context->TryCancel();  // the cut; what the worker sent meanwhile never arrives
  (void)first->Finish();

  grpc::ClientContext second_context;
  std::unique_ptr<Stream> second = stub_->Session(&second_context);
  v1::ControllerMessage resume = Hello();
  resume.mutable_hello()->set_session_id("s-resume");
  resume.mutable_hello()->set_resume(true);
  resume.mutable_hello()->set_received_through(received);
  ASSERT_TRUE(second->Write(resume));
  ASSERT_TRUE(second->Read(&in));
  ASSERT_TRUE(in.has_hello()) << in.DebugString();
  EXPECT_TRUE(in.hello().resumed());
  EXPECT_EQ(in.hello().received_through(), sent) << "every command arrived before the cut";
  bool final_seen = false;
  while (second->Read(&in) && !in.has_ended()) {
    ASSERT_EQ(in.sequence(), received + 1) << "a message missing or repeated: " << in.DebugString();
    received = in.sequence();
    ASSERT_TRUE(in.has_reports()) << in.DebugString();
    for (const v1::IntervalReport& report : in.reports().reports()) {
      if (report.final()) {
        final_seen = true;
        EXPECT_EQ(report.stop_reason(), "") << "the run was not stopped by the cut";
      } else {
        intervals.push_back(report.interval_index());
      }
    }
  }
  ASSERT_TRUE(in.has_ended()) << in.DebugString();
  EXPECT_TRUE(final_seen);
  for (size_t i = 0; i < intervals.size(); ++i) EXPECT_EQ(intervals[i], i) << "intervals in order, each once";
  EXPECT_GE(intervals.size(), 14u);  // 1.5 s of 100 ms intervals
  v1::ControllerMessage end;
  end.mutable_end();
  ASSERT_TRUE(second->Write(numbered(end)));
  second->WritesDone();
  EXPECT_TRUE(second->Finish().ok());

  // Ended by the controller: nothing left to resume.
  grpc::ClientContext third_context;
  std::unique_ptr<Stream> third = stub_->Session(&third_context);
  ASSERT_TRUE(third->Write(resume));
  EXPECT_FALSE(third->Read(&in));
  const grpc::Status refused = third->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(refused.error_message(), HasSubstr("no session s-resume to resume"));
}

// A session's name is kept by the worker (for a resume): one that is too long or not printable
// is refused, whether it opens a session or resumes one.
TEST_F(WorkerSessionTest, ASessionNameTooLongOrNotPrintableIsRefused) {
  Serve();
  for (const std::string& id : {std::string(129, 's'), std::string("s\n1")}) {
    for (bool resume : {false, true}) {
      grpc::ClientContext context;
      std::unique_ptr<Stream> stream = stub_->Session(&context);
      v1::ControllerMessage hello = Hello();
      hello.mutable_hello()->set_session_id(id);
      hello.mutable_hello()->set_resume(resume);
      stream->Write(hello);
      v1::WorkerMessage in;
      EXPECT_FALSE(stream->Read(&in));
      const grpc::Status status = stream->Finish();
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << id.size() << " " << resume;
      EXPECT_THAT(status.error_message(), HasSubstr("session id"));
    }
  }
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
