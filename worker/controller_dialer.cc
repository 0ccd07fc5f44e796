#include "worker/controller_dialer.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/session_auth.h"
#include "worker/session_writer.h"

namespace iofleet {
namespace {

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
  return grpc::CreateCustomChannel(address, ChannelCredentialsFor(security), args);
}

}  // namespace

ControllerDialer::ControllerDialer(WorkerServiceImpl* service, std::string address, TransportSecurity security)
    : service_(service), address_(std::move(address)), security_(std::move(security)),
      channel_(DialChannel(address_, security_)), stub_(v1::ControllerService::NewStub(channel_)) {}

void ControllerDialer::Stop() {
  stopping_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ != nullptr) current_->TryCancel();
}

void ControllerDialer::Run() {
  auto backoff = std::chrono::milliseconds(200);
  std::string last_problem;
  Log(LogLevel::kInfo, absl::StrCat("dialling the controller at ", address_));
  while (!stopping_) {
    const absl::Status served = ServeOnce();
    if (stopping_) break;
    if (served.ok()) {  // a session ended as it should: offer ourselves for the next at once
      backoff = std::chrono::milliseconds(200);
      last_problem.clear();
      continue;
    }
    // Said once per kind of trouble, not once per retry.
    if (std::string problem(served.message()); problem != last_problem) {
      Log(LogLevel::kWarning, absl::StrCat(problem, "; trying again (every ", std::chrono::duration_cast<std::chrono::seconds>(
                                                                                 std::chrono::milliseconds(5000)).count(), " s at most)"));
      last_problem = problem;
    }
    for (auto slept = std::chrono::milliseconds(0); slept < backoff && !stopping_; slept += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
  if (session_ != nullptr) service_->ForgetSession(session_);
}

absl::Status ControllerDialer::ServeOnce() {
  // A session kept for a resume that has meanwhile run out (its runs' leases) is over.
  if (session_ != nullptr && service_->FindSession(session_->id()) != session_) {
    session_->Close();
    session_.reset();
  }
  grpc::ClientContext context;
  const std::string nonce = NewNonce();
  context.AddMetadata(kDialNonceKey, nonce);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::CancelledError("stopping");
    current_ = &context;
  }
  struct Forget {
    ControllerDialer* d;
    ~Forget() {
      std::lock_guard<std::mutex> lock(d->mu_);
      d->current_ = nullptr;
    }
  } forget{this};
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::ControllerMessage>> stream = stub_->Session(&context);
  auto failed = [&](const std::string& what) {
    context.TryCancel();
    const grpc::Status status = stream->Finish();
    return absl::UnavailableError(absl::StrCat(what, status.ok() ? "" : absl::StrCat(": ", status.error_message())));
  };
  stream->WaitForInitialMetadata();
  // A controller opens with its nonce; without one the call failed (or it is no controller).
  const std::string controller_nonce = MetadataValue(context.GetServerInitialMetadata(), kDialNonceKey);
  if (controller_nonce.empty()) return failed(absl::StrCat("cannot reach the controller at ", address_));
  // Nothing the controller says is obeyed before it has proved it holds our token.
  if (!security_.token.empty()) {
    if (!ProofMatches(TokenProof(security_.token, "controller", nonce, controller_nonce),
                      MetadataValue(context.GetServerInitialMetadata(), kDialProofKey))) {
      context.TryCancel();
      (void)stream->Finish();
      return absl::UnauthenticatedError(absl::StrCat("the controller at ", address_,
                                                     " did not prove it holds this worker's token (--token-file): refusing its commands"));
    }
  }
  // Who this worker is, and the session it resumes, if any.
  v1::WorkerMessage offer;
  v1::HelloRequest own;
  own.set_protocol_version(kProtocolVersion);
  own.set_min_compatible_version(kMinCompatibleProtocolVersion);
  (void)service_->DoHello(own, offer.mutable_hello());
  if (session_ != nullptr) {
    offer.mutable_hello()->set_session_id(session_->id());
    offer.mutable_hello()->set_received_through(session_->received_through());
  }
  if (!security_.token.empty()) {
    offer.mutable_hello()->set_auth_proof(TokenProof(security_.token, "worker", controller_nonce, nonce));
  }
  if (!stream->Write(offer)) return failed(absl::StrCat("the controller at ", address_, " closed the connection"));
  v1::ControllerMessage first;
  if (!stream->Read(&first)) {
    const grpc::Status status = stream->Finish();  // the controller's reason
    if (status.error_code() == grpc::StatusCode::NOT_FOUND && session_ != nullptr) {
      // The controller no longer has our session (another run now, or it gave us up).
      service_->ForgetSession(session_);
      session_.reset();
      return absl::OkStatus();
    }
    return absl::UnavailableError(absl::StrCat("the controller at ", address_, " refused this worker: ", status.error_message()));
  }
  SessionWriter<grpc::ClientReaderWriter<v1::WorkerMessage, v1::ControllerMessage>> writer(stream.get());
  WorkerSession::Send send = [&writer](const v1::WorkerMessage& message) { return writer.Send(message); };
  WorkerSession::Cancel cancel = [&context] { context.TryCancel(); };
  absl::StatusOr<uint64_t> attachment;
  bool ended = false;
  if (first.has_hello() && first.hello().resume() && session_ != nullptr && first.hello().session_id() == session_->id()) {
    attachment = session_->Attach(send, cancel, first.hello().received_through(), nullptr);
    if (attachment.ok()) Log(LogLevel::kInfo, absl::StrCat("session ", session_->id(), " resumed with the controller at ", address_));
  } else {
    if (!first.has_hello() || first.hello().session_id().empty()) {
      return failed(absl::StrCat("the controller at ", address_, " did not open a session (its first message was not a hello)"));
    }
    if (session_ != nullptr) service_->ForgetSession(session_);  // a new session replaces the old
    absl::StatusOr<std::shared_ptr<WorkerSession>> made = service_->NewSession(first.hello().session_id());
    if (!made.ok()) return failed(std::string(made.status().message()));
    session_ = *std::move(made);
    attachment = session_->Attach(send, cancel, 0, nullptr);
    if (attachment.ok()) {
      Log(LogLevel::kInfo, absl::StrCat("session ", session_->id(), " opened by the controller at ", address_));
      ended = !session_->Handle(first);
    }
  }
  if (!attachment.ok()) {
    service_->ForgetSession(session_);
    session_.reset();
    return failed(std::string(attachment.status().message()));
  }
  v1::ControllerMessage message;
  while (!ended && stream->Read(&message)) ended = !session_->Handle(message);
  if (ended) {
    Log(LogLevel::kInfo, absl::StrCat("session ", session_->id(), " ended by the controller"));
    service_->ForgetSession(session_);
    session_.reset();
    stream->WritesDone();
    (void)stream->Finish();
    return absl::OkStatus();
  }
  session_->Detach(*attachment);
  context.TryCancel();
  const grpc::Status status = stream->Finish();
  return absl::UnavailableError(absl::StrCat("the connection to the controller at ", address_, " was cut (", status.error_message(),
                                             "); its session waits for a resume"));
}

}  // namespace iofleet
