#include "controller/compare_command.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/units.h"
#include "controller/block_stages.h"
#include "controller/host_profiles.h"
#include "controller/cluster_session.h"
#include "controller/mdtest_command.h"
#include "controller/results_dir.h"
#include "controller/direction_summary.h"
#include "controller/run_command.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "job/fio_job_file.h"
#include "job/run_limits.h"
#include "job/run_resolution.h"

namespace iofleet {
namespace {

constexpr char kHelp[] =
    "usage: iofleet compare JOBFILE --target NAME=PATH|URL [--target NAME=PATH|URL ...] [--hosts H:P,...]\n"
    "                       [--repeat N] [--output-format normal|json] [--output FILE] [--results-dir DIR|none] [--quiet]\n"
    "       iofleet compare --mdtest \"-n 1000 -F ...\" --target NAME=PATH ... (mdtest options without -d)\n"
    "       iofleet compare RESULT.json RESULT.json ... [--force]\n"
    "Runs the same job on each target in turn with the same workers (interleaved with --repeat)\n"
    "and prints one table with each target's ratio to the first. An nfs://server/export/dir target\n"
    "runs the job on the nfs engine (userspace NFSv3 client, no mount, no client cache).\n"
    "Every run's results (result.json, reports, interval logs, host facts) and the comparison go to\n"
    "results/<UTC time>-compare-<job>/<target>/<run>/ (--results-dir elsewhere, none for no directory).\n";

int Usage(absl::string_view message) {
  std::cerr << "iofleet compare: " << message << "\n(iofleet compare --help)\n";
  return 2;
}

// One metric sample per target and repeat: metrics[name][target] = samples.
using Samples = std::map<std::string, std::map<std::string, std::vector<double>>>;

void Add(Samples* samples, std::vector<std::string>* order, const std::string& target,
         const std::vector<std::pair<std::string, double>>& metrics) {
  for (const auto& [name, value] : metrics) {
    if (!samples->count(name)) order->push_back(name);
    (*samples)[name][target].push_back(value);
  }
}

std::string UnitOf(const std::string& name) {
  if (absl::EndsWith(name, "IOPS")) return "ops/s";
  if (absl::EndsWith(name, "bandwidth")) return "bytes/s";
  if (absl::EndsWith(name, "rate")) return "items/s";
  if (absl::EndsWith(name, "request size")) return "bytes";
  if (absl::EndsWith(name, "sequential")) return "%";
  return "ns";
}

std::string Show(double value, const std::string& unit) {
  if (unit == "bytes/s") return FormatBandwidth(value);
  if (unit == "ns") return FormatDurationNs(value);
  if (unit == "bytes") return FormatBytes(value);
  if (unit == "%") return absl::StrFormat("%.0f%%", value);
  return FormatCount(value);
}

// A result file: iofleet's JSON (fio layout with "iofleet", or iofleet-json) or mdtest's.
absl::Status ReadResult(const std::string& path, v1::RunReport* run, v1::MdtestReport* mdtest, bool* is_mdtest) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::Struct json;
  if (!google::protobuf::util::JsonStringToMessage(text.str(), &json).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a JSON document"));
  }
  google::protobuf::util::JsonParseOptions lenient;
  lenient.ignore_unknown_fields = true;
  std::string native;
  if (json.fields().count("phases")) {
    *is_mdtest = true;
    if (!google::protobuf::util::JsonStringToMessage(text.str(), mdtest, lenient).ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": not an iofleet mdtest result"));
    return absl::OkStatus();
  }
  *is_mdtest = false;
  if (auto it = json.fields().find("iofleet"); it != json.fields().end()) {
    (void)google::protobuf::util::MessageToJsonString(it->second, &native);
  } else {
    native = text.str();
  }
  if (!google::protobuf::util::JsonStringToMessage(native, run, lenient).ok() || run->jobs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an iofleet result (run with --output-format json)"));
  }
  return absl::OkStatus();
}

// What must match for two results to be comparable.
std::string Identity(const v1::RunReport& r) {
  std::vector<std::string> jobs;
  for (const auto& j : r.jobs()) jobs.push_back(absl::StrCat(j.name(), ":", j.rw(), ":", j.bs(), ":", j.ioengine(), ":", j.iodepth(), ":", j.numjobs()));
  return absl::StrJoin(jobs, ",");
}
std::string Identity(const v1::MdtestReport& r) {
  std::vector<std::string> ops;
  for (const auto& row : r.summary_rate()) ops.push_back(row.operation());
  return absl::StrCat(r.tasks(), " tasks x ", r.items_per_task(), " items: ", absl::StrJoin(ops, ","));
}

}  // namespace

std::string RenderCompareText(const v1::CompareReport& report) {
  std::string out = absl::StrCat("Comparing ", report.what(), " on ", report.targets_size(), " targets",
                                 report.repeat() > 1 ? absl::StrCat(" (", report.repeat(), " runs each, interleaved; median [min-max])") : "",
                                 "\n\n");
  absl::StrAppendFormat(&out, "%-28s", "metric");
  for (const auto& t : report.targets()) absl::StrAppendFormat(&out, " %-32s", t);
  absl::StrAppend(&out, "\n");
  for (const auto& metric : report.metrics()) {
    absl::StrAppendFormat(&out, "%-28s", metric.name());
    for (int i = 0; i < metric.entries_size(); ++i) {
      const auto& e = metric.entries(i);
      // A metric some runs did not have (a device no write reached): never shown as a zero.
      if (e.samples().empty()) {
        absl::StrAppendFormat(&out, " %-32s", "-");
        continue;
      }
      std::string cell = Show(e.median(), metric.unit());
      if (report.repeat() > 1) absl::StrAppend(&cell, " [", Show(e.min(), metric.unit()), "-", Show(e.max(), metric.unit()), "]");
      if (report.repeat() > 1 && e.samples_size() < static_cast<int>(report.repeat())) absl::StrAppend(&cell, " (", e.samples_size(), " of ", report.repeat(), " runs)");
      if (i > 0 && !metric.entries(0).samples().empty()) {
        absl::StrAppend(&cell, absl::StrFormat(" %.2fx", e.ratio()), report.repeat() > 1 && !e.significant() ? " (n.s.)" : "");
      }
      absl::StrAppendFormat(&out, " %-32s", cell);
    }
    absl::StrAppend(&out, "\n");
  }
  if (report.repeat() > 1) absl::StrAppend(&out, "\n(n.s.): within the spread of the runs, not a significant difference\n");
  for (const auto& p : report.problems()) absl::StrAppend(&out, "PROBLEM: ", p, "\n");
  return out;
}

std::vector<std::pair<std::string, double>> RunMetrics(const v1::RunReport& report) {
  std::vector<std::pair<std::string, double>> metrics;
  auto add = [&metrics](const std::string& prefix, const v1::DirectionResult& d) {
    const v1::LatencySummary& lat = d.has_completion_latency() ? d.completion_latency() : d.latency();
    const std::string name = prefix + d.direction();
    metrics.push_back({absl::StrCat(name, " IOPS"), d.iops()});
    if (d.direction() != "sync") metrics.push_back({absl::StrCat(name, " bandwidth"), d.bandwidth_bytes_per_sec()});
    metrics.push_back({absl::StrCat(name, " mean latency"), d.latency().mean_ns()});
    for (double p : {50.0, 99.0, 99.9}) {
      metrics.push_back({absl::StrCat(name, " p", p == 99.9 ? "99.9" : absl::StrCat(static_cast<int>(p))), static_cast<double>(PercentileValue(lat, p))});
    }
    metrics.push_back({absl::StrCat(name, " max latency"), static_cast<double>(d.latency().max_ns())});
  };
  // One job: the cluster's figures. Several (a 4 KiB fsync job, then a 16 MiB one): each job's
  // own, named — their sum would mix what they measure.
  if (report.jobs_size() <= 1) {
    for (const auto& d : report.cluster()) add("", d);
  } else {
    for (const auto& job : report.jobs()) {
      for (const auto& d : job.directions()) add(absl::StrCat(job.name(), " "), d);
    }
  }
  // --block-stages: where the time went below the file system, every traced device of every
  // host merged per direction.
  google::protobuf::RepeatedPtrField<v1::BlockStageDirection> block;
  for (const v1::BlockDeviceStages& device : report.block_devices()) MergeBlockDirections(device.directions(), &block);
  for (const v1::BlockStageDirection& d : block) {
    if (d.request_bytes().count() == 0) continue;
    const std::string name = absl::StrCat("block ", d.direction());
    for (const auto& [stage, h] : {std::pair<const char*, const v1::LatencyHistogramProto*>{"Q2D", &d.queue_to_dispatch()},
                                   {"D2C", &d.dispatch_to_complete()}, {"Q2C", &d.queue_to_complete()}}) {
      if (h->count() == 0) continue;
      const std::vector<uint64_t> p = ValuesAtPercentiles(*h, {50, 99});
      metrics.push_back({absl::StrCat(name, " ", stage, " p50"), static_cast<double>(p[0])});
      metrics.push_back({absl::StrCat(name, " ", stage, " p99"), static_cast<double>(p[1])});
    }
    if (d.direction() == "flush") continue;  // no data: size and sequentiality say nothing
    metrics.push_back({absl::StrCat(name, " request size"), static_cast<double>(d.request_bytes().sum_ns()) / static_cast<double>(d.request_bytes().count())});
    metrics.push_back({absl::StrCat(name, " sequential"), 100.0 * static_cast<double>(d.sequential()) / static_cast<double>(d.request_bytes().count())});
  }
  return metrics;
}

std::vector<std::pair<std::string, double>> MdtestMetrics(const v1::MdtestReport& report) {
  std::vector<std::pair<std::string, double>> metrics;
  for (const auto& row : report.summary_rate()) metrics.push_back({absl::StrCat(row.operation(), " rate"), row.mean()});
  for (const auto& row : report.summary_rate()) {
    for (const auto& p : report.phases()) {
      if (p.operation() == row.operation()) {
        metrics.push_back({absl::StrCat(row.operation(), " p99"), static_cast<double>(PercentileValue(p.latency(), 99))});
        break;
      }
    }
  }
  return metrics;
}

void Summarize(v1::CompareReport* report) {
  for (auto& metric : *report->mutable_metrics()) {
    for (auto& e : *metric.mutable_entries()) {
      std::vector<double> v(e.samples().begin(), e.samples().end());
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      e.set_min(v.front());
      e.set_max(v.back());
      e.set_median(v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
    }
    if (metric.entries().empty()) continue;
    const auto& first = metric.entries(0);
    for (auto& e : *metric.mutable_entries()) {
      e.set_ratio(first.median() != 0 ? e.median() / first.median() : 0);
      e.set_significant(e.min() > first.max() || e.max() < first.min());
    }
  }
}

namespace {

// compare's own options, then those every command shares.
const std::vector<OptionSpec>& CompareOptions() {
  static const std::vector<OptionSpec> kOptions = WithSessionOptions({
      {"target", true, true, "NAME=PATH|URL", "a target to run on (twice or more; repeatable)"},
      {"repeat", true, false, "N", "runs per target, interleaved (default 1)"},
      {"mdtest", true, false, "\"OPTIONS\"", "compare an mdtest (its options without -d) instead of a job file"},
      {"output-format", true, false, "normal|json", "the table's format (default normal)"},
      {"force", false, false, "", "compare result files of different jobs"},
      {"help", false, false, "", "show this help"},
  });
  return kOptions;
}

// Shared options whose output belongs to each run (its results directory has them).
constexpr const char* kPerRunOptions[] = {"report", "interval-log", "interval-csv", "metrics-listen", "metrics-hold"};

// The help: compare's options without the per-run ones.
std::string OptionHelp() {
  std::vector<OptionSpec> shown;
  for (const OptionSpec& o : CompareOptions()) {
    if (std::find(std::begin(kPerRunOptions), std::end(kPerRunOptions), o.name) == std::end(kPerRunOptions)) shown.push_back(o);
  }
  return FormatOptionHelp(shown);
}

// --target NAME=PATH|URL: a name fit for a directory, an absolute path or an nfs:// URL.
absl::Status AddTarget(const std::string& value, std::vector<std::pair<std::string, std::string>>* targets) {
  const size_t sep = value.find('=');
  if (sep == std::string::npos || sep == 0) return absl::InvalidArgumentError(absl::StrCat("--target ", value, ": use NAME=PATH"));
  const std::string path = value.substr(sep + 1);
  if (absl::Status usable = CheckTarget(path); !usable.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--target ", value, ": ", usable.message()));
  }
  const std::string target = value.substr(0, sep);
  // The name becomes a directory in the results: letters, digits, '.', '_' and '-'.
  if (target.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != std::string::npos || target == "." ||
      target == "..") {
    return absl::InvalidArgumentError(absl::StrCat("--target ", value, ": the name '", target, "' may hold only letters, digits, '.', '_' and '-'"));
  }
  for (const auto& [other, unused] : *targets) {
    if (other == target) return absl::InvalidArgumentError(absl::StrCat("--target ", value, ": the name '", target, "' is given twice"));
  }
  targets->push_back({target, path});
  return absl::OkStatus();
}

}  // namespace

int RunCompare(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "-h") != args.end()) {
    std::cout << kHelp << OptionHelp();
    return 0;
  }
  absl::StatusOr<CommandLine> cl = ParseCommandLine(args, CompareOptions());
  if (!cl.ok()) return Usage(cl.status().message());
  if (cl->Has("help")) {
    std::cout << kHelp << OptionHelp();
    return 0;
  }
  SessionFlags session;
  if (absl::Status read = ReadSessionFlags(*cl, &session); !read.ok()) return Usage(read.message());
  // Each run's report, interval logs and metrics have their place in the results directory.
  for (const char* per_run : kPerRunOptions) {
    if (cl->Has(per_run)) return Usage(absl::StrCat("--", per_run, " does not apply to compare: each run keeps its own in the results directory"));
  }
  std::vector<std::pair<std::string, std::string>> targets;  // name, path
  for (const std::string& value : cl->GetAll("target")) {
    if (absl::Status added = AddTarget(value, &targets); !added.ok()) return Usage(added.message());
  }
  const std::vector<std::string>& positional = cl->positional();
  int repeat = 1;
  if (cl->Has("repeat") && (!absl::SimpleAtoi(cl->Get("repeat"), &repeat) || repeat < 1 || repeat > 100)) return Usage("--repeat must be from 1 to 100");
  const std::string mdtest_options = cl->Get("mdtest");
  const std::string output_format = cl->Get("output-format", "normal");
  if (output_format != "normal" && output_format != "json") return Usage("--output-format must be normal or json");
  const bool force = cl->Has("force");
  // The mdtest to compare, typed once: every target runs it with its own -d.
  MdtestOptions mdtest_test;
  if (!mdtest_options.empty() && !targets.empty()) {
    std::vector<std::string> md_args = absl::StrSplit(mdtest_options, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    md_args.insert(md_args.end(), {"-d", targets[0].second});
    if (absl::Status parsed = ParseMdtestArgs(md_args, &mdtest_test); !parsed.ok()) return Usage(absl::StrCat("--mdtest: ", parsed.message()));
  }

  v1::CompareReport report;
  std::vector<std::pair<std::string, v1::HostProfile>> first_profiles;  // --profile: per target
  report.set_repeat(static_cast<uint32_t>(repeat));
  Samples samples;
  std::vector<std::string> order;
  int exit_code = 0;
  const bool files_mode = targets.empty() && mdtest_options.empty();
  // Runs on targets leave their results (and the comparison) in a results directory.
  std::optional<ResultsDirectory> results;
  bool any_ran = false;
  if (files_mode) {
    // Earlier results, compared as they are.
    if (positional.size() < 2) return Usage("give a job file and --target NAME=PATH twice or more, or two or more result files");
    report.set_repeat(1);
    std::string identity;
    for (const std::string& path : positional) {
      v1::RunReport run;
      v1::MdtestReport md;
      bool is_mdtest = false;
      if (absl::Status read = ReadResult(path, &run, &md, &is_mdtest); !read.ok()) return Usage(read.message());
      const std::string id = is_mdtest ? Identity(md) : Identity(run);
      if (identity.empty()) identity = id;
      if (id != identity && !force) {
        return Usage(absl::StrCat(path, " ran a different job (", id, " vs ", identity, "); --force compares anyway"));
      }
      report.add_targets(path);
      Add(&samples, &order, path, is_mdtest ? MdtestMetrics(md) : RunMetrics(run));
    }
    report.set_what(identity);
  } else {
    if (targets.size() < 2) return Usage("give two or more --target NAME=PATH");
    const bool mdtest = !mdtest_options.empty();
    if (!mdtest && positional.size() != 1) return Usage("give one job file (or --mdtest \"options\")");
    report.set_what(mdtest ? absl::StrCat("mdtest ", mdtest_options) : positional[0]);
    for (const auto& [name, path] : targets) report.add_targets(name);
    v1::RunSpec spec;
    std::string job_text;
    if (!mdtest) {
      auto parsed = ParseFioJobFile(positional[0]);
      if (!parsed.ok()) {
        std::cerr << "iofleet compare: " << parsed.status().message() << "\n";
        return 2;
      }
      spec = *parsed;
      for (const auto& job : spec.jobs()) {
        if (job.filename().find('/') != std::string::npos) return Usage(absl::StrCat("job '", job.name(), "' names an absolute filename; compare puts each target's files in its path"));
      }
      std::ifstream in(positional[0]);
      std::stringstream text;
      text << in.rdbuf();
      job_text = text.str();
    }
    if (session.results_dir != "none" && !session.results_dir.empty()) {
      auto created = ResultsDirectory::Create(
          session.results_dir, absl::Now(), absl::StrCat("compare-", mdtest ? "mdtest" : std::filesystem::path(positional[0]).stem().string()));
      if (!created.ok()) return Usage(created.status().message());
      results = std::move(*created);
    }
    // A run that could not start ends the comparison; what ran is kept, marked partial.
    auto stop_early = [&](int code, const std::string& why) {
      if (!results) return code;
      if (!any_ran) {
        results->Discard();
        return code;
      }
      auto saved = results->Complete({}, {why}, code);
      if (saved.ok()) std::cerr << "iofleet compare: results so far in " << saved->path << " (partial)\n";
      return code;
    };
    bool interrupted = false;
    for (int r = 0; r < repeat && !interrupted; ++r) {
      for (const auto& [name, path] : targets) {  // interleaved: A B A B ...
        std::cerr << "iofleet compare: run " << r + 1 << " of " << repeat << " on " << name << " (" << path << ")\n";
        // This run's files: <target>/<run>/ in the results directory.
        const std::string run_dir = absl::StrCat(name, "/", r + 1);
        std::string interval_log, interval_csv;
        if (results) {
          std::error_code error;
          std::filesystem::create_directories(results->PathOf(run_dir), error);
          if (error) return stop_early(1, absl::StrCat("cannot make ", results->PathOf(run_dir), ": ", error.message()));
          interval_log = results->PathOf(run_dir + "/intervals.ndjson");
          interval_csv = results->PathOf(run_dir + "/intervals.csv");
        }
        std::vector<std::pair<std::string, std::string>> files;
        if (mdtest) {
          MdtestOptions target_mdtest = mdtest_test;
          target_mdtest.phase.clear_test_dirs();
          target_mdtest.phase.add_test_dirs(path);
          target_mdtest.session = session;
          target_mdtest.session.interval_log = interval_log;
          target_mdtest.session.interval_csv = interval_csv;
          const std::string command_line = absl::StrCat("iofleet mdtest ", mdtest_options, " -d ", path);
          v1::MdtestReport md;
          bool ran = false;
          v1::RunSpec resolved;
          const int code =
              ExecuteMdtest(target_mdtest, command_line, &md, &ran, nullptr, &resolved);
          if (!ran) return stop_early(code, absl::StrCat("run ", r + 1, " on ", name, " did not start: later runs were not done"));
          files = MdtestResultFiles(command_line, resolved, md);
          if (r == 0 && md.profiles_size() > 0) first_profiles.emplace_back(name, md.profiles(0));
          if (code != 0) {
            exit_code = 1;
            for (const auto& p : md.problems()) report.add_problems(absl::StrCat(name, ": ", p));
          }
          Add(&samples, &order, name, MdtestMetrics(md));
        } else {
          RunOptions options;
          options.session = session;
          options.session.interval_log = interval_log;
          options.session.interval_csv = interval_csv;
          options.target = path;
          if (results) options.fio_log_directory = results->PathOf(run_dir + "/fio-logs");
          v1::RunReport run;
          const RunResult result = ExecuteRun(spec, options, &run);
          if (!result.ran) return stop_early(result.exit_code, absl::StrCat("run ", r + 1, " on ", name, " did not start: later runs were not done"));
          files = RunResultFiles(job_text, result.spec, run);
          // --profile: each target's first profile of its first run, for the differential graph.
          if (r == 0 && run.profiles_size() > 0) first_profiles.emplace_back(name, run.profiles(0));
          if (result.exit_code != 0) {
            exit_code = 1;
            for (const auto& p : run.problems()) report.add_problems(absl::StrCat(name, ": ", p));
          }
          Add(&samples, &order, name, RunMetrics(run));
        }
        any_ran = true;
        if (results) {
          for (const auto& [file, text] : files) {
            if (absl::Status written = results->Write(run_dir + "/" + file, text); !written.ok()) {
              report.add_problems(std::string(written.message()));
              exit_code = 1;
            }
          }
        }
        if (UserInterrupted()) {
          report.add_problems(absl::StrCat("interrupted by the user during run ", r + 1, " on ", name, ": later runs were not done"));
          exit_code = 1;
          interrupted = true;
          break;
        }
      }
    }
  }
  for (const std::string& metric_name : order) {
    v1::CompareMetric* metric = report.add_metrics();
    metric->set_name(metric_name);
    metric->set_unit(UnitOf(metric_name));
    for (const std::string& target : report.targets()) {
      v1::CompareEntry* e = metric->add_entries();
      e->set_target(target);
      for (double v : samples[metric_name][target]) e->add_samples(v);
    }
  }
  Summarize(&report);
  // The table as text and as one JSON document: printed as asked, both kept in the results.
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  const std::string text = RenderCompareText(report);
  const std::string& rendered = output_format == "json" ? json : text;
  if (results) {
    std::vector<std::pair<std::string, std::string>> files = {{"command.txt", absl::StrCat("iofleet compare ", absl::StrJoin(args, " "), "\n")},
                                                              {"compare.txt", text},
                                                              {"compare.json", json}};
    // --profile: where the CPU time moved between the first target and each other one.
    for (size_t t = 1; t < first_profiles.size(); ++t) {
      const auto& [before_name, before] = first_profiles[0];
      const auto& [after_name, after] = first_profiles[t];
      files.emplace_back(absl::StrCat("flamegraph-diff-", after_name, "-vs-", before_name, ".svg"),
                         DifferentialFlameGraph(absl::StrCat(after_name, " against ", before_name, " (first run of each, ", after.host(), ")"), before, after));
    }
    auto saved = results->Complete(files,
                                   {report.problems().begin(), report.problems().end()}, exit_code);
    if (saved.ok()) std::cerr << "iofleet compare: results in " << saved->path << (saved->partial ? " (partial)" : "") << "\n";
    else std::cerr << "iofleet compare: results directory: " << saved.status().message() << "\n";
  }
  if (session.output_file.empty()) {
    std::cout << rendered;
  } else if (absl::Status written = WriteFileAtomically(session.output_file, rendered); !written.ok()) {
    std::cerr << "iofleet compare: " << written.message() << "\n";
    return 1;
  }
  return exit_code;
}

}  // namespace iofleet
