// The controller's session client against a real worker service over gRPC (in-process): many
// sessions served by gRPC's own threads, messages in order per session, a run carried from
// prepare to its last report, and ends — by the worker's refusal or by cancelling — reported
// once.
#include "controller/session_client.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/block_sizes.h"
#include "worker/worker_service.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

// Everything the sessions heard, per worker, and a way to wait for it.
class Recorder : public SessionEvents {
 public:
  void OnMessage(size_t worker, const v1::WorkerMessage& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages_[worker].push_back(message);
    cv_.notify_all();
  }
  void OnClosed(size_t worker, const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_[worker].push_back(status);
    cv_.notify_all();
  }
  // Waits (up to 10 s) until `done` holds for what was heard.
  template <typename Condition>
  bool WaitFor(Condition done) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return done(messages_, closed_); });
  }
  using Messages = std::map<size_t, std::vector<v1::WorkerMessage>>;
  using Closed = std::map<size_t, std::vector<absl::Status>>;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  Messages messages_;
  Closed closed_;
};

class SessionClientTest : public ::testing::Test {
 protected:
  void Serve(const std::string& token = "") {
    service_ = std::make_unique<WorkerServiceImpl>(*PathPolicy::Create({std::getenv("TEST_TMPDIR")}),
                                                   ProtocolVersions{kProtocolVersion, kMinCompatibleProtocolVersion}, token);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(port);
    stub_ = v1::WorkerService::NewStub(SessionChannel(address_, {}));
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
  static v1::ControllerMessage Hello() {
    v1::ControllerMessage message;
    message.mutable_hello()->set_protocol_version(kProtocolVersion);
    message.mutable_hello()->set_min_compatible_version(kMinCompatibleProtocolVersion);
    return message;
  }

  std::unique_ptr<WorkerServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
};

// 64 sessions at once, each sending a burst of probes: every session gets every echo, in the
// order sent, and nothing of another session's.
TEST_F(SessionClientTest, ManySessionsEachGetTheirAnswersInOrder) {
  Serve();
  Recorder recorder;
  constexpr size_t kSessions = 64, kProbes = 20;
  std::vector<std::unique_ptr<SessionClient>> sessions;
  for (size_t w = 0; w < kSessions; ++w) sessions.push_back(std::make_unique<SessionClient>(stub_.get(), w, address_, TransportSecurity{}, &recorder));
  for (uint64_t p = 0; p < kProbes; ++p) {
    for (size_t w = 0; w < kSessions; ++w) {
      v1::ControllerMessage probe;
      probe.mutable_probe()->set_sequence(w * 1000 + p);
      ASSERT_TRUE(sessions[w]->Send(probe));
    }
  }
  ASSERT_TRUE(recorder.WaitFor([&](const Recorder::Messages& m, const Recorder::Closed&) {
    for (size_t w = 0; w < kSessions; ++w) {
      auto it = m.find(w);
      if (it == m.end() || it->second.size() < kProbes) return false;
    }
    return true;
  }));
  recorder.WaitFor([&](const Recorder::Messages& m, const Recorder::Closed&) {
    for (size_t w = 0; w < kSessions; ++w) {
      const auto& heard = m.at(w);
      EXPECT_EQ(heard.size(), kProbes);
      for (uint64_t p = 0; p < heard.size(); ++p) EXPECT_EQ(heard[p].echo().sequence(), w * 1000 + p) << "session " << w;
    }
    return true;
  });
}

// A run from prepare to its last report on one session; then cancelling ends the session
// once, as CANCELLED, and later commands are refused.
TEST_F(SessionClientTest, ARunFromPrepareToItsEndThenCancel) {
  Serve();
  Recorder recorder;
  SessionClient session(stub_.get(), 0, address_, TransportSecurity{}, &recorder);
  v1::ControllerMessage prepare;
  v1::PrepareRequest* request = prepare.mutable_prepare();
  request->set_run_id("r1");
  request->set_worker_count(1);
  request->set_interval_ns(100'000'000);
  v1::JobSpec* job = request->mutable_spec()->add_jobs();
  job->set_name("null");
  job->set_rw(v1::RAND_READ);
  SetFixedBlockSize(job, 4096);
  job->set_size(1 << 20);
  job->set_numjobs(1);
  job->set_iodepth(1);
  job->set_ioengine("null");
  job->set_time_based(true);
  job->set_runtime_ns(300'000'000);
  ASSERT_TRUE(session.Send(Hello()));
  ASSERT_TRUE(session.Send(prepare));
  ASSERT_TRUE(recorder.WaitFor([](const Recorder::Messages& m, const Recorder::Closed&) {
    return m.count(0) && m.at(0).size() >= 2;
  }));
  v1::ControllerMessage start;
  start.mutable_start()->set_run_id("r1");
  start.mutable_start()->set_start_unix_ns(absl::ToUnixNanos(absl::Now() + absl::Milliseconds(100)));
  ASSERT_TRUE(session.Send(start));
  ASSERT_TRUE(recorder.WaitFor([](const Recorder::Messages& m, const Recorder::Closed&) {
    return m.count(0) && m.at(0).back().has_ended();
  }));
  recorder.WaitFor([](const Recorder::Messages& m, const Recorder::Closed&) {
    const auto& heard = m.at(0);
    EXPECT_TRUE(heard[0].has_hello());
    EXPECT_TRUE(heard[1].has_prepared());
    EXPECT_TRUE(heard[2].has_started());
    int finals = 0;
    for (size_t i = 3; i + 1 < heard.size(); ++i) {
      EXPECT_TRUE(heard[i].has_report()) << heard[i].DebugString();
      finals += heard[i].report().final();
    }
    EXPECT_EQ(finals, 1);
    return true;
  });

  session.Cancel();
  ASSERT_TRUE(session.WaitClosed(absl::Seconds(10)));
  recorder.WaitFor([](const Recorder::Messages&, const Recorder::Closed& c) {
    EXPECT_EQ(c.at(0).size(), 1u);
    EXPECT_EQ(c.at(0)[0].code(), absl::StatusCode::kCancelled);
    return true;
  });
  EXPECT_FALSE(session.Send(Hello())) << "a command after the end is refused";
}

// A worker that wants a token ends a session without it: the end says so, once.
TEST_F(SessionClientTest, ARefusedSessionEndsOnceWithTheReason) {
  Serve("s3cret");
  Recorder recorder;
  SessionClient session(stub_.get(), 5, address_, TransportSecurity{}, &recorder);
  session.Send(Hello());
  ASSERT_TRUE(recorder.WaitFor([](const Recorder::Messages&, const Recorder::Closed& c) { return c.count(5) > 0; }));
  ASSERT_TRUE(session.WaitClosed(absl::Seconds(10)));
  recorder.WaitFor([&](const Recorder::Messages& m, const Recorder::Closed& c) {
    EXPECT_EQ(m.count(5), 0u);
    EXPECT_EQ(c.at(5).size(), 1u);
    EXPECT_EQ(c.at(5)[0].code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(std::string(c.at(5)[0].message()), HasSubstr(absl::StrCat("worker ", address_, ": session ended")));
    return true;
  });
}

}  // namespace
}  // namespace iofleet
