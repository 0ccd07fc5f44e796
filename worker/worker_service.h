// The gRPC face of a worker: turns WorkerService calls into WorkerRuns and back, and runs the
// lease watchdog that stops a run whose controller went quiet. Converts absl::Status to
// grpc::Status here and nowhere else.
#ifndef IOFLEET_WORKER_WORKER_SERVICE_H_
#define IOFLEET_WORKER_WORKER_SERVICE_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/protocol_version.h"
#include "job/run_limits.h"
#include "proto/worker_service.grpc.pb.h"
#include "metrics/interval_metrics.h"
#include "worker/path_policy.h"
#include "worker/worker_run.h"
#include "worker/session_registry.h"
#include "worker/worker_session.h"

namespace iofleet {

class WorkerServiceImpl final : public v1::WorkerService::Service, private SessionBackend {
 public:
  // `versions` is what Hello announces (overridable only to test version skew).
  // `token`: when set, every call must carry it (x-iofleet-token metadata).
  // `metrics`: when set, every interval report is also counted there (--metrics-listen).
  // `max_run_memory`: what the runs this worker holds may make it allocate, together
  // (--max-run-memory); a Prepare that would go past it is refused.
  WorkerServiceImpl(PathPolicy policy, ProtocolVersions versions, std::string token = "", IntervalMetrics* metrics = nullptr,
                    uint64_t max_run_memory = kDefaultMaxRunMemory);
  ~WorkerServiceImpl() override;

  grpc::Status Hello(grpc::ServerContext*, const v1::HelloRequest*, v1::HelloResponse*) override;
  grpc::Status Prepare(grpc::ServerContext*, const v1::PrepareRequest*, v1::PrepareResponse*) override;
  grpc::Status Start(grpc::ServerContext*, const v1::StartRequest*, v1::StartResponse*) override;
  grpc::Status Stop(grpc::ServerContext*, const v1::StopRequest*, v1::StopResponse*) override;
  grpc::Status StreamIntervals(grpc::ServerContext*, const v1::StreamIntervalsRequest*,
                               grpc::ServerWriter<v1::IntervalReport>*) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) override;
  grpc::Status Session(grpc::ServerContext*, grpc::ServerReaderWriter<v1::WorkerMessage, v1::ControllerMessage>*) override;

  // The sessions this worker holds (ControllerDialer's too).
  SessionRegistry* sessions() { return &sessions_; }

  // Stops every run (used on SIGTERM before the server shuts down; their cause: SHUTDOWN).
  void StopAll(const std::string& reason);
  // Testing only (--clock-skew): the worker's clock as clock probes see it is off by `skew`.
  void set_clock_skew_for_testing(absl::Duration skew) { clock_skew_ = skew; }

 private:
  // The commands, whichever way they arrive (unary RPCs or a session); the callers authorize.
  absl::Status DoHello(const v1::HelloRequest& request, v1::HelloResponse* response) override;
  absl::Status DoPrepare(const v1::PrepareRequest& request, v1::PrepareResponse* response, const std::function<bool()>& cancelled) override;
  absl::StatusOr<int64_t> DoStart(const v1::StartRequest& request) override;
  absl::Status DoStop(const v1::StopRequest& request) override;
  absl::StatusOr<std::shared_ptr<SessionRun>> TakeReports(const std::string& run_id) override;
  int64_t NowUnixNs() override { return absl::ToUnixNanos(absl::Now() + clock_skew_); }

  // The run whose reports one reader (a session, or StreamIntervals) takes.
  absl::StatusOr<std::shared_ptr<WorkerRun>> TakeRun(const std::string& run_id);
  std::shared_ptr<WorkerRun> FindRun(const std::string& run_id);
  // NOT_FOUND for a run this worker never had (or forgot: it was restarted), FAILED_PRECONDITION
  // saying why for one it dropped (its lease expired, say).
  absl::Status NoRun(const std::string& run_id);
  // Whether a run ended here for a reason NoRun tells (its lease expired).
  bool Ended(const std::string& run_id);
  // Stops a run whose lease has expired and remembers why (without mu_ held).
  void ExpireLease(const std::string& run_id, WorkerRun& run);
  // Remembers why a run went away (called with mu_ held).
  void RememberEnded(const std::string& run_id, const std::string& why);
  // OK, or UNAUTHENTICATED (and a log line naming the caller) without the right token.
  grpc::Status Authorize(const grpc::ServerContext* context) const;
  void WatchLeases();

  const PathPolicy policy_;
  const ProtocolVersions versions_;
  const std::string token_;
  IntervalMetrics* const metrics_;
  std::mutex mu_;
  // The lease watchdog's wakeups: shutdown, and a new run (its tick shortens at once: a pause
  // is counted against a lease only up to one tick, worker/awake_clock.h).
  std::condition_variable watchdog_cv_;
  bool shutting_down_ = false;
  bool runs_added_ = false;
  const uint64_t max_run_memory_;
  std::map<std::string, std::shared_ptr<WorkerRun>> runs_;
  // zonemode=zbd zone state per run group (the phases of one controller run), the most recent
  // kZoneGroupsKept groups only: a request cannot make the worker keep state without bound.
  std::shared_ptr<ZoneRegistry> ZonesOf(const std::string& run_group);
  static constexpr size_t kZoneGroupsKept = 4;
  std::mutex zone_groups_mu_;
  std::deque<std::pair<std::string, std::shared_ptr<ZoneRegistry>>> zone_groups_;
  // Runs whose interval stream is taken (one reader per run: a second would steal reports).
  std::set<std::string> streamed_;
  // Why runs this worker no longer has went away (lease expired at T, stopped), so a late
  // Heartbeat or StreamIntervals learns what happened rather than "no such run". Bounded: the
  // oldest entries go first.
  std::map<std::string, std::string> ended_;
  std::deque<std::string> ended_order_;
  // Sessions (attached, or detached and waiting for a resume), bounded; a worker that dials
  // its controller keeps them here too.
  SessionRegistry sessions_{static_cast<SessionBackend*>(this), 4096};
  std::thread lease_watchdog_;
  absl::Duration clock_skew_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WORKER_SERVICE_H_
