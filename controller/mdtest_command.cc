#include "controller/mdtest_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <iostream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/atomic_file.h"
#include "common/nfs_url.h"
#include "common/protocol_version.h"
#include "common/units.h"
#include "controller/cluster_session.h"
#include "controller/command_session.h"
#include "controller/live_view.h"
#include "controller/report_html.h"
#include "controller/results_dir.h"
#include "controller/mdtest_options.h"
#include "controller/mdtest_plan.h"
#include "controller/mdtest_render.h"
#include "controller/run_aggregator.h"
#include "controller/host_profiles.h"
#include "controller/target_metrics.h"
#include "google/protobuf/util/json_util.h"
#include "job/job_validation.h"
#include "job/run_limits.h"
#include "job/run_resolution.h"
#include "job/mdtest_tree.h"

namespace iofleet {
namespace {

using Op = v1::MetadataPhase;

constexpr char kHelp[] =
    "usage: iofleet mdtest [mdtest options] [--hosts H:P,... | --hostfile F] [--tasks-per-worker N]\n"
    "                      [--readdir] [--output-format normal|json] [--output FILE]\n"
    "mdtest options, with mdtest's meaning:\n"
    "  -d DIR[@DIR...]  test directories (made if missing, not their parents; relative: to here)\n"
    "  -n N  items per task   -I N  items per tree directory   -z N  tree depth   -b N  branching\n"
    "  -L  items in leaves only   -u  unique directory per task\n"
    "  -F  files only   -D  directories only\n"
    "  -C create, -T stat, -E read, -U rename (directories), -r remove: only these (none: all)\n"
    "  -w N  bytes written per file        -e N  bytes read per file  -i N  iterations\n"
    "  -N N  stride: stat/rename the items of task rank+N, read rank+2N's, remove rank+3N's\n"
    "  -R[seed]  random stat order\n"
    "  -W S  stonewall seconds: directory and file creation stop, then every task evens out to the\n"
    "        largest count (as mdtest 4; --stonewall-every-phase: every phase stops, the rest finishes untimed)\n"
    "  -y  fsync after each write    -k  mknod files   -G N  seed of the files' data (default: the time)\n"
    "  -X  check the data each read reads (also --verify-read)   -Y  sync after each phase (timed)\n"
    "  -x FILE  -W's evened creation count: written after a stonewalled creation, read by a run without -C\n"
    "  -a POSIX  the only API   -V N  verbosity\n"
    "  -f N -l N -s N  run with N, N+s, ... up to -l tasks in turn (the others sit out)\n"
    "  -S  shared files (every task the same names; files only)    -c  task 0 creates every task's items\n"
    "  -p S  delay before each iteration   -t  accepted (no unique-directory overhead to time)\n"
    "  -P  print rate and time   -Z  print time instead of rate   -v  print each phase as it ends\n"
    "iofleet's own (as for iofleet run):\n";

int Usage(absl::string_view message) {
  std::cerr << "iofleet mdtest: " << message << "\n(iofleet mdtest --help lists the options)\n";
  return 2;
}


}  // namespace

std::vector<std::pair<std::string, std::string>> MdtestResultFiles(const std::string& command_line, const v1::RunSpec& resolved,
                                                                   const v1::MdtestReport& report) {
  v1::MdtestReport hosts;
  *hosts.mutable_workers() = report.workers();
  std::vector<std::pair<std::string, std::string>> files = {{"command.txt", absl::StrCat(command_line, "\n")},
                                                            {"job-resolved.json", MdtestJson(resolved)},
                                                            {"result.json", MdtestJson(report)},
                                                            {"report.txt", RenderText(report)},
                                                            {"report.html", RenderMdtestHtmlReport(report)},
                                                            {"hosts.json", MdtestJson(hosts)}};
  for (auto& file : ProfileFiles(report.profiles(), report.workers())) files.push_back(std::move(file));  // --profile
  if (report.target_metrics_size() > 0) {
    v1::MdtestReport target;  // --target-metrics on their own, beside the clients' result
    *target.mutable_target_metrics() = report.target_metrics();
    files.emplace_back("target-metrics.json", MdtestJson(target));
  }
  return files;
}

int RunMdtest(const std::vector<std::string>& args) {
  MdtestOptions o;
  if (absl::Status parsed = ParseMdtestArgs(args, &o); !parsed.ok()) {
    if (absl::IsCancelled(parsed)) {
      std::cout << kHelp << FormatOptionHelp(MdtestLongOptions());
      return 0;
    }
    return Usage(parsed.message());
  }
  absl::StatusOr<CommandOutputs> outputs = CommandOutputs::Open(o.session, "mdtest", "iofleet mdtest");
  if (!outputs.ok()) return Usage(outputs.status().message());
  o.session.interval_log = outputs->interval_log();
  o.session.interval_csv = outputs->interval_csv();
  // As mdtest prints its own: the program, then each argument quoted.
  std::string command_line = "iofleet mdtest";
  for (const std::string& arg : args) absl::StrAppend(&command_line, " '", arg, "'");
  v1::MdtestReport report;
  bool ran = false;
  v1::RunSpec resolved;
  int code = ExecuteMdtest(o, command_line, &report, &ran, outputs->metrics(), &resolved);
  if (!ran) {
    outputs->Discard();
    return code;
  }
  if (!o.rank_details_csv.empty()) {
    // What was measured, however the run ended (an interrupted one: the phases it ran).
    if (absl::Status saved = WriteFileAtomically(o.rank_details_csv, RenderRankDetailsCsv(report)); !saved.ok()) {
      report.add_problems(absl::StrCat("--saveRankPerformanceDetails: ", saved.message()));
      if (code == 0) code = 1;
    }
  }
  return outputs->Finish(o.output_format == "json" ? MdtestJson(report) : RenderText(report), RenderMdtestHtmlReport(report),
                         MdtestResultFiles(command_line, resolved, report), {report.problems().begin(), report.problems().end()}, code);
}

int ExecuteMdtest(MdtestOptions o, const std::string& command_line, v1::MdtestReport* report_out, bool* ran,
                  IntervalMetrics* metrics, v1::RunSpec* resolved) {
  v1::MdtestReport& report = *report_out;
  *ran = false;
  report.set_tool("iofleet mdtest");
  report.set_tool_version(kIofleetVersion);
  report.set_command_line(command_line);
  report.set_iterations(o.iterations);
  report.set_started_unix_ns(absl::ToUnixNanos(absl::Now()));
  report.set_files(o.files);
  report.set_dirs(o.dirs);
  report.set_print_rate(o.print_rate_and_time || !o.print_time);
  report.set_print_time(o.print_rate_and_time || o.print_time);
  report.set_show_rank_statistics(o.show_rank_statistics);
  report.set_print_all_procs(o.print_all_procs);
  if (o.read && o.phase.read_bytes() == 0) report.add_warnings("Read bytes is 0, thus, a read test will actually just open/close");
  if (!o.given_test_dirs.empty()) report.set_test_path(o.given_test_dirs[0]);  // as mdtest prints it
  // -x without creation: the items per task a creation with -W left (mdtest's status file),
  // read where mdtest reads it, for the file phases.
  uint64_t status_file_items = 0;
  if (!o.stonewall_status_file.empty() && !o.create && o.files) {
    std::ifstream in(o.stonewall_status_file);
    if (!(in >> status_file_items)) {
      status_file_items = 0;
      report.set_stonewall_status_unreadable(true);
    }
  }
  if (o.warnings_are_errors && (!report.warnings().empty() || report.stonewall_status_unreadable())) {
    std::cerr << "iofleet mdtest: WARNING: "
              << (report.warnings().empty() ? "Could not read stonewall status file " + o.stonewall_status_file : report.warnings(0))
              << " (an error with --warningAsErrors)\n";
    return 1;
  }

  absl::StatusOr<SessionOptions> session_options = SessionOptionsFrom(o.session, metrics);
  if (!session_options.ok()) return Usage(session_options.status().message());
  // --savePerOpDataCSV: workers this run starts write their tasks' files in the prefix's
  // directory, which they are given as an allowed root; on this host it must be there before
  // anything is made.
  const std::string per_op_directory = PerOpCsvDirectory(o.phase.per_op_csv());
  if (!o.phase.per_op_csv().empty() && o.session.local()) {
    std::error_code error;
    if (!std::filesystem::is_directory(per_op_directory, error)) {
      std::cerr << "iofleet mdtest: --savePerOpDataCSV " << o.phase.per_op_csv() << ": no directory " << per_op_directory << "\n";
      return 2;
    }
  }
  // mdtest makes a missing test directory (not its parents) and removes it at the end when the
  // run removed what it made. Local workers need it before they start (it is their root).
  // (-a DUMMY makes nothing: its local workers' root is the nearest directory there is above it.)
  std::vector<std::string> created_test_dirs;
  const bool dummy = o.phase.has_dummy();
  if (dummy) report.set_api("DUMMY");
  if (o.session.local() && !dummy) {
    for (const std::string& d : o.phase.test_dirs()) {
      if (IsNfsUrl(d) || std::find(created_test_dirs.begin(), created_test_dirs.end(), d) != created_test_dirs.end()) continue;
      if (::mkdir(d.c_str(), 0775) == 0) {
        created_test_dirs.push_back(d);
      } else if (errno != EEXIST) {
        const int error = errno;
        std::cerr << "iofleet mdtest: -d " << d << ": cannot create it: " << std::strerror(error)
                  << (error == ENOENT ? " (as mdtest, only the test directory itself is made, not its parents)" : "") << "\n";
        return 1;
      }
    }
  }
  if (o.session.starts_workers()) {
    for (const std::string& d : o.phase.test_dirs()) {
      std::filesystem::path root = d;
      std::error_code error;
      while (dummy && !IsNfsUrl(d) && root.has_parent_path() && root != root.parent_path() && !std::filesystem::is_directory(root, error)) {
        root = root.parent_path();
      }
      session_options->local_roots.push_back(root.string());
    }
    if (!o.phase.per_op_csv().empty()) session_options->local_roots.push_back(per_op_directory);
  }
  // Removes the test directories this run made (on every way out before the test ran, and after
  // a run that removed what it made); what could not be removed, if anything.
  auto remove_created = [&]() -> std::string {
    std::string failed;
    for (auto it = created_test_dirs.rbegin(); it != created_test_dirs.rend(); ++it) {
      if (::rmdir(it->c_str()) != 0 && failed.empty()) {
        failed = absl::StrCat("cannot remove the test directory ", *it, " this run made: ", std::strerror(errno));
      }
    }
    created_test_dirs.clear();
    return failed;
  };
  v1::RunReport run_report;  // the session's view of the workers
  auto session = ClusterSession::Open(*session_options, &run_report);
  if (!session.ok()) {
    std::cerr << "iofleet mdtest: " << session.status().message() << "\n";
    remove_created();
    return 1;
  }
  if (const uint32_t behind = (*session)->relayed_workers(); behind != (*session)->size()) {
    // Its tasks, ranks, node map and per-task accounting count the sessions as workers: through
    // a relay they would be the relay's, not its workers'. Refused rather than miscounted.
    std::cerr << "iofleet mdtest: " << behind << " workers came through " << (*session)->size()
              << " session(s) with relays (iofleet relay): mdtest does not run through relays yet; connect the workers to this "
                 "controller directly (--hosts, --hostfile or --listen)\n";
    remove_created();
    return 2;
  }
  *report.mutable_workers() = run_report.workers();
  const uint32_t tasks = static_cast<uint32_t>((*session)->size()) * o.tasks_per_worker;
  report.set_tasks(tasks);
  o.phase.set_task_count(tasks);
  const MdtestTree whole_tree(o.phase);
  report.set_items_per_task(whole_tree.items_per_task());
  // mdtest's "N tasks, M files/directories": with its directory loops, -n per tree directory.
  const bool loops = whole_tree.looped();
  report.set_items_all_per_task(report.items_per_task() * (loops ? whole_tree.directory_count() : 1));
  report.set_items_all(uint64_t{tasks} * report.items_all_per_task());
  // -f/-l/-s: the task counts to run with (mdtest's rules; by default all tasks, once).
  const uint32_t last_tasks = o.last_tasks == 0 ? tasks : o.last_tasks;
  const uint32_t first_tasks = o.last_tasks == 0 ? tasks : std::max(1u, o.first_tasks == 0 ? 1u : o.first_tasks);
  if (first_tasks > last_tasks || last_tasks > tasks || o.tasks_stride == 0) {
    std::cerr << "iofleet mdtest: -f " << first_tasks << " -l " << last_tasks << " -s " << o.tasks_stride << ": "
              << (o.tasks_stride == 0 ? "the stride must be at least 1"
                  : first_tasks > last_tasks ? "process number: first > last doesn't make sense"
                                             : absl::StrCat("process number: last > number of processes (", tasks, ") doesn't make sense"))
              << "\n";
    remove_created();
    return 2;
  }
  for (uint32_t n = first_tasks; n <= last_tasks; n += o.tasks_stride) {
    report.add_task_counts(n);
    if (n > last_tasks - o.tasks_stride) break;  // (no overflow past UINT32_MAX)
  }
  report.set_items_kind(o.files && o.dirs ? "files/directories" : o.dirs ? "directories" : o.phase.shared_file() ? "file" : "files");
  // Nodes are the workers' hosts; task t runs on worker t / tasks-per-worker.
  {
    std::set<std::string> hosts;
    for (const auto& w : report.workers()) hosts.insert(w.hostname().empty() ? w.address() : w.hostname());
    report.set_nodes(static_cast<uint32_t>(hosts.size()));
    std::string nodemap;
    for (uint32_t t = 0; t < tasks && report.workers_size() > 0; ++t) {
      const auto& w = report.workers(static_cast<int>(t / o.tasks_per_worker));
      nodemap.push_back(w.hostname() == report.workers(0).hostname() ? '1' : '0');
    }
    report.set_nodemap(nodemap);
    // mdtest: when the tasks fill the nodes in blocks, -N counts nodes, not tasks (so a stat
    // reads what another node wrote).
    if (o.phase.stride() > 0 && hosts.size() > 1 && nodemap.size() > 1 && nodemap[1] == '1') {
      o.phase.set_stride(o.phase.stride() * static_cast<uint32_t>(std::count(nodemap.begin(), nodemap.end(), '1')));
    }
    report.set_stride(o.phase.stride());
  }
  const std::string run_id = NewRunId();
  // -R without a seed: mdtest's, the time in seconds (and printed, as mdtest prints it).
  if (o.phase.random_order() && o.phase.random_seed() == 0) o.phase.set_random_seed(static_cast<uint64_t>(absl::ToUnixSeconds(absl::Now())));
  if (o.phase.random_order()) report.set_random_seed(o.phase.random_seed());

  // The whole test as one spec: a job per phase and iteration, each its own stonewall phase,
  // so one aggregator and one live view (progress line, interval logs, metrics) cover it
  // (controller/mdtest_plan.h).
  // -f/-l/-s: one plan per task count, one after the other (the tasks past it sit it out).
  MdtestPlan planned;
  for (uint32_t count : report.task_counts()) {
    MdtestOptions with_count = o;
    with_count.phase.set_task_count(count);
    MdtestPlan part = PlanMdtest(with_count);
    planned.phases.insert(planned.phases.end(), part.phases.begin(), part.phases.end());
    if (planned.spec.jobs().empty()) planned.spec.set_source(part.spec.source());
    for (v1::JobSpec& job : *part.spec.mutable_jobs()) *planned.spec.add_jobs() = std::move(job);
  }
  const std::vector<PlannedPhase>& plan = planned.phases;
  // Through the same resolution as every run (its -d already places every job).
  absl::StatusOr<ResolvedRun> resolution = ResolveRunSpec(std::move(planned.spec), RunPlacement{});
  if (!resolution.ok()) {
    remove_created();
    return Usage(resolution.status().message());
  }
  const v1::RunSpec& spec = resolution->spec;
  if (resolved != nullptr) *resolved = spec;
  RunAggregator aggregator(spec, (*session)->addresses());
  aggregator.SetRelayedWorkers((*session)->RelayedBySession());
  LiveView live(spec, (*session)->addresses(), run_id,
                LiveViewOptions{.progress = !o.session.quiet,
                                .interval_log = o.session.interval_log,
                                .interval_csv = o.session.interval_csv,
                                .worker_lines = o.session.worker_intervals,
                                .interval = o.session.interval,
                                .grace = std::max(2 * o.session.interval, absl::Seconds(2)),
                                .straggler_fraction = o.session.straggler_fraction,
                                .metrics = metrics});
  if (absl::Status started = live.Start(&aggregator); !started.ok()) {
    remove_created();
    return Usage(started.message());
  }
  absl::StatusOr<std::unique_ptr<TargetMetricsScraper>> target_metrics =
      StartTargetMetrics(o.session.target_metrics, o.session.interval, [&live](std::string line) { live.AppendLogLine(std::move(line)); }, &aggregator);
  if (!target_metrics.ok()) {
    (void)live.Finish();
    remove_created();
    return Usage(target_metrics.status().message());
  }

  bool stop = false;
  // Test directories (-d) the workers made (remote workers make a missing one as mdtest does;
  // local workers find the one made above), and the run's last tree removal, which removes
  // them again when the run removes what it made.
  std::set<std::string> made_by_workers;
  int last_tree_removal = -1;
  for (int k = 0; k < spec.jobs_size(); ++k) {
    if (plan[k].op == Op::TREE_REMOVE) last_tree_removal = k;
  }
  // Per iteration: the items each task has after a stonewalled directory / file creation
  // (0: all of them), which the later phases of that kind cover.
  uint64_t dir_limit = 0, file_limit = 0;
  bool stonewalled_before = false;        // the stonewall cut the previous phase short
  std::vector<uint64_t> stonewall_steps;  // its steps per task, in rank order
  uint64_t stonewall_pass_ns = 0;         // and how long it lasted
  // Phases follow each other on the worker's own barrier (RunSpec.jobs_in_sequence) when one
  // worker runs every task (mpirun on one node), as mdtest's ranks go from one phase to the
  // next within microseconds: a phase of a few milliseconds after a pause of a few (the
  // controller's prepare and start between phases: 6-8 ms on loopback) runs up to a quarter
  // slower — so does mdtest's, given such a pause (bench/mdtest_bench.sh; README). Phases
  // whose work depends on how the one before went (the stonewall's counts), a pause between
  // iterations (-p), --target-metrics (scraped per phase) and a test directory the worker may
  // make (known once it has prepared: the last tree removal removes it) end a sequence.
  // Several workers run a sequence too when this controller can release its phases to them
  // (RunSpec.jobs_released: each worker says when its tasks have ended a phase, and all start the
  // next at one instant the controller names once every worker has — mdtest's barrier between
  // phases, across hosts, a round trip instead of a prepare and a start).
  const bool across_workers = (*session)->relayed_workers() > 1;
  const bool sequences = ((*session)->relayed_workers() == 1 || (*session)->ReleasesJobs()) && o.phase.stonewall_ns() == 0 && !*target_metrics;
  constexpr size_t kMaxPhasesInSequence = 64;
  bool ran_before = false;
  for (int k = 0; k < spec.jobs_size() && !stop;) {
    // This step's phases, [k, next): each one's job as it runs.
    v1::RunSpec phase_spec;
    phase_spec.set_source("mdtest");
    std::vector<size_t> global;
    int next = k;
    for (; next < spec.jobs_size() && !stop; ++next) {
      const PlannedPhase& step = plan[next];
      const bool iteration_begins = next == 0 || plan[next - 1].iteration != step.iteration || plan[next - 1].tasks != step.tasks;
      if (!global.empty()) {
        if (!sequences || !(o.session.local() || ran_before) || (iteration_begins && o.pre_delay_s)) break;
        if (spec.jobs(next).numjobs() != spec.jobs(k).numjobs() || global.size() >= kMaxPhasesInSequence ||
            (global.size() + 1) * spec.jobs(k).numjobs() > kMaxThreadsPerRun) {
          break;
        }
      }
      if (iteration_begins) {
        dir_limit = 0;
        file_limit = status_file_items;
        if (o.pre_delay_s) std::this_thread::sleep_for(std::chrono::seconds(o.pre_delay_s));
      }
      const Op::Op op = step.op;
      const bool dir_op = op == Op::DIR_CREATE || op == Op::DIR_STAT || op == Op::DIR_RENAME || op == Op::DIR_REMOVE;
      const bool file_op = IsFilePhase(op);
      v1::JobSpec job = spec.jobs(next);
      if (const uint64_t limit = dir_op ? dir_limit : file_op ? file_limit : 0; limit > 0) job.mutable_metadata()->set_item_limit(limit);
      if (step.wear_out) {
        // Only after a pass the stonewall cut short: each task skips the steps it did.
        if (!stonewalled_before) continue;
        for (uint64_t done : stonewall_steps) job.mutable_metadata()->add_task_first_step(done);
        // --savePerOpDataCSV: mdtest's wear-out is part of the phase, its operations in the same
        // file, timed from the phase's start; here it follows the pass, in a run of its own.
        if (!job.metadata().per_op_csv().empty()) job.mutable_metadata()->set_per_op_time_offset_ns(stonewall_pass_ns);
      }
      if (job.metadata().item_limit() > 0 || step.wear_out) live.SetPhaseSteps(next, MdtestTree(job.metadata()).PhaseSteps());
      if (next == last_tree_removal && o.remove) {
        for (int d = 0; d < job.metadata().test_dirs_size(); ++d) {
          if (made_by_workers.count(job.metadata().test_dirs(d))) job.mutable_metadata()->add_remove_test_dirs(static_cast<uint32_t>(d));
        }
      }
      *phase_spec.add_jobs() = std::move(job);
      global.push_back(static_cast<size_t>(next));
    }
    if (global.empty() || stop) {
      k = next;
      continue;
    }
    phase_spec.set_jobs_in_sequence(global.size() > 1);
    phase_spec.set_jobs_released(global.size() > 1 && across_workers);
    // What the step adds at run time (item limits, where each task resumes, the sequence) is
    // held to the same rules as the plan was, here rather than at the worker's prepare.
    if (absl::Status valid = ValidateRunSpec(phase_spec); !valid.ok()) {
      report.add_problems(std::string(valid.message()));
      stop = true;
      break;
    }
    {
      v1::RunReport phase_report;
      *phase_report.mutable_workers() = run_report.workers();  // facts accumulate over phases
      const PhaseOutcome outcome = (*session)->RunPhase(phase_spec, global, absl::StrCat(run_id, "-i", plan[k].iteration, "-", k), &aggregator,
                                                        &phase_report);
      ran_before = true;
      if (*target_metrics) (*target_metrics)->PhaseEnded();
      for (const v1::PrepareResponse& prepared : (*session)->PrepareResponses()) {
        made_by_workers.insert(prepared.made_test_dirs().begin(), prepared.made_test_dirs().end());
      }
      *run_report.mutable_workers() = phase_report.workers();
      *report.mutable_workers() = run_report.workers();
      if (!outcome.prepared) {
        for (const auto& problem : phase_report.problems()) report.add_problems(problem);
        stop = true;
        break;
      }
      // The step's own problems (a start that failed, a lost worker, Ctrl-C) belong to the phase
      // it ended at: the first one that failed or was stopped (the phases of a sequence before
      // it ran whole), else its last. They come before those found while its results are read
      // (incomplete workers) — each once.
      const int phase_problems_seen = phase_report.problems_size();
      aggregator.FillReport(&phase_report);
      (*session)->ReportIncompleteWorkers(aggregator, &phase_report);
      size_t ended_at = global.size() - 1;
      for (size_t g = 0; g < ended_at; ++g) {
        for (const auto& w : phase_report.jobs(static_cast<int>(global[g])).workers()) {
          if (!w.stop_reason().empty() || !w.error().empty()) ended_at = std::min(ended_at, g);
        }
      }
      for (size_t g = 0; g < global.size() && !stop; ++g) {
        const int k = static_cast<int>(global[g]);
        const PlannedPhase& step = plan[k];
        const uint32_t iteration = step.iteration;
        const Op::Op op = step.op;
        const v1::JobSpec* job = &phase_spec.jobs(static_cast<int>(g));
        const v1::JobResult& result = phase_report.jobs(k);
        const bool interrupted = outcome.interrupted && g == ended_at;
        if (g == ended_at) {
          for (int i = 0; i < phase_problems_seen; ++i) report.add_problems(phase_report.problems(i));
        }
        uint64_t items = 0, errors = 0;
        v1::LatencySummary latency;
        google::protobuf::RepeatedPtrField<v1::SlowRequest> slowest;
        // Operations on items that failed and were gone past (mdtest's WARNINGs) count among the
        // phase's items, as mdtest counts them, and among its errors; so do reads (-X) and
        // writes read back (--verify-write) whose data was not what was written (mdtest counts
        // them and goes on), the verified phases' errors (any other failure ends the run).
        const uint64_t failures = aggregator.ItemFailures(k);
        const bool verified = (op == Op::FILE_READ && o.phase.verify_read()) || (op == Op::FILE_CREATE && o.phase.verify_write());
        for (const auto& d : result.directions()) {
          if (d.direction() != "meta") continue;
          items = d.ops() - d.errors() + std::min(verified ? d.errors() : failures, d.errors());
          errors = d.errors();
          latency = d.latency();
          slowest = d.slowest();
        }
        const double seconds = static_cast<double>(result.elapsed_ns()) / 1e9;
        std::vector<uint64_t> per_task = aggregator.TaskItems(k);  // every worker's tasks, in rank order
        // -f/-l/-s: the tasks past this count sat the phase out (ranks step.tasks and up): not
        // theirs the stonewall's counts, the minimum and the mean.
        if (step.tasks > 0 && per_task.size() > step.tasks) per_task.resize(step.tasks);
        // The fewest and the most items a task has (0 and 0 when none reported).
        uint64_t fewest = 0, most = 0;
        if (!per_task.empty()) {
          const auto [low, high] = std::minmax_element(per_task.begin(), per_task.end());
          fewest = *low;
          most = *high;
        }
        v1::MdtestPhaseResult* p;
        auto add_item_failures = [&](v1::MdtestPhaseResult* p) {
          p->set_item_failures(p->item_failures() + failures);
          for (std::string& warning : aggregator.ItemWarnings(k)) p->add_item_warnings(std::move(warning));
        };
        if (step.wear_out && report.phases_size() > 0) {
          // Not counted in the phase's items and rate (the stonewall's); reported beside them.
          p = report.mutable_phases(report.phases_size() - 1);
          p->set_wear_out_items(items);
          p->set_wear_out_seconds(seconds);
          p->set_errors(p->errors() + errors);
          add_item_failures(p);
          stonewalled_before = false;
        } else {
          p = report.add_phases();
          p->set_iteration(iteration);
          p->set_tasks(step.tasks);
          p->set_operation(OperationName(op));
          p->set_items(items);
          p->set_errors(errors);
          add_item_failures(p);
          for (std::string& left : aggregator.IterationDirectoriesLeft(k)) {
            // mdtest warns and goes on; with --warningAsErrors it stops there.
            if (o.warnings_are_errors) report.add_problems(absl::StrCat("unable to remove directory ", left, " (an error with --warningAsErrors)"));
            p->add_iteration_directories_left(std::move(left));
          }
          // With verification on, a read (or a write read back) that completed with other data
          // than written is counted among the errors, and the run goes on (as mdtest's).
          if (verified) {
            report.set_verification_errors(report.verification_errors() + errors);
          }
          *p->mutable_latency() = latency;
          *p->mutable_slowest() = slowest;
          p->set_seconds(seconds);
          *p->mutable_workers() = result.workers();
          p->set_stonewalled(aggregator.Stonewalled(k));
          // mdtest's tree rates count one tree's directories, however many tasks made one (-u) and
          // however many copies its directory loops made; with directory loops its item rates
          // count -n per task, whatever the phase did (creation and removal -I in every directory
          // of every copy, the others -I per copy).
          const double counted = op == Op::TREE_CREATE || op == Op::TREE_REMOVE ? static_cast<double>(whole_tree.directory_count())
                                 : loops ? static_cast<double>(uint64_t{step.tasks} * whole_tree.items_per_task())
                                     : static_cast<double>(p->items());
          p->set_rate(p->seconds() > 0 ? counted / p->seconds() : 0);
          stonewalled_before = p->stonewalled();
          stonewall_steps = per_task;
          stonewall_pass_ns = result.elapsed_ns();
          if (p->stonewalled() && (op == Op::DIR_CREATE || op == Op::FILE_CREATE)) {
            // Creation evened out to the largest count: what later phases of this kind cover.
            (op == Op::DIR_CREATE ? dir_limit : file_limit) = most;
            // Tasks that already have that many need no wear-out.
            if (per_task.empty() || fewest == most) stonewalled_before = false;
          }
          if (op == Op::FILE_CREATE && o.phase.stonewall_ns() > 0 && !o.stonewall_status_file.empty() && !interrupted) {
            // mdtest's -x: after every file creation run with -W, stonewalled or not, the count
            // every task has (evened out to), for a later run without -C (IO500's phases).
            if (absl::Status saved = WriteFileAtomically(o.stonewall_status_file, absl::StrCat(most)); !saved.ok()) {
              report.add_problems(absl::StrCat("-x ", o.stonewall_status_file, ": ", saved.message()));
            }
          }
          if (p->stonewalled() && o.verbosity > 0) {
            live.PrintLine(absl::StrFormat("V-1: stonewall hit in %s: items per task min %d max %d", p->operation(), fewest, most));
          }
        }
        if (!per_task.empty() && !step.wear_out) {
          p->set_task_items_min(fewest);
          p->set_task_items_max(most);
          double sum = 0;
          for (uint64_t v : per_task) sum += static_cast<double>(v);
          p->set_task_items_mean(sum / static_cast<double>(per_task.size()));
          // Each task's own rate, of the tasks that ran the phase (-f/-l/-s: the first step.tasks).
          const std::vector<uint64_t> own_ns = aggregator.TaskElapsedNs(k);
          for (size_t t = 0; t < per_task.size() && t < own_ns.size() && t < step.tasks; ++t) {
            const double own = static_cast<double>(own_ns[t]) / 1e9;
            p->add_task_seconds(own);
            p->add_task_rates(own > 0 ? static_cast<double>(per_task[t]) / own : 0.0);
          }
        }
        if (o.verbosity > 0) {
          live.PrintLine(absl::StrFormat("V-1: iteration %d %-26s %10d items in %.3f s (%.1f items/s)%s", iteration, job->name(), items, seconds,
                                         seconds > 0 ? static_cast<double>(items) / seconds : 0.0, result.workers().empty() || !aggregator.Stonewalled(k) ? "" : ", stonewalled"));
        }
        for (const auto& w : result.workers()) {
          if (!w.error().empty()) report.add_problems(absl::StrCat(job->name(), " on ", w.worker(), ": ", w.error()));
        }
        if (g == ended_at) {
          for (int i = phase_problems_seen; i < phase_report.problems_size(); ++i) report.add_problems(phase_report.problems(i));
        }
        if (!report.problems().empty() || interrupted) {
          if (*target_metrics) (*target_metrics)->Finish(report.mutable_target_metrics());
          if (absl::Status logged = live.Finish(); !logged.ok()) report.add_problems(std::string(logged.message()));
          if (interrupted) report.add_problems("interrupted by the user: later phases were not run");
          // Remove what this iteration made, so nothing is left half-created. A run that made
          // nothing (no -C: it stats, reads or removes a tree an earlier run made) leaves the tree
          // as it is, as mdtest does: it is not this run's to remove.
          (*session)->ClearInterrupt();
          bool clean = true;
          for (const v1::RunSpec& planned_cleanup : o.create ? PlanCleanup(o, iteration) : std::vector<v1::RunSpec>{}) {
            absl::StatusOr<ResolvedRun> cleanup = ResolveRunSpec(planned_cleanup, RunPlacement{});
            if (!cleanup.ok()) {
              report.add_problems(std::string(cleanup.status().message()));
              clean = false;
              break;
            }
            RunAggregator cleanup_aggregator(cleanup->spec, (*session)->addresses());
            v1::RunReport cleanup_report;
            (*session)->RunPhase(cleanup->spec, {0}, absl::StrCat(run_id, "-cleanup-", static_cast<int>(cleanup->spec.jobs(0).metadata().op())),
                                 &cleanup_aggregator, &cleanup_report);
            cleanup_aggregator.FillReport(&cleanup_report);
            for (const auto& w : cleanup_report.jobs(0).workers()) clean &= w.error().empty();
          }
          if (o.create) {
            report.add_problems(clean ? absl::StrCat("cleanup after the ", interrupted ? "interruption" : "failure", " removed what the run had created")
                                      : absl::StrCat("cleanup after the ", interrupted ? "interruption" : "failure", " failed: items may be left under ",
                                                     absl::StrJoin(o.phase.test_dirs(), ", "), " (test-dir.", iteration, "-0)"));
          }
          stop = true;
          break;
        }
      }
    }
    k = next;
  }
  if (*target_metrics) (*target_metrics)->Finish(report.mutable_target_metrics());
  if (absl::Status logged = live.Finish(); !logged.ok()) report.add_problems(std::string(logged.message()));
  if (o.session.block_stages || o.session.profile) {
    // --block-stages and --profile over the whole command: every phase of every iteration.
    v1::RunReport blocks;
    *blocks.mutable_workers() = run_report.workers();
    aggregator.FillReport(&blocks);
    *report.mutable_block_devices() = blocks.block_devices();
    *report.mutable_block_intervals() = blocks.block_intervals();
    *report.mutable_profiles() = blocks.profiles();
  }
  SummaryRows(report, false, report.mutable_summary_rate());
  SummaryRows(report, true, report.mutable_summary_time());
  // The file system mdtest's "Path"/"FS" lines describe: the first test directory, as task 0's
  // worker found it when it prepared its first phase.
  if (report.workers_size() > 0) {
    for (const auto& t : report.workers(0).facts().targets()) {
      if (!o.phase.test_dirs().empty() && t.path() == o.phase.test_dirs(0)) *report.mutable_test_target() = t;
    }
  }
  // mdtest removes the test directory it made when the run had a removal phase (and leaves it,
  // with whatever is in it, otherwise).
  if (o.remove) {
    if (const std::string failed = remove_created(); !failed.empty() && report.problems().empty()) {
      report.add_problems(failed);
    }
  }
  report.set_finished_unix_ns(absl::ToUnixNanos(absl::Now()));

  *ran = true;
  return report.problems().empty() ? 0 : 1;
}

}  // namespace iofleet
