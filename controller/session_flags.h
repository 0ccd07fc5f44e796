// The options every command that runs workers shares — run, mdtest and compare: where the
// workers are and how to reach them, the session's timing, live telemetry and where results
// go. One table, one reader, one set of rules: a flag is added here once (the control plane's
// --listen and --expect-workers will be) and every command has it, checked the same way.
#ifndef IOFLEET_CONTROLLER_SESSION_FLAGS_H_
#define IOFLEET_CONTROLLER_SESSION_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/command_line.h"
#include "controller/target_metrics.h"

namespace iofleet {

struct SessionFlags {
  std::vector<std::string> hosts;  // --hosts and --hostfile, each HOST:PORT; empty: local workers
  // --listen ADDR --expect-workers N [--wait DURATION]: workers dial in (iofleet-worker --controller).
  std::string listen;
  int expect_workers = 0;
  absl::Duration wait = absl::Minutes(10);
  // --slurm: inside a Slurm allocation, one worker per node started with srun, dialling in.
  bool slurm = false;
  // --ssh HOSTS / --ssh-hostfile FILE: a worker started over ssh on each host, dialling in.
  std::vector<std::string> ssh_hosts;
  std::string ssh_command = "ssh";  // --ssh-command
  bool ssh_copy = false;            // --ssh-copy: send this controller's worker binary
  std::string ssh_worker = "iofleet-worker";  // --ssh-worker: its path on the hosts
  int local_workers = 2;           // --local-workers (only without hosts or --listen)
  std::string worker_binary;       // --worker-binary: the local workers' binary
  absl::Duration interval = absl::Seconds(1);  // --interval
  absl::Duration lease = absl::Seconds(5);     // --lease
  bool abort_on_worker_loss = false;           // --on-worker-loss=abort
  // Credentials towards remote workers, as paths (loaded where the session opens).
  std::string token_file, tls_cert, tls_key, tls_ca;
  bool quiet = false;                          // --quiet: no progress line
  double straggler_fraction = 0.5;             // --straggler-threshold
  std::string interval_log, interval_csv;      // --interval-log / --interval-csv FILE
  // --worker-intervals all|none: each worker's own lines in those logs; unset: all up to
  // kWorkerIntervalLinesAuto workers, none beyond (LiveViewOptions::worker_lines).
  std::optional<bool> worker_intervals;
  std::string metrics_listen;                  // --metrics-listen HOST:PORT
  absl::Duration metrics_hold;                 // --metrics-hold DURATION
  std::string results_dir = "results";         // --results-dir DIR|none
  std::string output_file;                     // --output FILE (written atomically)
  std::string html_report;                     // --report FILE.html
  // --target-metrics NAME=URL (repeatable): Prometheus endpoints of the system under test.
  std::vector<TargetMetricsEndpoint> target_metrics;
  // --block-stages: each worker traces the block devices under its targets (BPF; root).
  bool block_stages = false;
  // --profile: each worker host samples its CPUs' stacks (perf, 99 Hz) and counters.
  bool profile = false;

  // No hosts given and none dialling in: the controller starts local workers.
  bool local() const { return hosts.empty() && listen.empty() && !slurm && ssh_hosts.empty(); }
  // The controller starts the workers itself (local ones, or through srun or ssh): it names the
  // directories they may use.
  bool starts_workers() const { return local() || slurm || !ssh_hosts.empty(); }
};

// The shared options, for a command's table and its help.
const std::vector<OptionSpec>& SessionOptionSpecs();
// `command_options` followed by the shared ones.
std::vector<OptionSpec> WithSessionOptions(std::vector<OptionSpec> command_options);

// Reads the shared options from a parsed command line into `flags`. kInvalidArgument naming
// the option when a value is out of range or options contradict each other.
absl::Status ReadSessionFlags(const CommandLine& command_line, SessionFlags* flags);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_SESSION_FLAGS_H_
