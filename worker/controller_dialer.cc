#include "worker/controller_dialer.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/protocol_version.h"
#include "common/session_auth.h"

namespace iofleet {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff(200), kLongestBackoff(5000);

}  // namespace

std::shared_ptr<grpc::Channel> ControllerDialer::NewChannel(const std::string& address, const TransportSecurity& security) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // As the worker's own server: runs live on their leases, not on the connection; pings only
  // clear away a connection dead for a long while.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // No bandwidth-probing pings (as the worker's server, worker/main.cc): a session carries a
  // few messages a second, and each ping wakes both ends — a fleet simulator of 1,000 workers
  // and their relay spent 40% of their CPU on them.
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // A connection of its own, as each worker process has (dialers in one process — the fleet
  // simulator — would otherwise share one).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, ChannelCredentialsFor(security), args);
}

namespace {

// The dialers' back-off waits, one thread for all the dialers of a process (a relay or the fleet
// simulator holds thousands): a function runs at its time unless cancelled first.
class RetryTimer {
 public:
  using Clock = std::chrono::steady_clock;
  static RetryTimer& Get() {
    static RetryTimer* timer = new RetryTimer();  // lives as long as the process (its thread too)
    return *timer;
  }
  uint64_t At(Clock::time_point when, std::function<void()> run) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = ++next_id_;
    due_.emplace(std::make_pair(when, id), std::move(run));
    when_.emplace(id, when);
    cv_.notify_all();
    return id;
  }
  // True if it had not run (and now will not).
  bool Cancel(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = when_.find(id);
    if (it == when_.end()) return false;
    due_.erase(std::make_pair(it->second, id));
    when_.erase(it);
    return true;
  }

 private:
  RetryTimer() { std::thread([this] { Loop(); }).detach(); }
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (due_.empty()) {
        cv_.wait(lock);
        continue;
      }
      auto first = due_.begin();
      if (first->first.first > Clock::now()) {
        cv_.wait_until(lock, first->first.first);
        continue;
      }
      std::function<void()> run = std::move(first->second);
      when_.erase(first->first.second);
      due_.erase(first);
      lock.unlock();
      run();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::pair<Clock::time_point, uint64_t>, std::function<void()>> due_;
  std::map<uint64_t, Clock::time_point> when_;
  uint64_t next_id_ = 0;
};

}  // namespace

// One stream to the controller: the offer, then the session it carries, until it ends.
class ControllerDialer::Call final : public grpc::ClientBidiReactor<v1::WorkerMessage, v1::ControllerMessage> {
 public:
  explicit Call(ControllerDialer* dialer) : dialer_(dialer), nonce_(NewNonce()) {
    context_.AddMetadata(kDialNonceKey, nonce_);
    dialer_->stub_->async()->Session(&context_, this);
    // Held until no thread but gRPC's can start a write (the session is detached): OnDone
    // comes only after that.
    AddHold();
    {
      // Stop() cancels the call from here on.
      std::lock_guard<std::mutex> lock(dialer_->mu_);
      dialer_->call_ = this;
      if (dialer_->stopping_) context_.TryCancel();
    }
    StartCall();
  }

  // From outside the reactions (Stop, a session replacing this stream): only while the hold is
  // held — gRPC releases the call before OnDone, and cancelling a released call is a crash.
  // After Release the stream is ending on its own.
  void Cancel() {
    std::lock_guard<std::mutex> lock(hold_mu_);
    if (!released_) context_.TryCancel();
  }

  // The session's way out on this stream; false once the stream is broken.
  bool Send(WorkerSession::Message message) {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (broken_) return false;
    outgoing_.push_back(std::move(message));
    if (!writing_) {
      writing_ = true;
      StartWrite(outgoing_.front().get());
    }
    return true;
  }

  void OnReadInitialMetadataDone(bool ok) override {
    if (!ok) return Release();  // the call failed: OnDone says how
    // A controller opens with its nonce; without one it is no controller.
    const std::string controller_nonce = MetadataValue(context_.GetServerInitialMetadata(), kDialNonceKey);
    if (controller_nonce.empty()) return Fail(absl::UnavailableError(absl::StrCat("cannot reach the controller at ", dialer_->address_)));
    // Nothing the controller says is obeyed before it has proved it holds our token.
    const TransportSecurity& security = dialer_->security_;
    if (!security.token.empty() && !ProofMatches(TokenProof(security.token, "controller", nonce_, controller_nonce),
                                                 MetadataValue(context_.GetServerInitialMetadata(), kDialProofKey))) {
      return Fail(absl::UnauthenticatedError(absl::StrCat("the controller at ", dialer_->address_,
                                                          " did not prove it holds this worker's token (--token-file): refusing its commands")));
    }
    // Who this worker is, and the session it resumes, if any.
    v1::WorkerMessage offer;
    v1::HelloRequest own;
    own.set_protocol_version(kProtocolVersion);
    own.set_min_compatible_version(kMinCompatibleProtocolVersion);
    (void)dialer_->sessions_->backend()->DoHello(own, offer.mutable_hello());
    if (std::shared_ptr<WorkerSession> session = Session()) {
      offer.mutable_hello()->set_session_id(session->id());
      offer.mutable_hello()->set_received_through(session->received_through());
    }
    if (dialer_->launch_rank_.has_value()) offer.mutable_hello()->set_launch_rank(*dialer_->launch_rank_);
    if (!security.token.empty()) offer.mutable_hello()->set_auth_proof(TokenProof(security.token, "worker", controller_nonce, nonce_));
    offered_ = true;
    Send(std::make_shared<const v1::WorkerMessage>(std::move(offer)));
    StartRead(&incoming_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Release();  // the stream ended (OnDone says how); the session waits for a resume
    if (ended_) return StartRead(&incoming_);  // after the end: until the controller closes
    if (session_ == nullptr) {
      if (absl::Status opened = Open(incoming_); !opened.ok()) return Fail(opened);
    } else if (!session_->Handle(incoming_)) {
      End();
    }
    StartRead(&incoming_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(write_mu_);
    outgoing_.pop_front();
    if (!ok) {
      broken_ = true;
      outgoing_.clear();
    }
    if (!outgoing_.empty()) {
      StartWrite(outgoing_.front().get());
    } else {
      writing_ = false;
    }
  }

  void OnDone(const grpc::Status& status) override {
    {
      std::lock_guard<std::mutex> lock(dialer_->mu_);
      dialer_->call_ = nullptr;  // Stop no longer reaches this call
    }
    absl::Status how = failure_;
    if (ended_) {
      how = absl::OkStatus();
    } else if (how.ok() && session_ == nullptr && offered_ && status.error_code() == grpc::StatusCode::NOT_FOUND && Session() != nullptr) {
      // The controller no longer has our session (another run now, or it gave us up).
      std::shared_ptr<WorkerSession> stale = Session();
      dialer_->sessions_->Forget(stale);
      SetSession(nullptr);
    } else if (how.ok() && session_ == nullptr) {
      how = absl::UnavailableError(offered_ ? absl::StrCat("the controller at ", dialer_->address_, " refused this worker: ", status.error_message())
                                            : absl::StrCat("cannot reach the controller at ", dialer_->address_, ": ", status.error_message()));
    } else if (how.ok()) {
      how = absl::UnavailableError(absl::StrCat("the connection to the controller at ", dialer_->address_, " was cut (", status.error_message(),
                                                "); its session waits for a resume"));
    } else if (!status.ok()) {
      how = absl::Status(how.code(), absl::StrCat(how.message(), ": ", status.error_message()));
    }
    ControllerDialer* dialer = dialer_;
    delete this;
    dialer->CallDone(how);
  }

 private:
  std::shared_ptr<WorkerSession> Session() {
    std::lock_guard<std::mutex> lock(dialer_->mu_);
    return dialer_->session_;
  }
  void SetSession(std::shared_ptr<WorkerSession> session) {
    std::lock_guard<std::mutex> lock(dialer_->mu_);
    dialer_->session_ = std::move(session);
  }

  // The controller's first message: it resumes our session, or opens a new one.
  absl::Status Open(const v1::ControllerMessage& first) {
    WorkerSession::Send send = [this](WorkerSession::Message message) { return Send(std::move(message)); };
    WorkerSession::Cancel cancel = [this] { Cancel(); };
    std::shared_ptr<WorkerSession> session = Session();
    SessionRegistry* sessions = dialer_->sessions_;
    if (first.has_hello() && first.hello().resume() && session != nullptr && first.hello().session_id() == session->id()) {
      absl::StatusOr<uint64_t> attached = session->Attach(send, cancel, first.hello().received_through(), nullptr);
      if (!attached.ok()) {
        sessions->Forget(session);
        SetSession(nullptr);
        return absl::UnavailableError(attached.status().message());
      }
      attachment_ = *attached;
      session_ = session;
      Log(LogLevel::kInfo, absl::StrCat("session ", session->id(), " resumed with the controller at ", dialer_->address_));
      return absl::OkStatus();
    }
    if (!first.has_hello() || first.hello().session_id().empty()) {
      return absl::UnavailableError(absl::StrCat("the controller at ", dialer_->address_, " did not open a session (its first message was not a hello)"));
    }
    if (session != nullptr) sessions->Forget(session);  // a new session replaces the old
    SetSession(nullptr);
    absl::StatusOr<std::shared_ptr<WorkerSession>> made = sessions->New(first.hello().session_id());
    if (!made.ok()) return absl::UnavailableError(made.status().message());
    absl::StatusOr<uint64_t> attached = (*made)->Attach(send, cancel, 0, nullptr);
    if (!attached.ok()) {
      sessions->Forget(*made);
      return absl::UnavailableError(attached.status().message());
    }
    SetSession(*made);
    session_ = *made;
    attachment_ = *attached;
    Log(LogLevel::kInfo, absl::StrCat("session ", session_->id(), " opened by the controller at ", dialer_->address_));
    if (!session_->Handle(first)) End();
    return absl::OkStatus();
  }

  // The controller ended the session: the worker forgets it and offers itself again.
  void End() {
    ended_ = true;
    Log(LogLevel::kInfo, absl::StrCat("session ", session_->id(), " ended by the controller"));
    dialer_->sessions_->Forget(session_);  // closed: it sends nothing more
    SetSession(nullptr);
    StartWritesDone();
    Release();
  }

  void Fail(absl::Status why) {
    failure_ = std::move(why);
    context_.TryCancel();
    Release();
  }

  // No thread but gRPC's starts writes from here on: the session (if any) is detached.
  void Release() {
    std::lock_guard<std::mutex> lock(hold_mu_);
    if (released_) return;
    released_ = true;
    if (session_ != nullptr && !ended_) session_->Detach(attachment_);
    RemoveHold();
  }

  ControllerDialer* const dialer_;
  const std::string nonce_;
  grpc::ClientContext context_;
  v1::ControllerMessage incoming_;
  // Reactions run one at a time per direction; these are the reading side's.
  std::shared_ptr<WorkerSession> session_;  // attached to this stream
  uint64_t attachment_ = 0;
  bool offered_ = false, ended_ = false;
  std::mutex hold_mu_;
  bool released_ = false;  // the hold is removed (hold_mu_)
  absl::Status failure_;
  std::mutex write_mu_;
  std::deque<WorkerSession::Message> outgoing_;
  bool writing_ = false, broken_ = false;
};

ControllerDialer::ControllerDialer(SessionRegistry* sessions, std::string address, TransportSecurity security,
                                   std::shared_ptr<grpc::Channel> channel)
    : sessions_(sessions), address_(std::move(address)), security_(std::move(security)),
      channel_(channel != nullptr ? std::move(channel) : NewChannel(address_, security_)),
      stub_(v1::ControllerService::NewStub(channel_)) {}

ControllerDialer::~ControllerDialer() { Stop(); }

void ControllerDialer::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_ || stopping_) return;
    started_ = true;
  }
  Log(LogLevel::kInfo, absl::StrCat("dialling the controller at ", address_));
  Attempt();
}

void ControllerDialer::Run() {
  Start();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return stopping_ && !calling_ && !waiting_; });
}

void ControllerDialer::Attempt() {
  std::shared_ptr<WorkerSession> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    // A session kept for a resume that has meanwhile run out (its runs' leases) is over.
    if (session_ != nullptr && sessions_->Find(session_->id()) != session_) expired = std::move(session_);
    calling_ = true;
  }
  if (expired != nullptr) expired->Close();
  new Call(this);  // gRPC owns it until its OnDone
}

void ControllerDialer::CallDone(const absl::Status& how) {
  std::unique_lock<std::mutex> lock(mu_);
  calling_ = false;  // (the call cleared call_ in its OnDone)
  if (stopping_) {
    cv_.notify_all();
    return;
  }
  if (how.ok()) {  // a session ended as it should: offer ourselves for the next at once
    backoff_ = kFirstBackoff;
    last_problem_.clear();
    if (session_limit_ > 0 && ++sessions_ended_ >= session_limit_) {
      lock.unlock();
      if (sessions_done_callback_) sessions_done_callback_();
      return;
    }
    lock.unlock();
    Attempt();
    return;
  }
  // Said once per kind of trouble, not once per retry.
  if (std::string problem(how.message()); problem != last_problem_) {
    Log(LogLevel::kWarning, absl::StrCat(problem, "; trying again (every ", kLongestBackoff.count() / 1000, " s at most)"));
    last_problem_ = problem;
  }
  waiting_ = true;
  retry_ = RetryTimer::Get().At(std::chrono::steady_clock::now() + backoff_, [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      waiting_ = false;
      if (stopping_) {
        cv_.notify_all();
        return;
      }
    }
    Attempt();
  });
  backoff_ = std::min(backoff_ * 2, kLongestBackoff);
}

void ControllerDialer::Stop() {
  std::shared_ptr<WorkerSession> session;
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    if (call_ != nullptr) call_->Cancel();
    if (waiting_ && RetryTimer::Get().Cancel(retry_)) waiting_ = false;  // else it is running: it sees stopping_
    cv_.notify_all();
    cv_.wait(lock, [this] { return !calling_ && !waiting_; });
    session = std::move(session_);
  }
  if (session != nullptr) sessions_->Forget(session);
}

}  // namespace iofleet
