#include "controller/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/nfs_url.h"
#include "common/pretty_json.h"
#include "common/protocol_version.h"
#include "controller/block_stages.h"
#include "controller/host_profiles.h"
#include "controller/cluster_session.h"
#include "controller/command_session.h"
#include "controller/fio_logs.h"
#include "controller/live_view.h"
#include "controller/local_workers.h"
#include "controller/report_fio_json.h"
#include "controller/report_html.h"
#include "controller/report_text.h"
#include "controller/results_dir.h"
#include "controller/run_aggregator.h"
#include "controller/target_metrics.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "job/file_names.h"
#include "job/fio_job_file.h"
#include "job/job_phases.h"
#include "job/job_validation.h"
#include "job/run_resolution.h"

namespace iofleet {
namespace {

int Fail(const absl::Status& status, int code) {
  std::cerr << "iofleet: " << status.message() << "\n";
  return code;
}

// Removes a local run's temporary directory unless asked to keep it.
struct TemporaryDirectory {
  std::string path;
  bool keep = false;
  ~TemporaryDirectory() {
    if (path.empty()) return;
    if (keep) {
      std::cerr << "iofleet: kept the job files in " << path << "\n";
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// The job as the user gave it: the job file's text, or the command-line options.
std::string JobAsGiven(const RunOptions& options) {
  if (options.job_options.empty()) {
    std::ifstream in(options.job_file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  return absl::StrCat("# fio command-line form\n", absl::StrJoin(options.job_options, "\n"), "\n");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> RunResultFiles(const std::string& job_as_given, const v1::RunSpec& resolved,
                                                                const v1::RunReport& report, std::optional<std::string> text,
                                                                std::optional<std::string> html, std::optional<std::string> json_report) {
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.preserve_proto_field_names = true;
  std::string resolved_json, hosts_json;
  if (!google::protobuf::util::MessageToJsonString(resolved, &resolved_json, json).ok()) resolved_json = "{}";
  v1::RunReport hosts;  // the workers and their host facts only
  *hosts.mutable_workers() = report.workers();
  absl::StatusOr<std::string> printed_hosts = PrintJson(hosts, json);
  hosts_json = printed_hosts.ok() ? *std::move(printed_hosts) : "{}";
  // (Each moved in: an initializer list would copy them, result.json being tens of megabytes at
  // a thousand workers.)
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("job.fio", job_as_given);
  files.emplace_back("job-resolved.json", std::move(resolved_json));
  files.emplace_back("result.json", json_report ? *std::move(json_report) : RenderJsonReport(report));
  files.emplace_back("report.txt", text ? *std::move(text) : RenderTextReport(report));
  files.emplace_back("report.html", html ? *std::move(html) : RenderHtmlReport(report));
  files.emplace_back("hosts.json", std::move(hosts_json));
  // --target-metrics: each endpoint's intervals and run totals on their own, beside the
  // clients' result.
  // --profile: each host's folded stacks and flame graphs.
  for (auto& file : ProfileFiles(report.profiles(), report.workers())) files.push_back(std::move(file));
  if (report.target_metrics_size() > 0) {
    v1::RunReport target;
    *target.mutable_target_metrics() = report.target_metrics();
    std::string target_json;
    if (!google::protobuf::util::MessageToJsonString(target, &target_json, json).ok()) target_json = "{}";
    files.emplace_back("target-metrics.json", std::move(target_json));
  }
  return files;
}

namespace {

// The job as given (a file, or fio's command-line form), parsed with the run's options.
absl::StatusOr<v1::RunSpec> ParseJob(const RunOptions& options) {
  const FioParseOptions parse_options{.ignore_unsupported = options.ignore_unsupported, .sections = options.sections};
  if (options.job_file.empty()) return ParseFioCommandLine(options.job_options, parse_options);
  FioParseOptions with_defaults = parse_options;
  with_defaults.global_options = options.job_options;
  return ParseFioJobFile(options.job_file, with_defaults);
}

}  // namespace

int ParseJobOnly(const RunOptions& options) {
  auto parsed = ParseJob(options);
  if (!parsed.ok()) return Fail(parsed.status(), 2);
  // The pattern ExecuteRun makes a local run's temporary directory from: shown, never made.
  static constexpr char kTemporaryDirectory[] = "/tmp/iofleet-run-XXXXXX";
  absl::StatusOr<ResolvedRun> resolved =
      ResolveRunSpec(std::move(*parsed), RunPlacement{.default_directory = options.directory,
                                                      .target = options.target,
                                                      .local_workers = options.session.local(),
                                                      .temporary_directory = []() -> absl::StatusOr<std::string> {
                                                        return std::string(kTemporaryDirectory);
                                                      }});
  if (!resolved.ok()) return Fail(resolved.status(), 2);
  for (const std::string& note : resolved->notes) std::cerr << "iofleet: " << note << "\n";
  for (const std::string& ignored : resolved->spec.ignored_options()) {
    std::cerr << "iofleet: ignoring unsupported fio option (--ignore-unsupported): " << ignored << "\n";
  }
  // Protobuf's text format of each job: every field the workers get, by its name in
  // proto/job.proto, defaults left out.
  google::protobuf::TextFormat::Printer printer;
  std::cout << "# " << resolved->spec.source() << ": " << resolved->spec.jobs_size() << " job(s), valid\n";
  for (const v1::JobSpec& job : resolved->spec.jobs()) {
    std::string text;
    printer.PrintToString(job, &text);
    std::cout << "\n[" << job.name() << "]\n" << text;
  }
  return 0;
}

int RunJob(const RunOptions& options) {
  // The job, fully validated before any worker is touched.
  auto parsed = ParseJob(options);
  if (!parsed.ok()) return Fail(parsed.status(), 2);
  if (options.output_format != "normal" && options.output_format != "json" && options.output_format != "json+" &&
      options.output_format != "iofleet-json") {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--output-format must be normal, json, json+ or iofleet-json, not '",
                                                        options.output_format, "'")), 2);
  }
  const std::string name = !options.job_file.empty() ? std::filesystem::path(options.job_file).stem().string() : parsed->jobs(0).name();
  absl::StatusOr<CommandOutputs> outputs = CommandOutputs::Open(options.session, name, "iofleet");
  if (!outputs.ok()) return Fail(outputs.status(), 2);
  RunOptions run_options = options;
  run_options.metrics = outputs->metrics();
  run_options.session.interval_log = outputs->interval_log();
  run_options.session.interval_csv = outputs->interval_csv();
  run_options.fio_log_directory = outputs->PathInResults("fio-logs", options.fio_log_directory);
  v1::RunReport report;
  const RunResult result = ExecuteRun(std::move(*parsed), run_options, &report);
  if (!result.ran) {
    outputs->Discard();
    return result.exit_code;
  }
  std::string text = RenderTextReport(report);
  std::string html = RenderHtmlReport(report);
  // result.json, and the "iofleet" part of fio's JSON layout: printed once (tens of megabytes at
  // a thousand workers).
  std::string native = RenderJsonReport(report);
  const std::string rendered = options.output_format == "normal" ? text
                               : options.output_format == "json+" ? RenderFioJsonReport(report, true, native)
                               : options.output_format == "iofleet-json" ? native
                                                                         : RenderFioJsonReport(report, false, native);
  std::vector<std::pair<std::string, std::string>> files =
      RunResultFiles(JobAsGiven(options), result.spec, report, text, html, std::move(native));
  return outputs->Finish(rendered, html, std::move(files), {report.problems().begin(), report.problems().end()}, result.exit_code);
}

RunResult ExecuteRun(v1::RunSpec spec, const RunOptions& options, v1::RunReport* report_out) {
  v1::RunReport& report = *report_out;
  auto early = [](int code) { return RunResult{code, false}; };
  const bool local = options.session.local();
  TemporaryDirectory temporary{.keep = options.keep_files};
  // 1. The spec the workers get: files placed, verify_across_workers expanded, validated.
  absl::StatusOr<ResolvedRun> resolved =
      ResolveRunSpec(std::move(spec), RunPlacement{.default_directory = options.directory,
                                                   .target = options.target,
                                                   .local_workers = local,
                                                   .temporary_directory = [&temporary]() -> absl::StatusOr<std::string> {
                                                     char pattern[] = "/tmp/iofleet-run-XXXXXX";
                                                     if (::mkdtemp(pattern) == nullptr) return absl::ErrnoToStatus(errno, "mkdtemp");
                                                     return temporary.path = pattern;
                                                   }});
  if (!resolved.ok()) return early(Fail(resolved.status(), resolved.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1));
  spec = std::move(resolved->spec);
  for (const std::string& note : resolved->notes) std::cerr << "iofleet: " << note << "\n";

  // fio's log windows (log_avg_msec, log_hist_msec) become the run's interval: the logs are
  // written from the intervals, one averaged entry per window.
  absl::Duration interval = options.session.interval;
  std::optional<FioLogWriter> fio_logs;
  if (FioLogWriter::Wanted(spec)) {
    uint32_t window_ms = 0;
    for (const v1::JobSpec& job : spec.jobs()) {
      for (uint32_t w : {job.log_avg_msec(), job.log_hist_msec()}) {
        if (w > 0) window_ms = window_ms == 0 ? w : std::min(window_ms, w);
      }
    }
    if (window_ms == 0) {
      std::cerr << "iofleet: fio logs get one averaged entry per interval (" << absl::FormatDuration(interval)
                << "); per-IO entries (log_avg_msec=0) are not written — set log_avg_msec\n";
    } else {
      interval = std::max(absl::Milliseconds(window_ms), absl::Milliseconds(10));
      if (window_ms < 10) std::cerr << "iofleet: log windows below 10 ms are not supported; using 10 ms\n";
    }
    fio_logs.emplace(spec, options.fio_log_directory, absl::ToInt64Nanoseconds(interval));
  }

  // 2. Workers: given, or started here; handshake with all of them.
  absl::StatusOr<SessionOptions> session_options = SessionOptionsFrom(options.session, options.metrics);
  if (!session_options.ok()) return early(Fail(session_options.status(), 2));
  session_options->interval = interval;
  if (options.session.starts_workers()) {
    // The workers this controller starts may touch the jobs' directories: made here for local
    // workers; --slurm's and --ssh's make them on their hosts (iofleet-worker --create-roots).
    for (const v1::JobSpec& job : spec.jobs()) {
      std::vector<std::string> dirs = JobDirectories(job);
      if (dirs.empty()) dirs.push_back(job.filename().substr(0, std::max<size_t>(job.filename().rfind('/'), 1)));
      for (const std::string& dir : dirs) {
        std::error_code ignored;
        if (local && !IsNfsUrl(dir)) std::filesystem::create_directories(dir, ignored);
        auto& roots = session_options->local_roots;
        if (std::find(roots.begin(), roots.end(), dir) == roots.end()) roots.push_back(dir);
      }
    }
  }
  report.set_tool("iofleet");
  report.set_tool_version(kIofleetVersion);
  report.set_run_id(NewRunId());
  report.set_job_source(spec.source());
  for (const std::string& ignored : spec.ignored_options()) {
    report.add_ignored_options(ignored);
    std::cerr << "iofleet: ignoring unsupported fio option (--ignore-unsupported): " << ignored << "\n";
  }
  auto session = ClusterSession::Open(*session_options, &report);
  if (!session.ok()) return early(Fail(session.status(), 1));

  // 3. Phase by phase (fio's stonewall): every phase a cluster-wide barrier.
  RunAggregator aggregator(spec, (*session)->addresses());
  aggregator.SetRelayedWorkers((*session)->RelayedBySession());
  LiveView live(spec, (*session)->addresses(), report.run_id(),
                LiveViewOptions{.progress = !options.session.quiet,
                                .interval_log = options.session.interval_log,
                                .interval_csv = options.session.interval_csv,
                                .worker_lines = options.session.worker_intervals,
                                .interval = interval,
                                .grace = std::max(2 * interval, absl::Seconds(2)),
                                .straggler_fraction = options.session.straggler_fraction,
                                .metrics = options.metrics,
                                .fio_logs = fio_logs ? &*fio_logs : nullptr});
  if (absl::Status started = live.Start(&aggregator); !started.ok()) return early(Fail(started, 2));
  // --target-metrics: the system under test's own view, scraped on the workers' interval clock.
  absl::StatusOr<std::unique_ptr<TargetMetricsScraper>> target_metrics =
      StartTargetMetrics(options.session.target_metrics, interval, [&live](std::string line) { live.AppendLogLine(std::move(line)); }, &aggregator);
  if (!target_metrics.ok()) {
    (void)live.Finish();
    return early(Fail(target_metrics.status(), 2));
  }
  const JobPhases phases = SplitIntoPhases(spec);
  bool interrupted = false, stopped_early = false;
  for (uint32_t phase = 0; phase < phases.phases && !stopped_early; ++phase) {
    v1::RunSpec phase_spec;
    phase_spec.set_source(spec.source());
    phase_spec.set_run_group(report.run_id());
    std::vector<size_t> global_index;  // phase job -> job in the whole spec
    for (int j = 0; j < spec.jobs_size(); ++j) {
      if (phases.phase_of[j] != phase) continue;
      *phase_spec.add_jobs() = spec.jobs(j);
      global_index.push_back(static_cast<size_t>(j));
    }
    const std::string run_id = phases.phases == 1 ? report.run_id() : absl::StrCat(report.run_id(), "-p", phase);
    const PhaseOutcome outcome = (*session)->RunPhase(phase_spec, global_index, run_id, &aggregator, &report);
    if (*target_metrics) (*target_metrics)->PhaseEnded();
    if (!outcome.prepared) {
      if (phase == 0) return early(Fail(absl::FailedPreconditionError(absl::StrJoin(report.problems(), "\niofleet: ")), 1));
      report.add_problems(absl::StrCat("stonewall phases ", phase, " to ", phases.phases - 1, " were not run"));
      break;
    }
    if (phase == 0) report.set_start_unix_ns(outcome.start_unix_ns);
    interrupted = outcome.interrupted;
    stopped_early = outcome.interrupted || outcome.aborted;
    if (stopped_early && phase + 1 < phases.phases) {
      report.add_problems(absl::StrCat("stonewall phases ", phase + 1, " to ", phases.phases - 1, " were not run"));
    }
    // fio's exitall with exit_what=all: once that job ends nothing else runs, later phases
    // included. As the job file asks, so a note rather than a problem.
    for (const v1::JobSpec& job : phase_spec.jobs()) {
      if (stopped_early || phase + 1 >= phases.phases || !job.exitall() || job.exit_what() != v1::JobSpec::EXIT_ALL) continue;
      report.add_notes(absl::StrCat("stonewall phases ", phase + 1, " to ", phases.phases - 1, " were not run: job '", job.name(),
                                    "' has exitall=1 with exit_what=all"));
      stopped_early = true;
      break;
    }
  }

  // 7. Report.
  if (*target_metrics) (*target_metrics)->Finish(report.mutable_target_metrics());
  if (absl::Status logged = live.Finish(); !logged.ok()) report.add_problems(std::string(logged.message()));
  if (fio_logs) {
    auto written = fio_logs->Close();
    if (!written.ok()) report.add_problems(std::string(written.status().message()));
    else if (!written->empty()) {
      // Into a results directory (still named .<name>.partial now): say where it will be.
      std::cerr << "iofleet: wrote " << written->size() << " fio log file(s), e.g. "
                << (options.fio_log_directory == "." || !absl::StartsWith(written->front(), options.fio_log_directory + "/")
                        ? written->front()
                        : absl::StrCat(std::filesystem::path(written->front()).filename().string(), " in the results directory's fio-logs/"))
                << "\n";
    }
  }
  aggregator.FillReport(&report);
  MarkBlockStageOutliers(&report);
  if (interrupted) report.add_problems("interrupted by the user: results cover the time until the stop");
  (*session)->ReportIncompleteWorkers(aggregator, &report);
  for (const v1::JobResult& job : report.jobs()) {
    for (const v1::WorkerResult& w : job.workers()) {
      if (!w.error().empty()) report.add_problems(absl::StrCat("job '", job.name(), "' on ", w.worker(), ": ", w.error()));
    }
  }
  return RunResult{report.problems().empty() ? 0 : 1, true, std::move(spec)};
}

}  // namespace iofleet
