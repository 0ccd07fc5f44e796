// What run and mdtest do around their workers' session, written once: the session's options
// from the shared flags (credentials loaded), Prometheus served from before the workers are
// contacted until after the report (and --metrics-hold beyond), the results directory made
// before the run (the interval logs go there as it goes on), and at the end the report to
// stdout or --output (atomically), the HTML report, the results directory completed and the
// problems printed.
#ifndef IOFLEET_CONTROLLER_COMMAND_SESSION_H_
#define IOFLEET_CONTROLLER_COMMAND_SESSION_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/cluster_session.h"
#include "controller/results_dir.h"
#include "controller/session_flags.h"
#include "metrics/interval_metrics.h"

namespace iofleet {

// The cluster session's options as the shared flags say (credentials read from their files).
absl::StatusOr<SessionOptions> SessionOptionsFrom(const SessionFlags& flags, IntervalMetrics* metrics);

class CommandOutputs {
 public:
  // Serves metrics if asked and makes the results directory for a run called `name`; every
  // message starts with `prefix` ("iofleet", "iofleet mdtest").
  static absl::StatusOr<CommandOutputs> Open(const SessionFlags& flags, const std::string& name, std::string prefix);

  IntervalMetrics* metrics() const { return metrics_.get(); }
  // Where the interval logs go: --interval-log / --interval-csv, else the results directory.
  const std::string& interval_log() const { return interval_log_; }
  const std::string& interval_csv() const { return interval_csv_; }
  // A path in the results directory, or `fallback` without one.
  std::string PathInResults(const std::string& file, const std::string& fallback) const {
    return results_ ? results_->PathOf(file) : fallback;
  }

  // Nothing ran (bad input, no workers): the results directory is removed.
  void Discard();
  // The end of a run that ran: `files` (plus interval logs written elsewhere) complete the
  // results directory, `rendered` goes to stdout or --output, `html` to --report, problems to
  // stderr, then metrics are held. Returns `exit_code`, or 1 when the report could not be written.
  int Finish(const std::string& rendered, const std::string& html, std::vector<std::pair<std::string, std::string>> files,
             const std::vector<std::string>& problems, int exit_code);

 private:
  CommandOutputs(const SessionFlags& flags, std::string prefix) : flags_(flags), prefix_(std::move(prefix)) {}
  SessionFlags flags_;
  std::string prefix_;
  std::unique_ptr<IntervalMetrics> metrics_;
  std::optional<ResultsDirectory> results_;
  std::string interval_log_, interval_csv_;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_COMMAND_SESSION_H_
