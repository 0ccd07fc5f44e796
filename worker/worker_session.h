// One session between this worker and a controller, whoever dialled: the controller's
// commands (hello, prepare, start, stop, lease renewals, clock probes) come in one by one, and
// everything the worker has to say goes out — answers, each run's interval and final reports
// as they are produced, the end of a run's reports, problems.
//
// A session outlives the stream it started on. Every message is numbered (common/
// session_replay.h) and kept until the controller acknowledges it, so when the connection is
// cut the session waits, detached, for the controller to resume it on a new stream; it then
// sends again exactly what the controller missed. The session's runs live as long as the
// controller keeps talking (each of its messages renews their leases; it probes every 2/5 lease),
// attached or not; a session detached for longer than its runs' leases is over (the worker's
// service forgets it).
//
// Transport-neutral: the gRPC server stream (WorkerService.Session) and, for a worker that
// dials in, the client stream drive the same class.
#ifndef IOFLEET_WORKER_WORKER_SESSION_H_
#define IOFLEET_WORKER_WORKER_SESSION_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/session_replay.h"
#include "proto/worker_service.pb.h"
#include "worker/awake_clock.h"
#include "worker/session_run.h"

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
  virtual absl::StatusOr<std::shared_ptr<SessionRun>> TakeReports(const std::string& run_id) = 0;
  // The worker's wall clock, as clock probes are answered with it.
  virtual int64_t NowUnixNs() = 0;
  // A DoPrepare in progress was given up (its `cancelled` holds from now): a backend that
  // waits for something else than its own work wakes.
  virtual void PreparationGivenUp(const std::string& run_id) { (void)run_id; }
};

class WorkerSession {
 public:
  // A stream's way out: `send` queues one message (false: the stream is broken; the message
  // stays kept for a resume), `cancel` ends the stream (when a newer one takes its place).
  // Messages are shared with the replay buffer that keeps them until acknowledged, not copied.
  using Message = std::shared_ptr<const v1::WorkerMessage>;
  using Send = std::function<bool(Message)>;
  using Cancel = std::function<void()>;
  // Reports the controller has not acknowledged, at most (the forwarders wait beyond it).
  static constexpr size_t kReportWindow = 1024;

  // `id`: the controller's name for the session (empty: it cannot be resumed).
  WorkerSession(SessionBackend* backend, std::string id);
  ~WorkerSession();  // Close()

  const std::string& id() const { return id_; }

  // Puts a stream under the session: `greeting` (unnumbered; may be null) goes first, then
  // every kept message after `controller_received`, then what comes next. A stream still
  // attached is cancelled (a half-open connection the controller has given up). Returns the
  // attachment (for Detach), or DATA_LOSS when messages the controller missed were dropped
  // (it acknowledged nothing for too long): the session cannot be resumed.
  absl::StatusOr<uint64_t> Attach(Send send, Cancel cancel, uint64_t controller_received, const v1::WorkerMessage* greeting);
  // Attachment `attachment`'s stream ended; nothing if another has taken its place.
  void Detach(uint64_t attachment);

  // Carries out one command (a message already received is dropped). A prepare lays its files
  // out on a thread of its own, so the session keeps answering (probes, renewals) meanwhile,
  // and a stop for that run gives the layout up. False once the controller ended the session.
  bool Handle(const v1::ControllerMessage& message);
  // Ends the session: layouts are given up, report forwarding stops (the runs stop at their
  // lease, counted from the controller's last message).
  void Close();

  // What the controller sent that has arrived (a resuming stream's greeting says it).
  uint64_t received_through();
  // Detached for longer than its runs' leases (or 10 s without runs): nothing to resume.
  bool Expired(AwakeClock::time_point now);

 private:
  // Numbers and sends (or keeps, when detached) one message; a report waits while the window
  // is full. False once the session is closed.
  bool Emit(v1::WorkerMessage message);
  void Problem(const std::string& run_id, const std::string& command, const absl::Status& status);
  // Lays out the run's files, answers, then forwards its reports.
  void PrepareRun(v1::PrepareRequest request, std::shared_ptr<std::atomic<bool>> given_up);
  // Sends the run's reports as they are produced, then RunEnded.
  void ForwardReports(std::shared_ptr<SessionRun> run);

  SessionBackend* const backend_;
  const std::string id_;
  std::atomic<bool> closing_{false};

  // The stream and what goes out on it.
  std::mutex out_mu_;
  std::condition_variable window_cv_;
  SessionReplay<v1::WorkerMessage> replay_;
  Send send_;  // null while detached
  Cancel cancel_;
  uint64_t attachment_ = 0;
  bool sent_since_probe_ = false;  // anything sent since the controller's previous probe arrived
  AwakeClock::time_point detached_at_ = AwakeClock::Now();  // when the last stream went

  // The runs and the commands' state.
  std::mutex mu_;
  std::vector<std::shared_ptr<SessionRun>> runs_;  // prepared in this session: renewed by its messages
  AwakeClock::time_point last_heard_ = AwakeClock::Now();  // the controller's last message
  std::map<std::string, std::shared_ptr<std::atomic<bool>>> preparing_;  // run id -> given up
  std::vector<std::thread> threads_;      // per run: its layout, then its reports
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WORKER_SESSION_H_
