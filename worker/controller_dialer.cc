#include "worker/controller_dialer.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/protocol_version.h"
#include "common/session_auth.h"

namespace iofleet {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff(200), kLongestBackoff(5000);

std::shared_ptr<grpc::Channel> DialChannel(const std::string& address, const TransportSecurity& security) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  // As the worker's own server: runs live on their leases, not on the connection; pings only
  // clear away a connection dead for a long while.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // A connection of its own, as each worker process has (dialers in one process — the fleet
  // simulator — would otherwise share one).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, ChannelCredentialsFor(security), args);
}

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

  void Cancel() { context_.TryCancel(); }

  // The session's way out on this stream; false once the stream is broken.
  bool Send(const v1::WorkerMessage& message) {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (broken_) return false;
    outgoing_.push_back(message);
    if (!writing_) {
      writing_ = true;
      StartWrite(&outgoing_.front());
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
    if (!security.token.empty()) offer.mutable_hello()->set_auth_proof(TokenProof(security.token, "worker", controller_nonce, nonce_));
    offered_ = true;
    Send(offer);
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
      StartWrite(&outgoing_.front());
    } else {
      writing_ = false;
    }
  }

  void OnDone(const grpc::Status& status) override {
    Release();
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
    WorkerSession::Send send = [this](const v1::WorkerMessage& message) { return Send(message); };
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
  bool offered_ = false, ended_ = false, released_ = false;
  absl::Status failure_;
  std::mutex write_mu_;
  std::deque<v1::WorkerMessage> outgoing_;
  bool writing_ = false, broken_ = false;
};

ControllerDialer::ControllerDialer(SessionRegistry* sessions, std::string address, TransportSecurity security)
    : sessions_(sessions), address_(std::move(address)), security_(std::move(security)),
      channel_(DialChannel(address_, security_)), stub_(v1::ControllerService::NewStub(channel_)) {}

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
  calling_ = false;
  call_ = nullptr;
  if (stopping_) {
    cv_.notify_all();
    return;
  }
  if (how.ok()) {  // a session ended as it should: offer ourselves for the next at once
    backoff_ = kFirstBackoff;
    last_problem_.clear();
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
  alarm_.Set(std::chrono::system_clock::now() + backoff_, [this](bool) {
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
    if (waiting_) alarm_.Cancel();
    cv_.notify_all();
    cv_.wait(lock, [this] { return !calling_ && !waiting_; });
    session = std::move(session_);
  }
  if (session != nullptr) sessions_->Forget(session);
}

}  // namespace iofleet
