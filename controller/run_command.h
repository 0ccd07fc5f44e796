// `iofleet run`: parse the job, find or start workers, prepare them all, start them at one
// instant, keep their leases alive, collect their interval streams, and report.
#ifndef IOFLEET_CONTROLLER_RUN_COMMAND_H_
#define IOFLEET_CONTROLLER_RUN_COMMAND_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metrics/interval_metrics.h"
#include "absl/time/time.h"
#include "controller/session_flags.h"
#include "proto/job.pb.h"
#include "proto/report.pb.h"

namespace iofleet {

struct RunOptions {
  std::string job_file;                  // a fio job file, or
  std::vector<std::string> job_options;  // fio's command-line job options (--name=x --rw=...); with
                                         // a job file, global defaults the file's own override (fio's)
  SessionFlags session;                  // workers, timing, telemetry, outputs (shared with mdtest, compare)
  std::string output_format = "normal";  // normal | json | json+ | iofleet-json
  std::string directory;                 // for jobs without directory= (else a temp dir locally)
  std::string target;                    // compare: every job runs here (a path or nfs:// URL)
  bool keep_files = false;               // keep the temporary directory of a local run
  bool ignore_unsupported = false;       // skip fio options iofleet does not implement
  std::vector<std::string> sections;     // fio's --section: only these jobs (empty: all)
  IntervalMetrics* metrics = nullptr;    // Prometheus, when served (CommandOutputs)
  std::string fio_log_directory = ".";   // where fio's write_*_log prefixes are resolved
};

struct RunResult {
  int exit_code = 0;
  bool ran = false;  // the workers ran (the report is worth printing), else input or setup failed
  v1::RunSpec spec;  // what the workers were given (ResolveRunSpec's result), once resolved
};

// The files of a run's results directory other than its logs: job.fio (the job as given),
// job-resolved.json, result.json (iofleet-json), report.txt, report.html, hosts.json. `text`,
// `html` and `json_report` are the report as RenderTextReport, RenderHtmlReport and
// RenderJsonReport give it (a caller that prints them too renders them once: at a thousand
// workers each takes a fraction of a second, result.json seconds); without them they are
// rendered here.
std::vector<std::pair<std::string, std::string>> RunResultFiles(const std::string& job_as_given, const v1::RunSpec& resolved,
                                                                const v1::RunReport& report, std::optional<std::string> text = std::nullopt,
                                                                std::optional<std::string> html = std::nullopt,
                                                                std::optional<std::string> json_report = std::nullopt);

// Resolves a parsed job (job/run_resolution.h: placement, temporary directory for local runs,
// verify_across_workers, validation), runs it on the cluster and fills `report`; errors that
// stop it early are printed here.
RunResult ExecuteRun(v1::RunSpec spec, const RunOptions& options, v1::RunReport* report);

// --parse-only (as fio's): parses, resolves (placement as the run would do it) and validates
// the job, prints the resolved jobs to stdout and returns 0, or prints the error and returns 2.
// Contacts no worker and creates nothing: a local run's temporary directory is shown by the
// pattern it would be made from.
int ParseJobOnly(const RunOptions& options);

// Exit codes: 0 success; 1 the run failed or was incomplete (IO errors, lost workers,
// interrupted); 2 bad input (job file, options), before any worker was touched.
int RunJob(const RunOptions& options);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_RUN_COMMAND_H_
