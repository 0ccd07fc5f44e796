#include "controller/command_session.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/atomic_file.h"
#include "common/transport_security.h"

namespace iofleet {

absl::StatusOr<SessionOptions> SessionOptionsFrom(const SessionFlags& flags, IntervalMetrics* metrics) {
  absl::StatusOr<TransportSecurity> security = LoadTransportSecurity(flags.token_file, flags.tls_cert, flags.tls_key, flags.tls_ca);
  if (!security.ok()) return security.status();
  return SessionOptions{.hosts = flags.hosts,
                        .listen = flags.listen,
                        .expect_workers = flags.expect_workers,
                        .slurm = flags.slurm,
                        .ssh_hosts = flags.ssh_hosts,
                        .ssh_command = flags.ssh_command,
                        .ssh_copy = flags.ssh_copy,
                        .ssh_worker = flags.ssh_worker,
                        .wait = flags.wait,
                        .local_workers = flags.local_workers,
                        .worker_binary = flags.worker_binary,
                        .interval = flags.interval,
                        .lease = flags.lease,
                        .security = *std::move(security),
                        .abort_on_worker_loss = flags.abort_on_worker_loss,
                        .block_stages = flags.block_stages,
                        .profile = flags.profile,
                        .metrics = metrics};
}

absl::StatusOr<CommandOutputs> CommandOutputs::Open(const SessionFlags& flags, const std::string& name, std::string prefix) {
  CommandOutputs outputs(flags, std::move(prefix));
  if (!flags.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<IntervalMetrics>> served = IntervalMetrics::Serve(flags.metrics_listen, "iofleet_cluster");
    if (!served.ok()) return served.status();
    outputs.metrics_ = *std::move(served);
    std::cerr << outputs.prefix_ << ": metrics on http://" << outputs.metrics_->address() << "/metrics\n";
  }
  outputs.interval_log_ = flags.interval_log;
  outputs.interval_csv_ = flags.interval_csv;
  if (flags.results_dir != "none" && !flags.results_dir.empty()) {
    absl::StatusOr<ResultsDirectory> created = ResultsDirectory::Create(flags.results_dir, absl::Now(), name);
    if (!created.ok()) return created.status();
    outputs.results_ = *std::move(created);
    if (outputs.interval_log_.empty()) outputs.interval_log_ = outputs.results_->PathOf("intervals.ndjson");
    if (outputs.interval_csv_.empty()) outputs.interval_csv_ = outputs.results_->PathOf("intervals.csv");
  }
  return outputs;
}

void CommandOutputs::Discard() {
  if (results_) results_->Discard();
  results_.reset();
}

int CommandOutputs::Finish(const std::string& rendered, const std::string& html, std::vector<std::pair<std::string, std::string>> files,
                           const std::vector<std::string>& problems, int exit_code) {
  if (results_) {
    ResultsDirectory::AddIntervalLogs(flags_.interval_log, flags_.interval_csv, &files);  // the ones sent elsewhere
    absl::StatusOr<ResultsDirectory::Saved> saved = results_->Complete(files, problems, exit_code);
    if (saved.ok()) std::cerr << prefix_ << ": results in " << saved->path << (saved->partial ? " (partial)" : "") << "\n";
    else std::cerr << prefix_ << ": results directory: " << saved.status().message() << "\n";
    results_.reset();
  }
  if (flags_.output_file.empty()) {
    std::fwrite(rendered.data(), 1, rendered.size(), stdout);
    std::fflush(stdout);
  } else if (absl::Status written = WriteFileAtomically(flags_.output_file, rendered); !written.ok()) {
    std::cerr << prefix_ << ": " << written.message() << "\n";
    exit_code = 1;
  }
  if (!flags_.html_report.empty()) {
    if (absl::Status written = WriteFileAtomically(flags_.html_report, html); !written.ok()) {
      std::cerr << prefix_ << ": " << written.message() << "\n";
      exit_code = 1;
    }
  }
  for (const std::string& problem : problems) std::cerr << prefix_ << ": " << problem << "\n";
  if (metrics_ != nullptr && flags_.metrics_hold > absl::ZeroDuration()) {
    // So that Prometheus's next scrape still sees the run's final figures.
    std::cerr << prefix_ << ": serving the final metrics for " << absl::FormatDuration(flags_.metrics_hold) << "\n";
    absl::SleepFor(flags_.metrics_hold);
  }
  return exit_code;
}

}  // namespace iofleet
