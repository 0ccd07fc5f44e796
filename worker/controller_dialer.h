// A worker that dials its controller (iofleet-worker --controller HOST:PORT): where a cluster
// scheduler (Slurm, Kubernetes, MPI) starts workers whose addresses are known late, the
// controller's is known early. The dialer connects, makes sure the controller is its own (with a
// token, the controller's HMAC proof in its first reply, common/session_auth.h; with mutual TLS,
// its certificate) before obeying anything, offers itself, and then carries the session the
// controller opens exactly as a session the controller dialled (worker/worker_session.h). A
// connection cut mid-session is dialled again and the session resumed; when the controller
// ends the session the dialer offers itself again for the next run. Retries back off from
// 200 ms to 5 s.
//
// On gRPC's callback API: a dialer holds no thread of its own (one timer thread serves every
// dialer's back-off), so one process can carry thousands of them (the fleet simulator).
#ifndef IOFLEET_WORKER_CONTROLLER_DIALER_H_
#define IOFLEET_WORKER_CONTROLLER_DIALER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "common/transport_security.h"
#include "grpcpp/grpcpp.h"
#include "proto/worker_service.grpc.pb.h"
#include "worker/session_registry.h"

namespace iofleet {

class ControllerDialer {
 public:
  // `sessions`: where the sessions the controller opens are kept (the worker's, or a relay's);
  // their backend says who this is in the offer. `channel`: the connection to dial on (null: one
  // of its own, as a worker process has; the fleet simulator can give several dialers one).
  ControllerDialer(SessionRegistry* sessions, std::string address, TransportSecurity security,
                   std::shared_ptr<grpc::Channel> channel = nullptr);
  // A connection of its own to the controller at `address` (each channel made here is one).
  static std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const TransportSecurity& security);
  ~ControllerDialer();  // Stop()

  // This worker's number among those a launcher started (common/launch_rank.h), sent with
  // each offer; before Start().
  void set_launch_rank(uint32_t rank) { launch_rank_ = rank; }
  // Serve `sessions` sessions (each ended by its controller), then call `done` instead of
  // dialling again: a worker a launcher started for one run; before Start().
  void set_session_limit(uint64_t sessions, std::function<void()> done) {
    session_limit_ = sessions;
    sessions_done_callback_ = std::move(done);
  }
  // Starts dialling and returns: the controller is served, one session after another, until
  // Stop().
  void Start();
  // Start(), then waits until Stop() (from another thread).
  void Run();
  // Ends the dialling: the current stream is cancelled; returns once gRPC is done with it.
  void Stop();

 private:
  class Call;
  // Dials once (the previous call is over).
  void Attempt();
  // A call ended `how` (OK: the session was ended as it should, or the controller no longer had
  // it): dial again at once, or after the back-off.
  void CallDone(const absl::Status& how);

  SessionRegistry* const sessions_;
  const std::string address_;
  const TransportSecurity security_;
  std::optional<uint32_t> launch_rank_;
  uint64_t session_limit_ = 0;  // 0: no limit
  uint64_t sessions_ended_ = 0;
  std::function<void()> sessions_done_callback_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ControllerService::Stub> stub_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, stopping_ = false;
  bool calling_ = false;        // a Call is under way (gRPC owns it until its OnDone)
  Call* call_ = nullptr;
  bool waiting_ = false;        // the back-off timer is set
  uint64_t retry_ = 0;          // its id
  std::chrono::milliseconds backoff_{200};
  std::string last_problem_;
  // The session this worker is in (kept across a cut for the resume), if any.
  std::shared_ptr<WorkerSession> session_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_CONTROLLER_DIALER_H_
