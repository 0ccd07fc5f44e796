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
#include "worker/in_process_worker.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

// Everything the sessions heard, per worker, and a way to wait for it.
class Recorder : public SessionEvents {
 public:
  void OnMessage(const SessionStream& from, v1::WorkerMessage message) override {
    std::lock_guard<std::mutex> lock(mu_);
    messages_[from.worker()].push_back(message);
    cv_.notify_all();
  }
  void OnClosed(const SessionStream& from, const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_[from.worker()].push_back(status);
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
    worker_ = std::make_unique<::iofleet::testing::InProcessWorker>(token);
    ASSERT_TRUE(worker_->serving());
    address_ = worker_->address();
    stub_ = v1::WorkerService::NewStub(SessionChannel(address_, {}));
  }
  static v1::ControllerMessage Hello() { return ::iofleet::testing::HelloMessage(); }

  std::unique_ptr<::iofleet::testing::InProcessWorker> worker_;
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
  const v1::ControllerMessage prepare = ::iofleet::testing::PrepareNullRun("r1", 300);
  ASSERT_TRUE(session.Send(Hello()));
  ASSERT_TRUE(session.Send(prepare));
  ASSERT_TRUE(recorder.WaitFor([](const Recorder::Messages& m, const Recorder::Closed&) {
    return m.count(0) && m.at(0).size() >= 2;
  }));
  const v1::ControllerMessage start = ::iofleet::testing::StartRun("r1", absl::Milliseconds(100));
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
      EXPECT_TRUE(heard[i].has_reports()) << heard[i].DebugString();
      for (const v1::IntervalReport& report : heard[i].reports().reports()) finals += report.final();
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
