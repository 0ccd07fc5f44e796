// What the controller shows and writes while a run goes on, from the intervals the aggregator
// publishes (RunAggregator::TakeDue): a progress line on stderr (rewritten in place on a
// terminal, periodic plain lines otherwise), an NDJSON interval log and a CSV one. A worker's
// late interval does not hold the view up: the interval is published without it, marked
// incomplete, and published again (amended) when the report arrives, which stderr says.
#ifndef IOFLEET_CONTROLLER_LIVE_VIEW_H_
#define IOFLEET_CONTROLLER_LIVE_VIEW_H_

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/fio_logs.h"
#include "controller/run_aggregator.h"
#include "job/job_phases.h"
#include "metrics/interval_metrics.h"
#include "proto/job.pb.h"

namespace iofleet {

// Up to this many workers the interval logs hold each worker's own lines too by default.
// Beyond, the cluster's and the jobs' only: each worker's line per job and interval is what
// fills them (1,024 workers x 8 jobs: ~7 MB a second, 25 GB an hour of NDJSON and CSV, and a
// sixth of the controller's CPU to write), and result.json keeps every worker's figures anyway.
inline constexpr size_t kWorkerIntervalLinesAuto = 32;

struct LiveViewOptions {
  bool progress = true;          // the status line (--quiet: off)
  std::string interval_log;      // --interval-log FILE (NDJSON), empty: none
  std::string interval_csv;      // --interval-csv FILE, empty: none
  // Each worker's own lines in those logs (--worker-intervals); unset: while there are at
  // most kWorkerIntervalLinesAuto workers.
  std::optional<bool> worker_lines;
  absl::Duration interval = absl::Seconds(1);
  // A late interval is published without the missing workers after this long.
  absl::Duration grace = absl::Seconds(2);
  // A worker whose throughput in the last interval is this fraction below the median is
  // listed as a straggler.
  double straggler_fraction = 0.5;
  // Prometheus (--metrics-listen): cluster counters per job and direction, fed with each
  // worker's interval once, the queue depth, workers reporting/expected, the run's identity.
  IntervalMetrics* metrics = nullptr;
  // fio's log options (write_bw_log...): fed with every worker-scope interval.
  FioLogWriter* fio_logs = nullptr;
};

// One interval's latency figures for the logs (all 0 when it has none).
struct LatencyFigures {
  uint64_t mean = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  double stddev = 0;
};

class LiveView {
 public:
  LiveView(v1::RunSpec spec, std::vector<std::string> workers, std::string run_id, LiveViewOptions options);
  ~LiveView();

  // Opens the log files (errors name the file) and starts publishing from `aggregator`.
  absl::Status Start(RunAggregator* aggregator);
  // Publishes everything still pending (late workers stay marked) and closes the logs.
  absl::Status Finish();

  // mdtest: the operations job `job` does when they differ from what its spec says (a
  // wear-out, or a phase after a stonewalled creation), for the % done.
  void SetPhaseSteps(int job, uint64_t steps);

  // Prints a line of text on stderr below the progress line (which a terminal keeps as the
  // last line), without the two interleaving.
  void PrintLine(const std::string& text);

  // A line of another source for the NDJSON interval log (target metrics), written with the
  // next intervals published (lines are never interleaved). Dropped without an interval log.
  void AppendLogLine(std::string line);

  // One NDJSON line / CSV row for a published interval and direction (exposed for tests).
  std::string JsonLine(const PublishedInterval& interval, int direction) const;
  std::string CsvRow(const PublishedInterval& interval, int direction) const;
  static const char* CsvHeader();
  void AppendJsonLine(const PublishedInterval& interval, int direction, std::string* out) const;
  void AppendCsvRow(const PublishedInterval& interval, int direction, std::string* out) const;
  // Both (either may be null), the latency figures worked out once.
  void AppendLogLines(const PublishedInterval& interval, int direction, std::string* json, std::string* csv) const;

 private:
  void AppendJsonLine(const PublishedInterval& interval, int direction, const LatencyFigures& figures, std::string* out) const;
  void AppendCsvRow(const PublishedInterval& interval, int direction, const LatencyFigures& figures, std::string* out) const;
  void Loop();
  void Publish(int64_t now_unix_ns, int64_t grace_ns);
  // A worker's own interval: its log lines, fio logs, metrics and straggler count (worker_mu_).
  void TakeWorkerInterval(const PublishedInterval& in);
  // The metrics' labels of a published interval's direction: run, job, direction.
  prometheus::Labels MetricLabels(const PublishedInterval& in, int direction) const;
  std::string ProgressLine(const PublishedInterval& cluster, int64_t now_unix_ns) const;

  const v1::RunSpec spec_;
  const JobPhases phases_;
  const std::vector<std::string> workers_;
  const std::string run_id_;
  const LiveViewOptions options_;
  const bool worker_lines_;  // each worker's own lines go in the interval logs
  const bool tty_;
  RunAggregator* aggregator_ = nullptr;
  std::FILE* ndjson_ = nullptr;
  std::FILE* csv_ = nullptr;
  std::thread thread_;
  // What wakes the loop before its next tick: Finish (it ends at once), or a job interval that
  // has just got every worker's report (RunAggregator::ObserveFullIntervals: published now,
  // not up to a tick later).
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool woken_ = false, finishing_ = false;
  absl::Time last_plain_line_ = absl::InfinitePast();
  uint32_t last_plain_phase_ = 0;
  // Each phase's first cluster interval with activity (its start): where an mdtest phase's
  // progress and ETA count from (the phases of a sequence share one start instant).
  std::map<uint32_t, int64_t> phase_first_active_;
  // What TakeWorkerInterval keeps, on the sessions' threads.
  std::mutex worker_mu_;
  std::string worker_json_, worker_csv_;  // the workers' lines until the next Publish writes them
  // Operations per worker (all jobs of the phase) by (phase, interval), gathered as the workers'
  // intervals arrive (before their cluster interval is due), for the stragglers of the progress
  // line; intervals older than the newest cluster one are dropped.
  // [worker]: -1 for a worker whose interval is not in (an array: thousands arrive a second).
  std::map<std::pair<uint32_t, uint32_t>, std::vector<double>> worker_ops_;
  std::vector<double> last_worker_ops_;  // the newest cluster interval's
  std::vector<PublishedInterval> due_;   // Publish's, kept for its capacity
  std::string json_lines_, csv_rows_;    // what Publish writes to the logs, kept for their capacity
  mutable std::mutex steps_mu_;
  std::map<int, uint64_t> phase_steps_;  // SetPhaseSteps (steps_mu_)
  std::mutex extra_mu_;
  std::string extra_lines_;  // AppendLogLine's, until the next Publish (extra_mu_)
  std::mutex stderr_mu_;    // the live thread's lines and PrintLine's
  bool line_open_ = false;  // a progress line is on the terminal without a newline (stderr_mu_)
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_LIVE_VIEW_H_
