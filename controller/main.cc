// iofleet: the controller CLI.
//   iofleet run JOBFILE [--hosts HOST:PORT,...] [--hostfile FILE] [--interval 1s]
//               [--output-format normal|json] [--output FILE]
#include <fstream>
#include <iostream>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/command_line.h"
#include "common/nearest_name.h"
#include "common/protocol_version.h"
#include "common/transport_security.h"
#include "common/units.h"
#include "controller/compare_command.h"
#include "controller/mdtest_command.h"
#include "controller/run_command.h"
#include "job/fio_job_file.h"
#include "job/fio_option_names.h"
#include "job/run_limits.h"

namespace iofleet {
namespace {

const std::vector<OptionSpec> kRunOptions = {
    {"hosts", true, true, "HOST:PORT,...", "workers to use (comma-separated; repeatable)"},
    {"hostfile", true, false, "FILE", "workers to use, one HOST:PORT per line (# comments)"},
    {"interval", true, false, "DURATION", "interval report length (default 1s)"},
    {"output-format", true, false, "FORMAT", "normal (default); json or json+ (fio's layout, iofleet's data under \"iofleet\"); iofleet-json"},
    {"output", true, false, "FILE", "write the report to FILE (atomically) instead of stdout"},
    {"local-workers", true, false, "N", "with no hosts: how many local workers to start (default 2)"},
    {"worker-binary", true, false, "PATH", "with no hosts: the iofleet-worker to start"},
    {"lease", true, false, "DURATION", "workers stop IO if the controller is silent this long (default 5s)"},
    {"directory", true, false, "DIR", "where jobs without directory= put their files (a path on the workers)"},
    {"keep-files", false, false, "", "with no hosts: keep the temporary job directory"},
    {"ignore-unsupported", false, false, "", "skip fio options iofleet does not implement (listed in the report)"},
    {"on-worker-loss", true, false, "continue|abort", "when a worker is lost: finish with the others (default) or stop all"},
    {"token-file", true, false, "FILE", "the shared token the workers require (their --token-file)"},
    {"tls-cert", true, false, "PEM", "mutual TLS: the controller's certificate (with --tls-key and --tls-ca)"},
    {"tls-key", true, false, "PEM", "mutual TLS: the controller's private key"},
    {"tls-ca", true, false, "PEM", "mutual TLS: the CA that signs the workers' certificates"},
    {"quiet", false, false, "", "no progress line while the run goes on"},
    {"straggler-threshold", true, false, "FRACTION", "progress line: name workers this far below the median throughput (default 0.5)"},
    {"interval-log", true, false, "FILE", "NDJSON: one line per interval, scope (cluster, job, worker) and direction, with histogram bins"},
    {"interval-csv", true, false, "FILE", "the same intervals as CSV (without the bins)"},
    {"report", true, false, "FILE.html", "also write a self-contained HTML report with charts"},
    {"results-dir", true, false, "DIR", "where each run's results directory goes (default ./results; none: no directory)"},
    {"metrics-listen", true, false, "HOST:PORT", "serve Prometheus /metrics with the cluster-wide figures during the run"},
    {"metrics-hold", true, false, "DURATION", "keep serving the final metrics this long after the run (for the last scrape)"},
    {"help", false, false, "", "show this help"},
};

constexpr char kUsage[] =
    "usage: iofleet run JOBFILE [options]\n"
    "       iofleet run --name=JOB --rw=randread --bs=4k ... [options]   (fio's command-line form)\n"
    "       iofleet mdtest [mdtest options] [--hosts ...]   (iofleet mdtest --help)\n"
    "       iofleet compare JOBFILE --target NAME=PATH --target NAME=PATH ...   (iofleet compare --help)\n"
    "       iofleet version\n"
    "\n"
    "Runs a fio-style job file on every worker at once and reports cluster-wide results.\n"
    "With no --hosts/--hostfile, starts local workers on 127.0.0.1 (jobs without directory=\n"
    "use a temporary directory, removed afterwards).\n\n";

absl::StatusOr<std::vector<std::string>> ReadHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read hostfile ", path));
  std::vector<std::string> hosts;
  std::string line;
  while (std::getline(in, line)) {
    std::string host(absl::StripAsciiWhitespace(line.substr(0, line.find('#'))));
    if (!host.empty()) hosts.push_back(host);
  }
  return hosts;
}

absl::Status CheckHost(const std::string& host) {
  const size_t colon = host.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(host.substr(colon + 1), &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("host '", host, "' is not HOST:PORT (e.g. node1:7420)"));
  }
  return absl::OkStatus();
}

int UsageError(absl::string_view message) {
  std::cerr << "iofleet: " << message << "\n(iofleet run --help shows the options)\n";
  return 2;
}

// Separates iofleet's own options from fio job options (`--rw=randread`), which fio accepts
// on its command line too. A --word that is neither is reported with the nearest of both.
absl::Status SplitArguments(const std::vector<std::string>& args, std::vector<std::string>* ours,
                            std::vector<std::string>* job_options) {
  std::vector<std::string> fio_names = KnownFioOptions();
  fio_names.insert(fio_names.end(), FioOptionNames().begin(), FioOptionNames().end());
  fio_names.push_back("name");
  auto known = [&](const std::string& name) {
    return std::find(fio_names.begin(), fio_names.end(), name) != fio_names.end() ||
           std::any_of(kRunOptions.begin(), kRunOptions.end(), [&](const OptionSpec& s) { return s.name == name; });
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    // fio takes every long option with one dash too (`fio -rw=write -bs=4k -name=x`), and that
    // is how fio lines circulate in runbooks: `-name[=value]` means `--name[=value]`.
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-') {
      const std::string name = arg.substr(1, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 1);
      if (!known(name)) {
        std::vector<std::string> all = fio_names;
        for (const OptionSpec& s : kRunOptions) all.push_back(s.name);
        return absl::InvalidArgumentError(absl::StrCat("unknown option ", arg.substr(0, arg.find('=')), DidYouMean(name, all, "-")));
      }
      arg = "-" + arg;
    }
    if (!absl::StartsWith(arg, "--") || arg == "--") {
      ours->push_back(arg);
      continue;
    }
    const std::string name = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    const auto spec = std::find_if(kRunOptions.begin(), kRunOptions.end(), [&](const OptionSpec& s) { return s.name == name; });
    if (spec != kRunOptions.end()) {
      ours->push_back(arg);
      if (spec->takes_value && arg.find('=') == std::string::npos && i + 1 < args.size()) ours->push_back(args[++i]);
    } else if (std::find(fio_names.begin(), fio_names.end(), name) != fio_names.end()) {
      job_options->push_back(arg);
    } else {
      std::vector<std::string> all = fio_names;
      for (const OptionSpec& s : kRunOptions) all.push_back(s.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown option --", name, DidYouMean(name, all, "--")));
    }
  }
  return absl::OkStatus();
}

int Run(const std::vector<std::string>& args) {
  std::vector<std::string> own_args;
  RunOptions options;
  if (absl::Status split = SplitArguments(args, &own_args, &options.job_options); !split.ok()) {
    return UsageError(split.message());
  }
  auto cl = ParseCommandLine(own_args, kRunOptions);
  if (!cl.ok()) return UsageError(cl.status().message());
  if (cl->Has("help")) {
    std::cout << kUsage << FormatOptionHelp(kRunOptions);
    return 0;
  }
  if (options.job_options.empty()) {
    if (cl->positional().size() != 1) return UsageError("iofleet run takes one job file, or fio job options (--name=JOB --rw=...)");
    options.job_file = cl->positional()[0];
  } else if (!cl->positional().empty()) {
    return UsageError("give either a job file or job options on the command line, not both");
  }
  for (const std::string& list : cl->GetAll("hosts")) {
    for (absl::string_view host : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      options.hosts.push_back(std::string(absl::StripAsciiWhitespace(host)));
    }
  }
  if (cl->Has("hostfile")) {
    auto hosts = ReadHostfile(cl->Get("hostfile"));
    if (!hosts.ok()) return UsageError(hosts.status().message());
    if (hosts->empty()) return UsageError(absl::StrCat("hostfile ", cl->Get("hostfile"), " lists no hosts"));
    options.hosts.insert(options.hosts.end(), hosts->begin(), hosts->end());
  }
  for (const std::string& host : options.hosts) {
    if (absl::Status s = CheckHost(host); !s.ok()) return UsageError(s.message());
  }
  if (cl->Has("interval")) {
    auto ns = ParseDurationNs(cl->Get("interval"));
    if (!ns.ok()) return UsageError("--interval must be a duration of at least 10ms (e.g. 1s, 500ms)");
    if (absl::Status s = CheckIntervalNs(*ns, "--interval"); !s.ok()) return UsageError(s.message());
    options.interval = absl::Nanoseconds(*ns);
  }
  if (cl->Has("lease")) {
    auto ns = ParseDurationNs(cl->Get("lease"));
    if (!ns.ok()) return UsageError("--lease must be a duration of at least 500ms");
    if (absl::Status s = CheckLeaseNs(*ns, "--lease"); !s.ok()) return UsageError(s.message());
    options.lease = absl::Nanoseconds(*ns);
  }
  if (cl->Has("local-workers")) {
    if (!options.hosts.empty()) return UsageError("--local-workers applies only without --hosts/--hostfile");
    auto local_workers = ParseLocalWorkers(cl->Get("local-workers"));
    if (!local_workers.ok()) return UsageError(local_workers.status().message());
    options.local_workers = *local_workers;
  }
  options.output_format = cl->Get("output-format", "normal");
  options.output_file = cl->Get("output");
  options.worker_binary = cl->Get("worker-binary");
  options.keep_files = cl->Has("keep-files");
  options.directory = cl->Get("directory");
  options.ignore_unsupported = cl->Has("ignore-unsupported");
  auto security = LoadTransportSecurity(cl->Get("token-file"), cl->Get("tls-cert"), cl->Get("tls-key"), cl->Get("tls-ca"));
  if (!security.ok()) return UsageError(security.status().message());
  options.security = *security;
  const std::string loss = cl->Get("on-worker-loss", "continue");
  if (loss != "continue" && loss != "abort") return UsageError("--on-worker-loss must be continue or abort");
  options.abort_on_worker_loss = loss == "abort";
  options.quiet = cl->Has("quiet");
  if (cl->Has("straggler-threshold")) {
    if (!absl::SimpleAtod(cl->Get("straggler-threshold"), &options.straggler_fraction) || options.straggler_fraction <= 0 ||
        options.straggler_fraction >= 1) {
      return UsageError("--straggler-threshold must be a fraction between 0 and 1 (e.g. 0.3: 30% below the median)");
    }
  }
  options.interval_log = cl->Get("interval-log");
  options.interval_csv = cl->Get("interval-csv");
  options.metrics_listen = cl->Get("metrics-listen");
  options.results_dir = cl->Get("results-dir", "results");
  options.html_report = cl->Get("report");
  if (cl->Has("metrics-hold")) {
    auto ns = ParseDurationNs(cl->Get("metrics-hold"));
    if (!ns.ok()) return UsageError("--metrics-hold must be a duration (e.g. 30s)");
    if (options.metrics_listen.empty()) return UsageError("--metrics-hold needs --metrics-listen");
    options.metrics_hold = absl::Nanoseconds(*ns);
  }
  return RunJob(options);
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage << "options of iofleet run:\n" << FormatOptionHelp(kRunOptions);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "run") return Run(args);
  if (command == "mdtest") return RunMdtest(args);
  if (command == "compare") return RunCompare(args);
  if (command == "version" || command == "--version") {
    std::cout << "iofleet " << kIofleetVersion << " (protocol " << kProtocolVersion << ", accepts workers from protocol "
              << kMinCompatibleProtocolVersion << ")\n";
    return 0;
  }
  return UsageError(absl::StrCat("unknown command '", command, "'", DidYouMean(command, {"run", "mdtest", "compare", "version", "help"})));
}

}  // namespace
}  // namespace iofleet

int main(int argc, char** argv) { return iofleet::Main(argc, argv); }
