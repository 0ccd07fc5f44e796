// A controller's session with its workers, shared by `iofleet run` and `iofleet mdtest`:
// start local workers or reach the given ones, open one session stream with each
// (controller/session_client.h: gRPC's callback API, no thread per worker), shake hands, then
// run phases — each prepared on every worker, started on all at one instant chosen from the
// measured round trips, streamed into a RunAggregator until every worker has finished it (a
// cluster-wide barrier). One keeper thread probes every session each 2/5 of the lease (which renews
// the worker's leases and acknowledges what it sent; every fifth probe, and any probe to a
// worker that has been silent since the previous, is answered: round trip and clock offset). A session outlives its
// stream: when a connection dies (HTTP/2 keepalive pings unanswered for four leases, or the
// worker's side gave up on it) the keeper reconnects and resumes the session on a new stream,
// and each side sends again what the other missed (common/session_replay.h), so a cut shorter
// than the lease loses nothing. A worker is lost only when it refuses the resume (restarted,
// or its lease ran out) or cannot be reached again within two leases of its last message; a slow,
// busy worker is late, not lost. Ctrl-C becomes a stop that still collects what was measured.
#ifndef IOFLEET_CONTROLLER_CLUSTER_SESSION_H_
#define IOFLEET_CONTROLLER_CLUSTER_SESSION_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/atomic_file.h"
#include "common/clock_filter.h"
#include "common/session_replay.h"
#include "controller/local_workers.h"
#include "controller/slurm_workers.h"
#include "controller/ssh_workers.h"
#include "controller/report_sink.h"
#include "controller/carried_reports.h"
#include "controller/run_aggregator.h"
#include "controller/session_client.h"
#include "controller/session_listener.h"
#include "metrics/interval_metrics.h"
#include "proto/report.pb.h"

namespace iofleet {

struct SessionOptions {
  std::vector<std::string> hosts;  // empty (and no `listen`): start local workers
  // Workers dial in (iofleet-worker --controller): listen here and wait up to `wait` for
  // `expect_workers` of them.
  std::string listen;
  int expect_workers = 0;
  // Start the workers with srun, one per node of the allocation this runs in, and let them dial
  // in (on `listen`, default any address and a free port; `expect_workers` is the node count).
  bool slurm = false;
  // Start a worker on each of these hosts over ssh, dialling in (as with slurm).
  std::vector<std::string> ssh_hosts;
  std::string ssh_command = "ssh";
  bool ssh_copy = false;               // send worker_binary (or the one beside this program)
  std::string ssh_worker = "iofleet-worker";
  // Workers started through srun or ssh, which dial back in.
  bool launches_workers() const { return slurm || !ssh_hosts.empty(); }
  absl::Duration wait = absl::Minutes(10);
  int local_workers = 2;
  std::string worker_binary;
  std::vector<std::string> local_roots;  // what the workers this controller starts (local or --slurm) may touch
  absl::Duration interval = absl::Seconds(1);
  absl::Duration lease = absl::Seconds(5);
  absl::Duration connect_timeout = absl::Seconds(3);
  TransportSecurity security;  // token and/or mutual TLS towards the workers
  bool abort_on_worker_loss = false;  // --on-worker-loss=abort (default: continue with the others)
  // --block-stages: every phase asks its workers to trace the block devices under its targets.
  bool block_stages = false;
  // --profile: every phase asks one worker per host for a CPU profile.
  bool profile = false;
  // Prometheus (--metrics-listen): iofleet_cluster_workers_up, kept by the session keeper.
  IntervalMetrics* metrics = nullptr;
};

// Where a phase's workers sit in the run: a relay's share of a larger run begins at
// `first_index` of `worker_count` (0: the session's own workers are the whole run).
struct PhasePlacement {
  uint32_t first_index = 0;
  uint32_t worker_count = 0;
};

// How a phase went.
struct PhaseOutcome {
  bool prepared = true;     // every worker accepted the phase
  bool interrupted = false; // the user pressed Ctrl-C during it
  bool aborted = false;     // a lost worker stopped the phase (--on-worker-loss=abort)
  int64_t start_unix_ns = 0;
};

class ClusterSession : private SessionEvents, private DialInHandler {
 public:
  // Reaches (or starts) the workers and fills report->workers(); errors name the workers.
  static absl::StatusOr<std::unique_ptr<ClusterSession>> Open(const SessionOptions& options, v1::RunReport* report);
  ~ClusterSession() override;

  size_t size() const { return links_.size(); }
  // The workers this session stands for: its sessions, a relay's counting as its workers.
  uint32_t relayed_workers() const;
  // Per session, in address order: the workers a relay stands for, 0 for a worker itself.
  std::vector<uint32_t> RelayedBySession() const;
  const std::vector<std::string>& addresses() const { return addresses_; }
  bool local() const { return local_; }

  // Runs `phase_spec` on every worker. Reports land in `aggregator` with job indices mapped
  // through `global_index`. Problems (start failures) are added to `report`.
  PhaseOutcome RunPhase(const v1::RunSpec& phase_spec, const std::vector<size_t>& global_index, const std::string& run_id,
                        RunAggregator* aggregator, v1::RunReport* report);

  // RunPhase's steps, for a relay that carries out a controller's phase on the workers behind
  // it: prepare everywhere (the first failure, Ctrl-C or `given_up` stops the rest), start at
  // an instant, wait until every worker delivered or was lost, and detach the sink. Reports go
  // to `sink` with job indices mapped through `global_index` (an index beyond it stays as it is).
  struct PhasePreparation {
    std::vector<std::string> failures;
    bool interrupted = false;
    bool ok() const { return failures.empty() && !interrupted; }
  };
  PhasePreparation PreparePhase(const v1::RunSpec& phase_spec, const std::vector<size_t>& global_index, const std::string& run_id,
                                ReportSink* sink, const PhasePlacement& placement, uint64_t interval_ns,
                                const std::function<bool()>& given_up);
  // Each worker's answer to the phase's prepare (empty for one that gave none).
  std::vector<v1::PrepareResponse> PrepareResponses() const;
  // How far ahead a start instant must be for every worker to hear of it in time: from the
  // measured round trips and the number of workers, plus what the relays among them need to
  // pass it on (their prepare answers say).
  absl::Duration StartLead() const;
  // Now + StartLead().
  int64_t StartInstant() const;
  // Whether every worker can run a sequence of phases released by this controller
  // (RunSpec.jobs_released: each says "job-release" in its hello, and none is a relay).
  bool ReleasesJobs() const;
  void StartPhase(const std::string& run_id, int64_t start_unix_ns);
  struct PhaseEnd {
    std::vector<std::string> problems;
    bool interrupted = false, aborted = false;
  };
  PhaseEnd AwaitPhase(const std::string& run_id);
  void EndPhase();
  // Stops the phase's IO everywhere (idempotent).
  void StopAll(const std::string& run_id, const std::string& reason, v1::StopCause cause = v1::STOP_CAUSE_REQUESTED);
  // Returns once the user pressed Ctrl-C (or sent SIGTERM): a relay runs until then.
  void WaitForInterrupt();
  // Wakes the waits (a relay's preparation given up).
  void Wake() { cv_.notify_all(); }
  // What the session knows of each worker after a phase.
  struct PeerState {
    std::string address;
    v1::HelloResponse hello;
    absl::Status lost;  // OK unless the worker was lost
    bool ended = false, started = false;
    int64_t clock_offset_ns = 0, round_trip_ns = -1, start_lead_ns = 0;
    std::optional<v1::RelaySummary> summary;  // a relay's, for the phase
  };
  std::vector<PeerState> PeerStates() const;

  // After an interruption: lets cleanup phases run (a further Ctrl-C still exits at once).
  void ClearInterrupt();

  // Adds "worker X did not deliver all its results" problems for incomplete workers.
  void ReportIncompleteWorkers(const RunAggregator& aggregator, v1::RunReport* report) const;

 private:
  ClusterSession() = default;
  // What the controller knows of one worker's session.
  struct Peer {
    std::optional<v1::HelloResponse> hello;
    std::optional<uint32_t> launch_rank;  // from its offer, when it dialled in with one
    bool closed = false;
    absl::Status lost;            // why the worker is lost (its session ended)
    int64_t last_heard_unix_ns = 0;
    int64_t round_trip_ns = -1;   // the latest probe's
    ClockFilter clock;  // the worker's clock minus ours, from the recent probes
    // Its stream is gone and the keeper is resuming the session on a new one.
    bool reconnecting = false, attempt_pending = false;
    int64_t next_attempt_unix_ns = 0;
    absl::Status cut_by;          // how the stream ended
    uint32_t resumes = 0;
    int64_t longest_silence_ns = 0;
    // The current phase.
    bool prepared = false, started = false, ended = false;
    std::optional<v1::PrepareResponse> prepare_response;
    std::optional<v1::RelaySummary> summary;  // a relay's account of its workers
    absl::Status prepare_status, start_status;
    int64_t start_lead_ns = 0;
    // RunSpec.jobs_released: the latest job of the phase's sequence its tasks all arrived at,
    // and the first that will not run there (a job before it failed; UINT32_MAX: none).
    uint32_t arrived_at = 0, not_run_from = UINT32_MAX;
  };
  // The sending side of one worker's session: its commands, numbered and kept until the worker
  // acknowledges them, and the stream they go out on. Locked on its own (never with mu_
  // held), so gRPC's threads delivering one worker's messages never wait for another's.
  struct Link {
    std::mutex mu;
    SessionReplay<v1::ControllerMessage> replay{4096};
    std::shared_ptr<SessionStream> client;   // the stream commands go out on; null while cut
    std::shared_ptr<SessionStream> pending;  // a stream resuming the session, until the worker agrees
    uint64_t connection = 0;                 // the current stream's number: earlier ones are not heard
  };
  // DialInHandler, on gRPC's threads: a worker that dialled in, new or resuming its session.
  absl::Status OnOffer(const std::shared_ptr<DialInStream>& stream, const v1::HelloResponse& offer) override;
  // Waits for `expect_workers` workers to dial in and say hello.
  absl::Status AwaitDialIns();
  // --slurm, --ssh: starts the workers, which dial the listener.
  absl::Status LaunchWorkers(const std::optional<SlurmAllocation>& allocation);
  // Opens a session with each of addresses_ and waits (connect_timeout) for their hellos.
  void DialWorkers();
  // Worker `worker`'s session id: this session's name and the worker's index.
  std::string SessionId(size_t worker) const { return absl::StrCat(session_name_, "-", worker); }
  // The hello that opens worker `worker`'s session, and the one that resumes it on a new
  // stream (unnumbered; saying what of the worker's messages arrived).
  v1::ControllerMessage Hello(size_t worker) const;
  v1::ControllerMessage ResumeHello(size_t worker, uint64_t received_through) const;
  // Keeps `stream` until it has ended, letting go of those that have (never on their own gRPC
  // thread, which still runs them).
  void KeepStream(std::shared_ptr<SessionStream> stream);
  // SessionEvents, on gRPC's threads.
  void OnMessage(const SessionStream& from, v1::WorkerMessage message) override;
  void OnClosed(const SessionStream& from, const absl::Status& status) override;
  // Numbers `message` into worker `worker`'s session and sends it (or keeps it until the
  // session is resumed).
  void Send(size_t worker, v1::ControllerMessage message);
  // Sends `message` to every worker.
  void Broadcast(const v1::ControllerMessage& message);
  // RunSpec.jobs_released: what the arrivals (and losses) heard so far call for — the next job
  // released (every worker's tasks arrived at it), the run stopped everywhere (a worker will not
  // run it, or was lost), or nothing yet. mu_ held; `Act` carries it out, without mu_.
  struct ReleaseStep {
    enum { kNothing, kRelease, kStop } what = kNothing;
    uint32_t job = 0;
    int64_t start_unix_ns = 0;
    std::string run_id, reason;
  };
  ReleaseStep NextReleaseLocked();
  void Act(const ReleaseStep& step);
  // How far ahead of now a release names its instant: the slowest round trip twice, and the
  // time to send it to every worker (mu_ held).
  absl::Duration ReleaseLeadLocked() const;
  // Opens a new stream to worker `worker` that resumes its session.
  void Reconnect(size_t worker);
  // A relay (its hello says how many workers it stands for) and how many indices it takes.
  static bool IsRelay(const Peer& p) { return p.hello.has_value() && p.hello->relayed_workers() > 0; }
  static uint32_t Relayed(const Peer& p) { return IsRelay(p) ? p.hello->relayed_workers() : 0; }
  static uint32_t Weight(const Peer& p) { return SessionWorkers(Relayed(p)); }
  // The workers all sessions stand for (mu_ held).
  uint64_t TotalWeightLocked() const;
  // A relay's account of its workers into the report (added up over the run's phases).
  // Where each relayed worker (worker index, address) is in a report's relayed_workers.
  using RelayedIndex = absl::flat_hash_map<std::pair<uint32_t, std::string>, int>;
  static void NoteRelayed(const v1::RelaySummary& summary, const std::string& relay, const Peer& p, RelayedIndex* known, v1::RunReport* report);
  // Host facts from the phase's prepare answers into the report.
  void NoteFacts(v1::RunReport* report);
  // The workers' clock offsets, round trips and start leads into the report; a clock off by
  // more than 1% of the interval is a problem (named once per session).
  // Also each worker's real start (from the phase's final reports) and the cluster's start skew.
  void NoteClocks(v1::RunReport* report, const RunAggregator& aggregator, const std::vector<size_t>& jobs);
  // The keeper: probes every 2/5 of the lease, at most 2 s (every kProbesPerFullRound-th
  // answered by all), and keeps workers_up.
  void Keep();
  static constexpr uint64_t kProbesPerFullRound = 5;
  // Waits until `done` holds (mu_ held while it is evaluated) or `timeout` passes, or (with
  // `notice_interrupt`) Ctrl-C was pressed: WatchInterrupts wakes it. True if `done` held.
  template <typename Done>
  bool WaitUntil(Done done, absl::Duration timeout, bool notice_interrupt);

  SessionOptions options_;
  bool local_ = false;
  LocalWorkers local_workers_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs_;
  std::vector<std::unique_ptr<Link>> links_;
  TransportSecurity security_;  // towards the workers (local ones need none)
  std::mutex streams_mu_;
  std::vector<std::shared_ptr<SessionStream>> streams_;  // every stream opened, until it ends
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable keeper_cv_;  // a stream ended: the keeper has a session to resume
  std::string session_name_;           // what each worker's session id starts with
  std::unique_ptr<SessionListener> listener_;  // workers dial in (then the keeper never dials)
  size_t dialled_in_ = 0;              // workers taken so far
  std::vector<bool> taken_;            // [worker]: one dialled in as it (by launch rank, or the first free)
  std::vector<Peer> peers_;
  std::string run_id_;  // the current (or latest) phase's run id, what workers know it by
  // The current phase's sequence is released by this controller (RunSpec.jobs_released): its
  // jobs, the latest released (0: none yet), and whether the sequence was stopped instead.
  bool releasing_ = false, release_stopped_ = false;
  uint32_t phase_jobs_ = 0, released_ = 0;
  const std::vector<size_t>* global_index_ = nullptr;
  ReportSink* sink_ = nullptr;
  std::set<size_t> clock_warned_;  // keys: worker << 32, plus 1 + a relayed worker's index
  bool closing_ = false;
  std::thread keeper_;
  // Ctrl-C's wakeups: the signal handler writes to the pipe, WatchInterrupts notifies cv_.
  void WatchInterrupts();
  int interrupt_pipe_[2] = {-1, -1};
  std::thread interrupt_watcher_;
  // --slurm, --ssh: the workers' launcher, and whether one of its processes has ended (mu_).
  // Last: it is stopped (its processes reaped) while the rest of the session still stands.
  bool launcher_exited_ = false;
  std::unique_ptr<WorkerLauncher> launcher_;
};

std::string NewRunId();

// Whether the user pressed Ctrl-C (or sent SIGTERM) during any session of this process: a
// command made of several runs (compare) stops after the interrupted one.
bool UserInterrupted();

// Adds to `report`'s problems the workers of `figures` (direct, and behind relays) that stopped
// on their lease before their jobs' end, named (the first few) and counted: what they measured
// is in the totals, the rest of the run is not.
void ReportLeaseStops(const v1::RunReport& figures, v1::RunReport* report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_CLUSTER_SESSION_H_
