// The controller's side of workers that dial in (iofleet-worker --controller HOST:PORT): a gRPC
// server for ControllerService.Session on gRPC's callback API. Each incoming stream proves
// itself first — with a token, by the HMAC handshake of common/session_auth.h (the controller
// proves itself to the worker in its initial metadata, the worker in its first message); with
// mutual TLS, by its certificate — and then offers itself: a new worker, or one resuming the
// session its connection lost. The handler (ClusterSession) takes the offer or refuses it; an
// accepted stream then carries that worker's session exactly as a SessionClient does when the
// controller dials.
#ifndef IOFLEET_CONTROLLER_SESSION_LISTENER_H_
#define IOFLEET_CONTROLLER_SESSION_LISTENER_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/transport_security.h"
#include "controller/session_client.h"
#include "grpcpp/grpcpp.h"
#include "proto/worker_service.grpc.pb.h"

namespace iofleet {

class DialInStream;

// Decides what becomes of a worker that dialled in (on gRPC's threads).
class DialInHandler {
 public:
  virtual ~DialInHandler() = default;
  // `offer` is the worker's first message (a HelloResponse: who it is, and the session it
  // resumes, if any), its token proof already checked. Accept binds the stream to a worker
  // (DialInStream::Bind) and sends what comes first; an error refuses the worker with it.
  virtual absl::Status OnOffer(const std::shared_ptr<DialInStream>& stream, const v1::HelloResponse& offer) = 0;
};

class DialInStream final : public grpc::ServerBidiReactor<v1::WorkerMessage, v1::ControllerMessage>, public SessionStream {
 public:
  // Keeps itself alive until gRPC is done with it.
  static DialInStream* Open(grpc::CallbackServerContext* context, const TransportSecurity& security, DialInHandler* handler);

  // Hands the stream to worker `worker`'s session: what it hears from now on goes to `events`.
  void Bind(size_t worker, uint64_t connection, SessionEvents* events);

  // SessionStream
  bool Send(v1::ControllerMessage message) override;
  void Cancel() override;
  bool WaitClosed(absl::Duration timeout) override;

  // grpc::ServerBidiReactor
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;
  void OnCancel() override {}

  DialInStream(std::string peer, std::string worker_nonce, const TransportSecurity& security, DialInHandler* handler);

 private:
  // Ends the stream with `status` (once).
  void FinishOnce(const grpc::Status& status);
  const v1::ControllerMessage* NextWriteLocked();

  const std::string nonce_;        // ours, for the worker's proof
  const std::string worker_nonce_;
  const std::string token_;
  DialInHandler* const handler_;
  std::shared_ptr<DialInStream> self_;  // until OnDone
  v1::WorkerMessage incoming_;
  std::mutex mu_;
  std::condition_variable closed_cv_;
  SessionEvents* events_ = nullptr;  // set by Bind
  bool offered_ = false;
  WriteQueue outgoing_;
  bool finished_ = false, closed_ = false;
  bool pending_finish_ = false;  // Finish waits for the write in flight
  grpc::Status finish_status_;
  absl::Status end_status_;
  friend class SessionListener;
};

class SessionListener {
 public:
  // Listens on `address` ("0.0.0.0:7400", port 0 for any) with `security` (beyond loopback it
  // must have a token or mutual TLS).
  static absl::StatusOr<std::unique_ptr<SessionListener>> Start(const std::string& address, const TransportSecurity& security,
                                                                DialInHandler* handler);
  ~SessionListener();  // stops listening; streams still open are cancelled
  int port() const { return port_; }

 private:
  class Service;
  SessionListener() = default;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_SESSION_LISTENER_H_
