// One run on a worker: its prepared files, its IO threads, the collector that cuts their
// counters into IntervalReports at the run's common interval boundaries, and its lease.
// Thread-safe; the gRPC service holds runs by id.
#ifndef IOFLEET_WORKER_WORKER_RUN_H_
#define IOFLEET_WORKER_WORKER_RUN_H_

#include <atomic>
#include <functional>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/worker_service.pb.h"
#include "worker/awake_clock.h"
#include "worker/block_stage_tracer.h"
#include "worker/control_threads.h"
#include "worker/cpu_profile.h"
#include "worker/file_layout.h"
#include "worker/interval_cut.h"
#include "worker/job_thread.h"
#include "worker/steady_state.h"
#include "worker/session_run.h"
#include "worker/thread_stats.h"

namespace iofleet {

class WorkerRun final : public SessionRun {
 public:
  using Clock = std::chrono::steady_clock;

  // Sees every report as it is produced (the worker's Prometheus metrics); may be empty.
  using ReportObserver = std::function<void(const v1::PrepareRequest&, const v1::IntervalReport&)>;

  // `zones`: the emulated zones of the run group this phase belongs to (zonemode=zbd state that
  // outlives a phase, as in one fio run); null: the phase's own.
  WorkerRun(v1::PrepareRequest request, RunLayout layout, ReportObserver observer = nullptr, std::shared_ptr<ZoneRegistry> zones = nullptr);
  ~WorkerRun();  // stops IO and joins every thread

  const v1::PrepareRequest& request() const { return request_; }
  const std::string& run_id() const override { return request_.run_id(); }
  const v1::PrepareResponse& prepared() const { return layout_.response; }

  // Starts the IO threads, which begin at `start_unix_ns` (wall clock). Idempotent for the
  // same instant; kFailedPrecondition for a different one. Returns how far ahead it arrived.
  absl::StatusOr<int64_t> Start(int64_t start_unix_ns);
  // Waits until every thread of the run is armed (set up and waiting for the instant, or ended
  // on a setup error) or `given_up` holds (checked every 100 ms); true if armed.
  bool WaitArmed(const std::function<bool()>& given_up);
  // Stops IO now; the stream then ends with final reports carrying `reason` and `cause`.
  // Idempotent (the first stop's reason and cause stay).
  void Stop(const std::string& reason, v1::StopCause cause = v1::STOP_CAUSE_REQUESTED);
  // The lease: the run stops when the controller has not been heard for lease(), counted on
  // the worker's awake clock (worker/awake_clock.h), so time the worker could not run is not
  // taken for the controller's silence.
  void RenewLease() override { last_heartbeat_ = AwakeClock::Now(); }
  std::chrono::nanoseconds lease() const override { return lease_; }
  // `now` on the awake clock.
  bool LeaseExpired(AwakeClock::time_point now) const;
  bool started() const { return started_; }
  // All reports are produced (they may not all be delivered yet).
  bool finished() const;

  // Waits up to `timeout` for the next report. Returns true with a report, false on timeout
  // (with *ended false) or once every report has been taken (*ended true).
  bool NextReport(std::chrono::milliseconds timeout, v1::IntervalReport* report, bool* ended);

  // SessionRun: one cut's reports of every job go together. The one loop behind
  // StreamIntervals and a session's report forwarding; it sleeps between cuts (a worker host
  // may carry a thousand of these loops).
  Delivered DeliverReports(const std::function<bool(std::vector<v1::IntervalReport>)>& deliver,
                           const std::function<bool()>& stop) override;
  void StopDelivering() override;
  // SessionRun, RunSpec.jobs_released: the arrivals at jobs 1.. of the sequence, and their
  // releases (refused for a job whose tasks have not all arrived, or released for another
  // instant, or in a run that is not released by its controller).
  void WatchArrivals(ArrivalWatcher arrived) override;
  absl::Status Release(uint32_t job, int64_t start_unix_ns) override;

 private:
  struct JobState {
    std::vector<std::unique_ptr<ThreadStats>> threads;
    // Every thread's counters, thread-major and direction-minor, as the collector cuts them.
    std::vector<DirectionCounters*> counters;
    std::vector<uint32_t> priorities;  // cmdprio: the ioprio of each kept-apart latency
    size_t threads_finished = 0;
    Clock::time_point last_end;
    absl::Status first_error;
    std::vector<std::string> notes;
    uint64_t cpu_user_ns = 0, cpu_system_ns = 0, context_switches = 0;
    uint64_t zone_resets = 0;  // zonemode=zbd
    std::vector<uint64_t> task_items;
    // Metadata phases (warn_failed_items): failed operations gone past, and each task's named ones.
    uint64_t item_failures = 0;
    std::vector<std::vector<std::string>> task_warnings;
    std::set<std::string> iteration_directories_gone, iteration_directories_left;  // tree removal
    std::vector<uint64_t> task_elapsed_ns;  // each task's own start to end
    bool stonewalled = false;
    int64_t start_late_ns = 0;  // the latest thread's
    int64_t earliest_start_late_ns = INT64_MAX;  // the first thread's
    bool final_sent = false;
    StartGate* gate = nullptr;  // where its threads wait to start (a sequence's later jobs: their own)
    bool iteration_directories_after_gate = false;  // JobThreadPlan's (a sequence's: RemakesIterationDirectories)
    // Every thread of the job has ended.
    bool ended() const { return threads_finished == threads.size(); }
  };

  // Starts the threads, which set themselves up and wait at start_gate_ (from the constructor).
  void Arm();
  // Thread `t` of job `j`: runs it and records how it went.
  void RunThread(size_t j, uint32_t t);
  // Job `j` of a sequence is a tree creation after a tree removal of the same iteration
  // directories (JobThreadPlan::iteration_directories_after_gate). From Arm.
  bool RemakesIterationDirectories(size_t j) const;
  // Thread `t` of job `j`'s number among the job's threads on every worker (mdtest's rank; the
  // CPU a task of a sequence is held on follows it).
  uint32_t TaskRank(size_t j, uint32_t t) const;
  // When job `j` started: the run's start instant, or (a later job of a sequence) when its gate
  // opened. mu_ held.
  Clock::time_point JobStart(size_t j);
  // fio's exitall: a thread of job `j` ended; stops the jobs its exit_what names. mu_ held.
  void ExitAll(size_t j);
  // What one collector pass reports: per job its span and whether the report closes the job.
  struct DueReport {
    size_t job;
    bool final;
    Clock::time_point from, to;
  };
  // fio steadystate: feeds a pass's reports (`reports[i]` is `due[i]`'s) of jobs still running;
  // stops the jobs whose steady state is attained. mu_ held.
  void JudgeSteadyState(const std::vector<DueReport>& due, const std::vector<v1::IntervalReport>& reports);
  size_t SteadyStateKey(size_t job) const;
  void CollectorLoop();
  // Whether the collector has a job to close: one whose threads have all ended and whose final
  // report has not gone; in a sequence, only once every job has ended (a sequence's jobs close
  // together at its end). What the collector waits for besides its interval boundaries. mu_ held.
  bool JobsToClose() const;
  // The report of `job` over [from, to) from what its counters recorded (`cuts`: the job's
  // share of CutIntervals, thread-major, direction-minor).
  v1::IntervalReport ReportInterval(size_t job_index, uint32_t interval_index, Clock::time_point from, Clock::time_point to,
                                    absl::Span<const DirectionCut> cuts);
  int64_t ToUnixNs(Clock::time_point t) const;
  // --block-stages: finds the devices under the jobs' targets and attaches the tracer to them;
  // what cannot be traced becomes a note of the jobs concerned. From Arm, mu_ held.
  void SetUpBlockStages();
  // Queues `report` for delivery (the caller wakes the deliverer); mu_ held.
  void Publish(v1::IntervalReport report);

  const v1::PrepareRequest request_;
  const ReportObserver observer_;
  const RunLayout layout_;
  const std::chrono::nanoseconds interval_;
  const std::chrono::nanoseconds lease_;

  StopSignal stop_;
  // One per job, adopted by stop_: fio's exitall stops some jobs of the run and not others.
  std::vector<std::unique_ptr<StopSignal>> job_stops_;
  std::vector<uint32_t> group_of_;  // each job's reporting group (new_group) in this run
  // fio steadystate, per job or (group_reporting) per group: key is the job, or jobs + group.
  std::map<size_t, SteadyState> steady_states_;
  std::atomic<AwakeClock::time_point> last_heartbeat_;  // on the awake clock

  mutable std::mutex mu_;
  std::condition_variable changed_;  // threads finishing, stop, new reports
  bool started_ = false;
  int64_t start_unix_ns_ = 0;
  Clock::time_point start_;
  std::string stop_reason_;
  v1::StopCause stop_cause_ = v1::STOP_CAUSE_UNSPECIFIED;
  std::vector<JobState> jobs_;
  std::deque<v1::IntervalReport> reports_;
  bool stop_delivering_ = false;
  uint64_t dropped_reports_ = 0;  // past kMaxQueuedReports (nobody reads them)
  std::atomic<bool> all_reports_produced_{false};  // read without the lock (Heartbeat, lease watch)
  StartGate start_gate_;
  std::vector<std::unique_ptr<StartGate>> sequence_gates_;  // jobs_in_sequence: jobs 1.. each open their own
  // jobs_released: the arrivals at those gates not passed on yet, who hears of them, and the
  // thread that tells it (arrivals_mu_: never taken with mu_ held).
  std::mutex arrivals_mu_;
  std::condition_variable arrivals_cv_;
  std::vector<std::pair<uint32_t, bool>> arrivals_;
  ArrivalWatcher arrival_watcher_;
  bool arrivals_done_ = false;
  std::thread arrivals_thread_;
  // The task that arrived last at job `j` (>= 1) of a released sequence: queues the arrival.
  void Arrived(uint32_t j);
  // arrivals_thread_: passes the arrivals on to the watcher, once there is one.
  void PassArrivalsOn();
  FlowRegistry flows_;  // fio flow=: shared by the run's job threads
  std::shared_ptr<ZoneRegistry> zones_;  // zonemode=zbd: each file's zones, shared by the job threads
  std::vector<std::thread> io_threads_;
  std::thread collector_;
  CpuHandOff collector_cpu_;  // a job's last thread wakes the collector onto its own CPU
  // --block-stages: the tracer of the devices under the run's targets (null: not asked for, or
  // not possible here), its snapshot at the last cut, and per device the jobs on it.
  std::unique_ptr<BlockStageTracer> block_tracer_;
  BlockStageTracer::Snapshot block_snapshot_;
  std::vector<std::vector<uint32_t>> block_jobs_;
  // --profile: perf sampling this host from when the run is armed to its last report.
  std::unique_ptr<HostProfiler> profiler_;
  std::string host_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WORKER_RUN_H_
