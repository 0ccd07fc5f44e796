#include "controller/session_flags.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/units.h"
#include "job/run_limits.h"

namespace iofleet {
namespace {

absl::StatusOr<std::vector<std::string>> ReadHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read hostfile ", path));
  std::vector<std::string> hosts;
  std::string line;
  while (std::getline(in, line)) {
    std::string host(absl::StripAsciiWhitespace(line.substr(0, line.find('#'))));
    if (!host.empty()) hosts.push_back(host);
  }
  if (hosts.empty()) return absl::InvalidArgumentError(absl::StrCat("hostfile ", path, " lists no hosts"));
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

absl::StatusOr<absl::Duration> Duration(const CommandLine& cl, const std::string& name, absl::string_view rule) {
  auto ns = ParseDurationNs(cl.Get(name));
  if (!ns.ok()) return absl::InvalidArgumentError(absl::StrCat("--", name, " must be a duration", rule, " (e.g. 1s, 500ms), not '", cl.Get(name), "'"));
  return absl::Nanoseconds(*ns);
}

// The hosts of a list option (comma-separated, repeatable) and of its hostfile option, in
// that order, appended to `hosts`.
absl::Status ReadHostList(const CommandLine& cl, const char* list_option, const char* file_option, std::vector<std::string>* hosts) {
  for (const std::string& list : cl.GetAll(list_option)) {
    for (absl::string_view host : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
      hosts->push_back(std::string(absl::StripAsciiWhitespace(host)));
    }
  }
  if (cl.Has(file_option)) {
    absl::StatusOr<std::vector<std::string>> from_file = ReadHostfile(cl.Get(file_option));
    if (!from_file.ok()) return from_file.status();
    hosts->insert(hosts->end(), from_file->begin(), from_file->end());
  }
  return absl::OkStatus();
}

// --wait: how long workers that dial in (--listen, --slurm, --ssh) are waited for.
absl::Status ReadWait(const CommandLine& cl, SessionFlags* flags) {
  if (!cl.Has("wait")) return absl::OkStatus();
  absl::StatusOr<absl::Duration> wait = Duration(cl, "wait", " of at least 1s");
  if (!wait.ok()) return wait.status();
  if (*wait < absl::Seconds(1)) return absl::InvalidArgumentError("--wait must be at least 1s");
  flags->wait = *wait;
  return absl::OkStatus();
}

}  // namespace

const std::vector<OptionSpec>& SessionOptionSpecs() {
  static const std::vector<OptionSpec> kSpecs = {
      {"hosts", true, true, "HOST:PORT,...", "workers to use (comma-separated; repeatable)"},
      {"hostfile", true, false, "FILE", "workers to use, one HOST:PORT per line (# comments)"},
      {"listen", true, false, "HOST:PORT", "workers dial in here (iofleet-worker --controller HOST:PORT) instead of --hosts"},
      {"expect-workers", true, false, "N", "with --listen: start once N workers have dialled in"},
      {"ssh", true, true, "HOST,...", "start a worker on each host over ssh ([user@]host; repeatable); it dials back and leaves with the run"},
      {"ssh-hostfile", true, false, "FILE", "the same, one host per line (# comments)"},
      {"ssh-command", true, false, "COMMAND", "with --ssh: the ssh to use, with options (default ssh; e.g. \"ssh -F cluster_config\")"},
      {"ssh-copy", false, false, "", "with --ssh: send this controller's iofleet-worker to each host (else the installed one runs)"},
      {"ssh-worker", true, false, "PATH", "with --ssh: iofleet-worker's path on the hosts (default: found on PATH)"},
      {"slurm", false, false, "", "inside a Slurm allocation: start one worker per node (srun), numbered by SLURM_PROCID, stopped at the end"},
      {"wait", true, false, "DURATION", "with --listen, --slurm, --ssh: how long to wait for the workers to dial in (default 10m)"},
      {"local-workers", true, false, "N", "with no hosts: how many local workers to start (default 2)"},
      {"worker-binary", true, false, "PATH", "the iofleet-worker this controller starts (local workers, --slurm, --ssh-copy; default: beside iofleet)"},
      {"interval", true, false, "DURATION", "interval report length (default 1s)"},
      {"lease", true, false, "DURATION", "workers stop IO if the controller is silent this long (default 5s)"},
      {"on-worker-loss", true, false, "continue|abort", "when a worker is lost: finish with the others (default) or stop all"},
      {"token-file", true, false, "FILE", "the shared token the workers require (their --token-file)"},
      {"tls-cert", true, false, "PEM", "mutual TLS: the controller's certificate (with --tls-key and --tls-ca)"},
      {"tls-key", true, false, "PEM", "mutual TLS: the controller's private key"},
      {"tls-ca", true, false, "PEM", "mutual TLS: the CA that signs the workers' certificates"},
      {"quiet", false, false, "", "no progress line while the run goes on"},
      {"straggler-threshold", true, false, "FRACTION", "progress line: name workers this far below the median throughput (default 0.5)"},
      {"interval-log", true, false, "FILE", "NDJSON: one line per interval, scope (cluster, job, worker) and direction, with histogram bins"},
      {"interval-csv", true, false, "FILE", "the same intervals as CSV (without the bins)"},
      {"worker-intervals", true, false, "all|none", "each worker's own lines in the interval logs too (default: all with up to 32 workers, none beyond: 1,024 workers x 8 jobs write ~7 MB a second)"},
      {"metrics-listen", true, false, "HOST:PORT", "serve Prometheus /metrics with the cluster-wide figures during the run"},
      {"metrics-hold", true, false, "DURATION", "keep serving the final metrics this long after the run (for the last scrape)"},
      {"results-dir", true, false, "DIR", "where each run's results directory goes (default ./results; none: no directory)"},
      {"output", true, false, "FILE", "write the report to FILE (atomically) instead of stdout"},
      {"report", true, false, "FILE.html", "also write a self-contained HTML report with charts"},
      {"target-metrics", true, true, "NAME=URL", "scrape the system under test's Prometheus endpoint (JuiceFS --metrics, node exporter) at each interval boundary; repeatable"},
      {"profile", false, false, "", "sample every CPU's stack on each worker host during the run (perf at 99 Hz; root): a flame graph per host in the results and the HTML report, a differential one between two hosts or compare targets, and perf stat's IPC and cache misses where the kernel counts them"},
      {"block-stages", false, false, "", "trace the block devices under the targets on each worker host: per-interval Q2D (scheduler), D2C (device) and Q2C latencies, request sizes (BPF; the worker needs root)"},
  };
  return kSpecs;
}

std::vector<OptionSpec> WithSessionOptions(std::vector<OptionSpec> command_options) {
  command_options.insert(command_options.end(), SessionOptionSpecs().begin(), SessionOptionSpecs().end());
  return command_options;
}

absl::Status ReadSessionFlags(const CommandLine& cl, SessionFlags* flags) {
  if (absl::Status read = ReadHostList(cl, "hosts", "hostfile", &flags->hosts); !read.ok()) return read;
  for (const std::string& host : flags->hosts) {
    if (absl::Status s = CheckHost(host); !s.ok()) return s;
  }
  if (absl::Status read = ReadHostList(cl, "ssh", "ssh-hostfile", &flags->ssh_hosts); !read.ok()) return read;
  for (const std::string& host : flags->ssh_hosts) {
    if (host.empty() || host[0] == '-' || host.find_first_of(" \t'\"") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--ssh host '", host, "' is not a host name ([user@]host)"));
    }
  }
  for (const char* option : {"ssh-command", "ssh-copy", "ssh-worker"}) {
    if (cl.Has(option) && flags->ssh_hosts.empty()) return absl::InvalidArgumentError(absl::StrCat("--", option, " applies only with --ssh"));
  }
  if (!flags->ssh_hosts.empty()) {
    if (!flags->hosts.empty()) return absl::InvalidArgumentError("--ssh (workers started over ssh) and --hosts/--hostfile exclude each other");
    if (cl.Has("slurm")) return absl::InvalidArgumentError("--ssh and --slurm exclude each other: one way to start the workers");
    if (cl.Has("expect-workers")) return absl::InvalidArgumentError("--ssh starts one worker per host: --expect-workers does not apply");
    flags->ssh_command = cl.Get("ssh-command", "ssh");
    flags->ssh_copy = cl.Has("ssh-copy");
    flags->ssh_worker = cl.Get("ssh-worker", "iofleet-worker");
    if (flags->ssh_copy && cl.Has("ssh-worker")) return absl::InvalidArgumentError("--ssh-copy sends the worker: --ssh-worker does not apply");
    flags->listen = cl.Get("listen");
    if (absl::Status read = ReadWait(cl, flags); !read.ok()) return read;
  } else if (cl.Has("slurm")) {
    // The workers are the allocation's nodes, and they dial in (on --listen if given, else any
    // address and a free port): the controller knows how many and where.
    if (!flags->hosts.empty()) return absl::InvalidArgumentError("--slurm (workers on the allocation's nodes) and --hosts/--hostfile exclude each other");
    if (cl.Has("expect-workers")) return absl::InvalidArgumentError("--slurm starts one worker per node of the allocation: --expect-workers does not apply");
    flags->slurm = true;
    flags->listen = cl.Get("listen");
    if (absl::Status read = ReadWait(cl, flags); !read.ok()) return read;
  } else if (cl.Has("listen")) {
    if (!flags->hosts.empty()) return absl::InvalidArgumentError("--listen (workers dial in) and --hosts/--hostfile (the controller dials) exclude each other");
    flags->listen = cl.Get("listen");
    if (!cl.Has("expect-workers")) return absl::InvalidArgumentError("--listen needs --expect-workers N: how many workers to wait for");
    int n = 0;
    if (!absl::SimpleAtoi(cl.Get("expect-workers"), &n) || n < 1 || n > 100000) {
      return absl::InvalidArgumentError(absl::StrCat("--expect-workers must be a number from 1 to 100000, not '", cl.Get("expect-workers"), "'"));
    }
    flags->expect_workers = n;
    if (absl::Status read = ReadWait(cl, flags); !read.ok()) return read;
  } else if (cl.Has("expect-workers") || cl.Has("wait")) {
    return absl::InvalidArgumentError(absl::StrCat("--", cl.Has("expect-workers") ? "expect-workers" : "wait", " applies only with --listen"));
  }
  if (cl.Has("local-workers")) {
    if (!flags->local()) return absl::InvalidArgumentError("--local-workers applies only without --hosts/--hostfile/--listen/--slurm/--ssh");
    absl::StatusOr<int> local_workers = ParseLocalWorkers(cl.Get("local-workers"));
    if (!local_workers.ok()) return local_workers.status();
    flags->local_workers = *local_workers;
  }
  flags->worker_binary = cl.Get("worker-binary");
  if (cl.Has("interval")) {
    absl::StatusOr<absl::Duration> interval = Duration(cl, "interval", " of at least 10ms");
    if (!interval.ok()) return interval.status();
    if (absl::Status s = CheckIntervalNs(absl::ToInt64Nanoseconds(*interval), "--interval"); !s.ok()) return s;
    flags->interval = *interval;
  }
  if (cl.Has("lease")) {
    absl::StatusOr<absl::Duration> lease = Duration(cl, "lease", " of at least 500ms");
    if (!lease.ok()) return lease.status();
    if (absl::Status s = CheckLeaseNs(absl::ToInt64Nanoseconds(*lease), "--lease"); !s.ok()) return s;
    flags->lease = *lease;
  }
  const std::string loss = cl.Get("on-worker-loss", "continue");
  if (loss != "continue" && loss != "abort") return absl::InvalidArgumentError("--on-worker-loss must be continue or abort");
  flags->abort_on_worker_loss = loss == "abort";
  flags->token_file = cl.Get("token-file");
  flags->tls_cert = cl.Get("tls-cert");
  flags->tls_key = cl.Get("tls-key");
  flags->tls_ca = cl.Get("tls-ca");
  flags->quiet = cl.Has("quiet");
  if (cl.Has("straggler-threshold")) {
    if (!absl::SimpleAtod(cl.Get("straggler-threshold"), &flags->straggler_fraction) || flags->straggler_fraction <= 0 ||
        flags->straggler_fraction >= 1) {
      return absl::InvalidArgumentError("--straggler-threshold must be a fraction between 0 and 1 (e.g. 0.3: 30% below the median)");
    }
  }
  flags->interval_log = cl.Get("interval-log");
  flags->interval_csv = cl.Get("interval-csv");
  if (cl.Has("worker-intervals")) {
    const std::string value = cl.Get("worker-intervals");
    if (value != "all" && value != "none") {
      return absl::InvalidArgumentError(absl::StrCat("--worker-intervals must be all or none, not '", value, "'"));
    }
    flags->worker_intervals = value == "all";
  }
  flags->metrics_listen = cl.Get("metrics-listen");
  if (cl.Has("metrics-hold")) {
    absl::StatusOr<absl::Duration> hold = Duration(cl, "metrics-hold", "");
    if (!hold.ok()) return hold.status();
    if (flags->metrics_listen.empty()) return absl::InvalidArgumentError("--metrics-hold needs --metrics-listen");
    flags->metrics_hold = *hold;
  }
  flags->results_dir = cl.Get("results-dir", "results");
  flags->output_file = cl.Get("output");
  flags->html_report = cl.Get("report");
  flags->block_stages = cl.Has("block-stages");
  flags->profile = cl.Has("profile");
  for (const std::string& value : cl.GetAll("target-metrics")) {
    absl::StatusOr<TargetMetricsEndpoint> endpoint = ParseTargetMetricsFlag(value);
    if (!endpoint.ok()) return endpoint.status();
    for (const TargetMetricsEndpoint& other : flags->target_metrics) {
      if (other.name == endpoint->name) return absl::InvalidArgumentError(absl::StrCat("--target-metrics: the name '", other.name, "' is given twice"));
    }
    flags->target_metrics.push_back(*std::move(endpoint));
  }
  return absl::OkStatus();
}

}  // namespace iofleet
