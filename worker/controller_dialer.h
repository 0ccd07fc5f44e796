// A worker that dials its controller (iofleet-worker --controller HOST:PORT): where a cluster
// scheduler (Slurm, Kubernetes, MPI) starts workers whose addresses are known late, the
// controller's is known early. The dialer connects, makes sure the controller is its own (with a
// token, the controller's HMAC proof in its first reply, common/session_auth.h; with mutual TLS,
// its certificate) before obeying anything, offers itself, and then carries the session the
// controller opens exactly as a session the controller dialled (worker/worker_session.h). A
// connection cut mid-session is dialled again and the session resumed; when the controller
// ends the session the dialer offers itself again for the next run. Retries back off from
// 200 ms to 5 s.
#ifndef IOFLEET_WORKER_CONTROLLER_DIALER_H_
#define IOFLEET_WORKER_CONTROLLER_DIALER_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "common/transport_security.h"
#include "grpcpp/grpcpp.h"
#include "proto/worker_service.grpc.pb.h"
#include "worker/worker_service.h"

namespace iofleet {

class ControllerDialer {
 public:
  ControllerDialer(WorkerServiceImpl* service, std::string address, TransportSecurity security);

  // Serves the controller, one session after another, until Stop().
  void Run();
  // Ends Run() (from another thread): the current stream is cancelled.
  void Stop();

 private:
  // One connection: offers the worker, then carries a session until the stream ends. Returns
  // how it ended, for the log and the back-off.
  absl::Status ServeOnce();
  // The session this worker is in (kept across a cut for the resume), if any.
  std::shared_ptr<WorkerSession> session_;

  WorkerServiceImpl* const service_;
  const std::string address_;
  const TransportSecurity security_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControllerService::Stub> stub_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  grpc::ClientContext* current_ = nullptr;  // the stream to cancel on Stop
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_CONTROLLER_DIALER_H_
