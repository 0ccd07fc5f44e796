// A controller's session with its workers, shared by `iofleet run` and `iofleet mdtest`:
// start local workers or reach the given ones, shake hands with all of them, then run phases
// — each prepared on every worker, started on all at one instant, streamed into a
// RunAggregator until every worker has finished it (a cluster-wide barrier), with leases
// kept alive and Ctrl-C turned into a stop that still collects what was measured.
#ifndef IOFLEET_CONTROLLER_CLUSTER_SESSION_H_
#define IOFLEET_CONTROLLER_CLUSTER_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/atomic_file.h"
#include "controller/local_workers.h"
#include "controller/run_aggregator.h"
#include "controller/worker_client.h"
#include "metrics/interval_metrics.h"
#include "proto/report.pb.h"

namespace iofleet {

struct SessionOptions {
  std::vector<std::string> hosts;  // empty: start local workers
  int local_workers = 2;
  std::string worker_binary;
  std::vector<std::string> local_roots;  // what local workers may touch
  absl::Duration interval = absl::Seconds(1);
  absl::Duration lease = absl::Seconds(5);
  absl::Duration connect_timeout = absl::Seconds(3);
  TransportSecurity security;  // token and/or mutual TLS towards the workers
  bool abort_on_worker_loss = false;  // --on-worker-loss=abort (default: continue with the others)
  // Prometheus (--metrics-listen): iofleet_cluster_workers_up, kept by the heartbeats.
  IntervalMetrics* metrics = nullptr;
};

// How a phase went.
struct PhaseOutcome {
  bool prepared = true;     // every worker accepted the phase
  bool interrupted = false; // the user pressed Ctrl-C during it
  bool aborted = false;     // a lost worker stopped the phase (--on-worker-loss=abort)
  int64_t start_unix_ns = 0;
};

class ClusterSession {
 public:
  // Reaches (or starts) the workers and fills report->workers(); errors name the workers.
  static absl::StatusOr<std::unique_ptr<ClusterSession>> Open(const SessionOptions& options, v1::RunReport* report);
  ~ClusterSession();

  size_t size() const { return clients_.size(); }
  const std::vector<std::string>& addresses() const { return addresses_; }
  bool local() const { return local_; }

  // Runs `phase_spec` on every worker. Reports land in `aggregator` with job indices mapped
  // through `global_index`. Problems (start failures) are added to `report`.
  PhaseOutcome RunPhase(const v1::RunSpec& phase_spec, const std::vector<size_t>& global_index, const std::string& run_id,
                        RunAggregator* aggregator, v1::RunReport* report);

  // After an interruption: lets cleanup phases run (a further Ctrl-C still exits at once).
  void ClearInterrupt();

  // Adds "worker X did not deliver all its results" problems for incomplete workers.
  void ReportIncompleteWorkers(const RunAggregator& aggregator, v1::RunReport* report) const;

 private:
  ClusterSession() = default;
  SessionOptions options_;
  bool local_ = false;
  LocalWorkers local_workers_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<WorkerClient>> clients_;
  std::vector<absl::Status> stream_status_;
  std::string last_run_id_;  // the run id of the latest phase (what workers know it by)
};

std::string NewRunId();

// Whether the user pressed Ctrl-C (or sent SIGTERM) during any session of this process: a
// command made of several runs (compare) stops after the interrupted one.
bool UserInterrupted();

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_CLUSTER_SESSION_H_
