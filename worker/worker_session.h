// One session between this worker and a controller, whoever dialled: the controller's
// commands (hello, prepare, start, stop, lease renewals, clock probes) come in one by one, and
// everything the worker has to say goes out through `send` — answers, each run's interval and
// final reports as they are produced, the end of a run's reports, problems. Every command
// renews the leases of the runs this session prepared, so the runs live as long as the
// controller keeps talking; when the session ends they stop at their lease, as before.
// Transport-neutral: the gRPC server stream (WorkerService.Session) and, for a worker that
// dials in, the client stream drive the same class.
#ifndef IOFLEET_WORKER_WORKER_SESSION_H_
#define IOFLEET_WORKER_WORKER_SESSION_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/worker_service.pb.h"
#include "worker/worker_run.h"

namespace iofleet {

// What a session needs from the worker (WorkerServiceImpl provides it).
class SessionBackend {
 public:
  virtual ~SessionBackend() = default;
  virtual absl::Status DoHello(const v1::HelloRequest& request, v1::HelloResponse* response) = 0;
  virtual absl::Status DoPrepare(const v1::PrepareRequest& request, v1::PrepareResponse* response,
                                 const std::function<bool()>& cancelled) = 0;
  virtual absl::StatusOr<int64_t> DoStart(const v1::StartRequest& request) = 0;
  virtual absl::Status DoStop(const v1::StopRequest& request) = 0;
  // The run whose reports this session will read (one reader per run).
  virtual absl::StatusOr<std::shared_ptr<WorkerRun>> TakeReports(const std::string& run_id) = 0;
  // The worker's wall clock, as clock probes are answered with it.
  virtual int64_t NowUnixNs() = 0;
};

class WorkerSession {
 public:
  // `send` delivers one message and says whether the peer is still there; it is called from
  // several threads and must serialize itself. `cancelled` says the peer has gone away (a
  // long layout stops on it).
  using Send = std::function<bool(const v1::WorkerMessage&)>;
  WorkerSession(SessionBackend* backend, Send send, std::function<bool()> cancelled);
  ~WorkerSession();  // Close()

  // Carries out one command. A prepare lays its files out on a thread of its own, so the
  // session keeps answering (probes, renewals) meanwhile, and a stop for that run gives the
  // layout up.
  void Handle(const v1::ControllerMessage& message);
  // The peer is gone: report forwarding stops (the runs stop at their lease).
  void Close();

 private:
  void Problem(const std::string& run_id, const std::string& command, const absl::Status& status);
  // Lays out the run's files, answers, then forwards its reports.
  void PrepareRun(v1::PrepareRequest request, std::shared_ptr<std::atomic<bool>> given_up);
  // Sends the run's reports as they are produced, then RunEnded.
  void ForwardReports(std::shared_ptr<WorkerRun> run);

  SessionBackend* const backend_;
  const Send send_;
  const std::function<bool()> cancelled_;
  std::atomic<bool> closing_{false};
  std::mutex mu_;
  std::vector<std::shared_ptr<WorkerRun>> runs_;  // prepared in this session: their leases held while it is open
  WorkerRun::Clock::time_point last_heard_ = WorkerRun::Clock::now();  // the controller's last message
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> preparing_;  // run id -> given up
  std::vector<std::thread> threads_;      // per run: its layout, then its reports
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WORKER_SESSION_H_
