#include "controller/session_listener.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/log.h"
#include "common/session_auth.h"

namespace iofleet {
namespace {

// "ipv4:10.0.0.5:43210" -> "10.0.0.5:43210".
std::string PeerAddress(const std::string& peer) {
  absl::string_view address = peer;
  if (!absl::ConsumePrefix(&address, "ipv4:")) absl::ConsumePrefix(&address, "ipv6:");
  return std::string(address);
}

}  // namespace

DialInStream::DialInStream(std::string peer, std::string worker_nonce, const TransportSecurity& security, DialInHandler* handler)
    : SessionStream(0, 0, std::move(peer)), nonce_(NewNonce()), worker_nonce_(std::move(worker_nonce)), token_(security.token),
      handler_(handler) {}

DialInStream* DialInStream::Open(grpc::CallbackServerContext* context, const TransportSecurity& security, DialInHandler* handler) {
  auto stream = std::make_shared<DialInStream>(PeerAddress(context->peer()), MetadataValue(context->client_metadata(), kDialNonceKey),
                                               security, handler);
  stream->self_ = stream;
  // The controller proves itself first: the worker obeys nobody who cannot.
  context->AddInitialMetadata(kDialNonceKey, stream->nonce_);
  if (!stream->token_.empty()) {
    context->AddInitialMetadata(kDialProofKey, TokenProof(stream->token_, "controller", stream->worker_nonce_, stream->nonce_));
  }
  stream->StartSendInitialMetadata();
  stream->StartRead(&stream->incoming_);
  return stream.get();
}

void DialInStream::Bind(size_t worker, uint64_t connection, SessionEvents* events) {
  std::lock_guard<std::mutex> lock(mu_);
  worker_ = worker;
  connection_ = connection;
  events_ = events;
}

void DialInStream::OnReadDone(bool ok) {
  if (!ok) {
    // The worker closed its side, or the connection went.
    FinishOnce(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the worker's stream ended"));
    return;
  }
  SessionEvents* events = nullptr;
  bool offer = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events = events_;
    offer = !offered_;
    offered_ = true;
  }
  if (offer) {
    if (!incoming_.has_hello()) {
      FinishOnce(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a worker that dials in first says hello (who it is)"));
      return;
    }
    if (!token_.empty() && !ProofMatches(TokenProof(token_, "worker", nonce_, worker_nonce_), incoming_.hello().auth_proof())) {
      Log(LogLevel::kWarning, absl::StrCat("refused a worker dialling in from ", address(), ": ",
                                           incoming_.hello().auth_proof().empty() ? "no token" : "wrong token"));
      FinishOnce(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "this controller needs the worker's --token-file (missing or wrong token)"));
      return;
    }
    if (absl::Status taken = handler_->OnOffer(self_, incoming_.hello()); !taken.ok()) {
      FinishOnce(grpc::Status(static_cast<grpc::StatusCode>(taken.code()), std::string(taken.message())));
      return;
    }
    StartRead(&incoming_);
    return;
  }
  if (events != nullptr) events->OnMessage(*this, std::move(incoming_));
  StartRead(&incoming_);
}

bool DialInStream::Send(v1::ControllerMessage message) {
  const v1::ControllerMessage* next = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return false;
    outgoing_.Push(std::move(message));
    next = NextWriteLocked();
  }
  if (next != nullptr) StartWrite(next);
  return true;
}

const v1::ControllerMessage* DialInStream::NextWriteLocked() {
  return finished_ ? nullptr : outgoing_.Next();
}

void DialInStream::OnWriteDone(bool ok) {
  const v1::ControllerMessage* next = nullptr;
  bool finish_now = false;
  grpc::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    outgoing_.Done(ok);
    if (ok && !finished_) {
      next = NextWriteLocked();
    } else if (!finished_) {
      finished_ = true;
      end_status_ = absl::UnavailableError(absl::StrCat("worker ", address(), ": session ended: its stream broke"));
      finish_now = true;
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed");
    }
    if (pending_finish_) {  // asked for while this write was in flight
      pending_finish_ = false;
      finish_now = true;
      status = finish_status_;
    }
  }
  if (next != nullptr) StartWrite(next);
  if (finish_now) Finish(status);
}

void DialInStream::FinishOnce(const grpc::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
    end_status_ = status.ok() ? absl::OkStatus()
                              : absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                                             absl::StrCat("worker ", address(), ": session ended: ", status.error_message()));
    if (outgoing_.writing()) {
      pending_finish_ = true;  // after the write in flight
      finish_status_ = status;
      return;
    }
  }
  Finish(status);
}

void DialInStream::Cancel() { FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "the controller ended the session stream")); }

void DialInStream::OnDone() {
  SessionEvents* events = nullptr;
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events = events_;
    status = end_status_;
  }
  if (events != nullptr) events->OnClosed(*this, status);
  std::shared_ptr<DialInStream> keep;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    closed_cv_.notify_all();
    keep = std::move(self_);
  }
  // `keep` may be the last reference: this object goes when it does, after everything above.
}

bool DialInStream::WaitClosed(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return closed_cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [this] { return closed_; });
}

class SessionListener::Service final : public v1::ControllerService::CallbackService {
 public:
  Service(TransportSecurity security, DialInHandler* handler) : security_(std::move(security)), handler_(handler) {}
  grpc::ServerBidiReactor<v1::WorkerMessage, v1::ControllerMessage>* Session(grpc::CallbackServerContext* context) override {
    return DialInStream::Open(context, security_, handler_);
  }

 private:
  const TransportSecurity security_;
  DialInHandler* const handler_;
};

absl::StatusOr<std::unique_ptr<SessionListener>> SessionListener::Start(const std::string& address, const TransportSecurity& security,
                                                                        DialInHandler* handler) {
  if (!IsLoopbackAddress(address) && security.token.empty() && !security.tls()) {
    return absl::InvalidArgumentError(absl::StrCat("--listen ", address,
                                                    " (beyond 127.0.0.1) needs --token-file FILE or --tls-cert/--tls-key/--tls-ca, so that "
                                                    "only your workers can dial in (and they can tell this controller from another)"));
  }
  std::unique_ptr<SessionListener> listener(new SessionListener());
  listener->service_ = std::make_unique<Service>(security, handler);
  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Workers ping their connection; allow it (as a worker allows its controller's pings).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // No bandwidth-probing pings from this side either (see worker/controller_dialer.cc).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddListeningPort(address, ServerCredentialsFor(security), &listener->port_);
  builder.RegisterService(listener->service_.get());
  listener->server_ = builder.BuildAndStart();
  if (!listener->server_ || listener->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address, " (address in use or invalid?)"));
  }
  return listener;
}

SessionListener::~SessionListener() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

}  // namespace iofleet
