// Merges the interval reports of every worker into cluster results. Equal interval indices
// cover the same wall-clock span on every worker (they count from the common start instant),
// so a cluster interval is the exact bucket-wise sum of the workers' reports; totals are the
// sum of all intervals. Thread-safe: stream threads add reports while the run goes on.
#ifndef IOFLEET_CONTROLLER_RUN_AGGREGATOR_H_
#define IOFLEET_CONTROLLER_RUN_AGGREGATOR_H_

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controller/carried_reports.h"
#include "controller/direction_summary.h"
#include "controller/report_sink.h"
#include "job/job_phases.h"
#include "job/mdtest_warnings.h"
#include "proto/job.pb.h"
#include "proto/report.pb.h"
#include "proto/worker_service.pb.h"

namespace iofleet {

// One interval as published while the run goes on (live view, interval logs, metrics).
struct PublishedInterval {
  enum class Scope { kCluster, kJob, kWorker };
  Scope scope = Scope::kJob;
  int job = -1;           // kJob/kWorker: index into the spec; kCluster: -1 (all jobs of the phase)
  uint32_t phase = 0;
  int worker = -1;        // kWorker only
  uint32_t index = 0;
  int64_t start_unix_ns = 0, end_unix_ns = 0;
  // Whether every worker expected for this interval had reported when it was published, and
  // whether this is a re-publication after a late report arrived.
  bool complete = true;
  bool amended = false;
  uint32_t workers_reporting = 0, workers_expected = 0;
  std::vector<size_t> late_workers;  // expected but not (yet) in, kCluster/kJob scopes
  DirectionTotals directions;  // read, write, trim, sync, meta
};

class RunAggregator final : public ReportSink {
 public:
  // `workers`: addresses in worker-index order.
  RunAggregator(v1::RunSpec spec, std::vector<std::string> workers);
  // How many workers each session stands for: 0 for a worker, N for a relay of N workers (its
  // hello's relayed_workers); before the first report. Without it every session is a worker.
  void SetRelayedWorkers(std::vector<uint32_t> relayed);
  // The workers in the run: its sessions, a relay's counting as the workers behind it.
  uint64_t WorkerCount() const {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t count = 0;
    for (size_t w = 0; w < workers_.size(); ++w) count += Weight(w);
    return count;
  }

  // Records that `job` (an index into the whole spec) started at `start_unix_ns` (its
  // stonewall phase's start instant).
  void MarkStarted(size_t job, int64_t start_unix_ns);
  // For those who keep time with the workers (--target-metrics), called outside the
  // aggregator's lock; set before the run starts. `armed`: every worker of a phase is ready and
  // its start instant is about to be picked (MarkArmed: what happens before is not the phase's);
  // `started`: the stonewall phase and start instant of each job marked started (MarkStarted),
  // the interval clock of that phase.
  struct PhaseObserver {
    std::function<void()> armed;
    std::function<void(uint32_t phase, int64_t start_unix_ns)> started;
  };
  void ObservePhases(PhaseObserver observer) { phase_observer_ = std::move(observer); }
  // The session: a phase's workers are armed, its start instant not picked yet.
  void MarkArmed() {
    if (phase_observer_.armed) phase_observer_.armed();
  }
  // Adds reports from worker `worker_index` (what one of its messages carried); their
  // job_index is into the whole spec. Reports of one worker arrive in order. This is where
  // histograms from the wire are checked: a malformed one is left out and named among the
  // report's problems.
  void Add(size_t worker_index, std::vector<v1::IntervalReport> reports) override;

  // Hands each worker's own interval to `observer` as its report is added, instead of keeping
  // it for TakeDue: on the thread that added it (a session's), under the aggregator's lock (so
  // never once the observer is taken away: pass nullptr), while the report is still in that
  // thread's cache and memory; the interval is gone when the call returns. A thousand workers
  // send eight thousand of these a second, and handing them to the live view's thread to be
  // written and freed there cost more than writing them.
  void ObserveWorkerIntervals(std::function<void(const PublishedInterval&)> observer) {
    std::lock_guard<std::mutex> lock(mu_);
    worker_observer_ = std::move(observer);
  }

  // Calls `wake` (on the thread that added the report, under the aggregator's lock: it must
  // not call back) when a job interval has just got every worker's report, so that it can be
  // published at once rather than at the publisher's next tick. nullptr: no more calls.
  void ObserveFullIntervals(std::function<void()> wake) {
    std::lock_guard<std::mutex> lock(mu_);
    full_observer_ = std::move(wake);
  }
  // The earliest instant (Unix ns) at which TakeDue with the same grace would publish an
  // interval not published yet for want of reports, as its last call found; INT64_MAX if none.
  int64_t NextGraceEndUnixNs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return next_grace_end_unix_ns_;
  }

  // The end of the last interval this worker reported (Unix ns), 0 if none.
  int64_t LastReportUnixNs(size_t worker_index) const;

  // How late (by its own clock) this worker's latest thread began among `jobs`, from their
  // final reports; nullopt before any of them arrived.
  std::optional<int64_t> StartLateNs(size_t worker_index, const std::vector<size_t>& jobs) const;

  // Whether every started job's final report from this worker has arrived.
  bool WorkerComplete(size_t worker_index) const;

  // Metadata phases: the items each task of `job` did (all workers), and whether the
  // stonewall time stopped any task.
  std::vector<uint64_t> TaskItems(size_t job) const;
  // Each task's own time (its start to its end), in the same order.
  std::vector<uint64_t> TaskElapsedNs(size_t job) const;
  bool Stonewalled(size_t job) const;
  // Metadata phases (warn_failed_items): the operations on items that failed and were gone past,
  // over every worker, and the warnings the workers named, one a failure (workers in order,
  // each's tasks in order; at most kMdtestNamedFailuresPerWorker from each worker).
  uint64_t ItemFailures(size_t job) const;
  std::vector<std::string> ItemWarnings(size_t job) const;
  // Tree removal: the iteration directories some worker could not remove and none removed.
  std::vector<std::string> IterationDirectoriesLeft(size_t job) const;

  // Intervals to publish now, oldest first, in three scopes (phase-wide cluster, job, worker
  // of a job): the cluster and job intervals every expected worker has reported, those whose
  // end lies more than `grace_ns` before `now_unix_ns` (published with the workers that are in,
  // marked incomplete), and earlier publications that a late report has changed since
  // (amended); and every worker-scope interval (one worker's report) that arrived since the
  // last call, exactly once (counters can add them up).
  // Appended to `out` (which the caller keeps between calls: at a thousand workers a tick
  // publishes megabytes of intervals, and a fresh array each time is as many fresh pages).
  void TakeDue(int64_t now_unix_ns, int64_t grace_ns, std::vector<PublishedInterval>* out);
  std::vector<PublishedInterval> TakeDue(int64_t now_unix_ns, int64_t grace_ns) {
    std::vector<PublishedInterval> out;
    TakeDue(now_unix_ns, grace_ns, &out);
    return out;
  }
  // What `job` has done so far on all workers (every direction): bytes moved and operations.
  struct Done {
    uint64_t bytes = 0, ops = 0;
  };
  Done DoneSoFar(size_t job) const;

  // The results so far; `report` must already carry run identity and worker info.
  void FillReport(v1::RunReport* report) const;

 private:
  struct Totals {
    DirectionTotals directions;
  };
  struct WorkerJob {
    Totals totals;
    bool final = false;
    uint64_t elapsed_ns = 0;
    std::string error, stop_reason;
    v1::StopCause stop_cause = v1::STOP_CAUSE_UNSPECIFIED;
    std::vector<std::string> notes;
    uint64_t cpu_user_ns = 0, cpu_system_ns = 0, context_switches = 0;
    std::vector<uint64_t> depth_counts, submit_counts, complete_counts;
    std::vector<uint64_t> task_items;
    std::vector<uint64_t> task_elapsed_ns;
    uint64_t item_failures = 0;
    std::vector<std::string> item_warnings;  // at most kMdtestNamedFailuresPerWorker
    std::vector<std::string> iteration_directories_gone, iteration_directories_left;  // as many at most, each
    bool stonewalled = false;
    int64_t start_late_ns = 0;
    int64_t earliest_start_late_ns = 0;
    int64_t last_end_unix_ns = 0;
  };
  // A per-task field of every worker's final report of `job`, workers in order.
  template <typename T>
  std::vector<T> PerTask(size_t job, std::vector<T> WorkerJob::*field) const;
  struct WorkerInterval {
    uint64_t ops = 0, bytes = 0;
    CarriedReports reports;  // the workers' reports the session's carried (behind a relay: many)
  };
  // Which workers reported (a bit each: a thousand reports a second come in, a tree node each
  // would be as many allocations).
  class WorkerSet {
   public:
    bool insert(size_t w) {
      if (w >= in_.size()) in_.resize(w + 1, false);
      if (in_[w]) return false;
      in_[w] = true;
      ++size_;
      return true;
    }
    size_t count(size_t w) const { return w < in_.size() && in_[w] ? 1 : 0; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

   private:
    std::vector<bool> in_;
    size_t size_ = 0;
  };
  struct ClusterInterval {
    Totals totals;
    // Job scope: the reports added since TakeDue last looked at the interval, summed dense
    // (DirectionSum); folded into `totals` each time it looks (FoldSums), so that a run's
    // thousands of intervals keep only their sparse totals.
    std::array<DirectionSum, kDirectionCount> sums;
    int64_t start_unix_ns = 0, end_unix_ns = 0;
    WorkerSet workers;
    std::vector<WorkerInterval> by_worker;  // job scope only: [worker], those in `workers`
    // Reports added (a relay sends a late worker's report for an interval it already
    // forwarded as one more report of its own), and how many were in when last published (0:
    // never): more since is an amendment.
    size_t additions = 0;
    size_t published_reports = 0;
    bool settled = false;                        // published complete (job scope)
    // Job scope: workers' reports in and owed by the sessions in `workers` (sums of by_worker's
    // CarriedReports: carried, expected()), so that an interval a relay sent up without some of
    // its workers is complete only once their reports follow.
    uint64_t reports_in = 0, reports_owed_in = 0;
  };
  // Whether worker `w` still owes a report for `interval` of `job` (it has not ended the job
  // before the interval began).
  bool Expected(size_t job, size_t w, const ClusterInterval& interval) const;
  // The publication of `interval` when it is due — `reports` of `expected_reports` are in, or
  // its grace is over, or more reports were added since it was last published (amended) — with
  // its span, totals and flags filled in; the caller adds scope and identity. An interval not
  // published yet for want of reports lowers `next_grace_end` to the end of its grace.
  static std::optional<PublishedInterval> Due(ClusterInterval& interval, size_t reports, size_t expected_reports, size_t additions,
                                              int64_t now_unix_ns, int64_t grace_ns, int64_t* next_grace_end);

  // True when the report made its job interval one with every worker's report.
  bool AddLocked(size_t worker_index, v1::IntervalReport report);
  // --block-stages: the report's device records into the run's and the interval's. mu_ held.
  void AddBlockDevicesLocked(size_t worker_index, const v1::IntervalReport& report);
  // The report's directions into a worker's totals (no slowest requests: `job_slowest`, the
  // job's, keeps them).
  static void AddDirections(const v1::IntervalReport& report, Totals* totals, DirectionTotals* job_slowest);
  // A job interval's totals with what its sums hold: folded into them (and the sums freed), or
  // as a copy (the interval left as it is).
  static void FoldSums(ClusterInterval& interval);
  static DirectionTotals TotalsWithSums(const ClusterInterval& interval);
  static void AddTotals(const Totals& from, Totals* into);

  const v1::RunSpec spec_;
  const JobPhases phases_;
  std::vector<int64_t> job_start_unix_ns_;  // 0: not started
  const std::vector<std::string> workers_;
  std::vector<uint32_t> relayed_;  // [session]: SetRelayedWorkers
  // The workers session `w` stands for: 1, or a relay's.
  uint32_t Weight(size_t w) const { return SessionWorkers(w < relayed_.size() ? relayed_[w] : 0); }
  PhaseObserver phase_observer_;
  mutable std::mutex mu_;
  std::vector<std::vector<WorkerJob>> per_job_worker_;                  // [job][worker]
  // Each job's slowest requests per direction (only their `slowest` is used), from every report
  // as it comes: the job's own list, not one per worker summed at the end.
  std::vector<DirectionTotals> job_slowest_;
  std::vector<std::map<uint32_t, ClusterInterval>> per_job_intervals_;  // [job][interval]
  std::vector<std::map<uint32_t, ClusterInterval>> per_phase_intervals_;  // [phase][interval]
  std::function<void(const PublishedInterval&)> worker_observer_;  // ObserveWorkerIntervals (mu_)
  std::vector<PublishedInterval> worker_intervals_;  // arrived since the last TakeDue
  std::function<void()> full_observer_;              // ObserveFullIntervals (mu_)
  int64_t next_grace_end_unix_ns_ = INT64_MAX;       // NextGraceEndUnixNs (mu_)
  // --block-stages: per host and device over the run; the cluster's per (phase, interval).
  google::protobuf::RepeatedPtrField<v1::BlockDeviceStages> block_devices_;
  std::map<std::pair<uint32_t, uint32_t>, v1::BlockStagesInterval> block_intervals_;
  // --profile: each host's per phase, as they came.
  google::protobuf::RepeatedPtrField<v1::HostProfile> profiles_;
  std::vector<std::string> malformed_problems_;
  size_t malformed_histograms_ = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_RUN_AGGREGATOR_H_
