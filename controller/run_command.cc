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
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/protocol_version.h"
#include "controller/local_workers.h"
#include "controller/report_fio_json.h"
#include "controller/report_text.h"
#include "controller/run_aggregator.h"
#include "controller/worker_client.h"
#include "job/fio_job_file.h"
#include "job/job_phases.h"
#include "job/job_validation.h"

namespace iofleet {
namespace {

volatile sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

std::string NewRunId() {
  std::random_device random;
  return absl::StrCat("r-", absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), "-",
                      absl::StrFormat("%06x", random() & 0xffffff));
}

// Runs fn(i) for every worker in parallel and waits for all.
template <typename Fn>
void ForEachWorker(size_t count, Fn fn) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < count; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

// Writes `text` to `path` atomically: a temporary file beside it, then rename.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = absl::StrCat(path, ".tmp-", ::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", temporary));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return absl::ErrnoToStatus(err, absl::StrCat("rename to ", path));
  }
  return absl::OkStatus();
}

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

}  // namespace

int RunJob(const RunOptions& options) {
  // 1. The job, fully validated before any worker is touched.
  const FioParseOptions parse_options{.ignore_unsupported = options.ignore_unsupported};
  auto parsed = options.job_options.empty() ? ParseFioJobFile(options.job_file, parse_options)
                                            : ParseFioCommandLine(options.job_options, parse_options);
  if (!parsed.ok()) return Fail(parsed.status(), 2);
  v1::RunSpec spec = std::move(*parsed);
  if (options.output_format != "normal" && options.output_format != "json" && options.output_format != "json+" &&
      options.output_format != "iofleet-json") {
    return Fail(absl::InvalidArgumentError(absl::StrCat("--output-format must be normal, json, json+ or iofleet-json, not '",
                                                        options.output_format, "'")), 2);
  }

  const bool local = options.hosts.empty();
  TemporaryDirectory temporary{.keep = options.keep_files};
  if (!options.directory.empty()) {
    if (options.directory[0] != '/') {
      return Fail(absl::InvalidArgumentError(absl::StrCat("--directory ", options.directory, " must be an absolute path")), 2);
    }
    for (v1::JobSpec& job : *spec.mutable_jobs()) {
      if (job.directory().empty() && job.filename().find('/') == std::string::npos) job.set_directory(options.directory);
    }
  }
  std::vector<std::string> local_roots;
  if (local) {
    for (v1::JobSpec& job : *spec.mutable_jobs()) {
      if (!job.directory().empty() || job.filename().find('/') != std::string::npos) continue;
      if (temporary.path.empty()) {
        char pattern[] = "/tmp/iofleet-run-XXXXXX";
        if (::mkdtemp(pattern) == nullptr) return Fail(absl::ErrnoToStatus(errno, "mkdtemp"), 1);
        temporary.path = pattern;
      }
      job.set_directory(temporary.path);
    }
  }
  if (absl::Status valid = ValidateRunSpec(spec); !valid.ok()) {
    if (!local && valid.message().find("no directory=") != absl::string_view::npos) {
      return Fail(absl::InvalidArgumentError(absl::StrCat(valid.message(), "; with --hosts every job needs directory= (a path on the workers)")), 2);
    }
    return Fail(valid, 2);
  }

  // 2. Workers: given, or started here.
  LocalWorkers local_workers;
  std::vector<std::string> addresses = options.hosts;
  if (local) {
    for (const v1::JobSpec& job : spec.jobs()) {
      std::string dir = job.directory();
      if (dir.empty()) dir = job.filename().substr(0, std::max<size_t>(job.filename().rfind('/'), 1));
      std::error_code ignored;
      std::filesystem::create_directories(dir, ignored);
      if (std::find(local_roots.begin(), local_roots.end(), dir) == local_roots.end()) local_roots.push_back(dir);
    }
    if (absl::Status started = local_workers.Start(options.local_workers, local_roots, options.worker_binary); !started.ok()) {
      return Fail(started, 1);
    }
    addresses = local_workers.addresses();
  }
  std::vector<std::unique_ptr<WorkerClient>> clients;
  for (const std::string& address : addresses) clients.push_back(std::make_unique<WorkerClient>(address));
  const size_t n = clients.size();

  // 3. Handshake with every worker at once; any failure ends the run before IO.
  std::vector<absl::StatusOr<v1::HelloResponse>> hellos(n, absl::UnknownError("not asked"));
  ForEachWorker(n, [&](size_t i) { hellos[i] = clients[i]->Hello(options.connect_timeout); });
  std::vector<std::string> failures;
  for (size_t i = 0; i < n; ++i) {
    if (!hellos[i].ok()) failures.push_back(std::string(hellos[i].status().message()));
  }
  if (!failures.empty()) return Fail(absl::UnavailableError(absl::StrJoin(failures, "\niofleet: ")), 1);

  v1::RunReport report;
  report.set_tool("iofleet");
  report.set_tool_version(kIofleetVersion);
  report.set_run_id(NewRunId());
  report.set_job_source(spec.source());
  for (const std::string& ignored : spec.ignored_options()) {
    report.add_ignored_options(ignored);
    std::cerr << "iofleet: ignoring unsupported fio option (--ignore-unsupported): " << ignored << "\n";
  }
  report.set_interval_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(options.interval)));
  for (size_t i = 0; i < n; ++i) {
    v1::WorkerInfo* info = report.add_workers();
    info->set_address(addresses[i]);
    info->set_hostname(hellos[i]->hostname());
    info->set_protocol_version(hellos[i]->protocol_version());
    info->set_kernel(hellos[i]->kernel());
    info->set_cores(hellos[i]->cores());
    info->set_local(local);
  }

  // 4. Phase by phase (fio's stonewall): prepare everywhere, start everywhere at one instant,
  // collect until every worker has finished the phase — a cluster-wide barrier.
  RunAggregator aggregator(spec, addresses);
  const JobPhases phases = SplitIntoPhases(spec);
  std::mutex report_mu;  // prepare threads add each worker's targets
  std::vector<absl::Status> stream_status(n);
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  struct sigaction previous_int, previous_term;
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
  bool interrupted = false;
  for (uint32_t phase = 0; phase < phases.phases && !interrupted; ++phase) {
    v1::RunSpec phase_spec;
    phase_spec.set_source(spec.source());
    std::vector<size_t> global_index;  // phase job -> job in the whole spec
    for (int j = 0; j < spec.jobs_size(); ++j) {
      if (phases.phase_of[j] != phase) continue;
      *phase_spec.add_jobs() = spec.jobs(j);
      global_index.push_back(static_cast<size_t>(j));
    }
    const std::string run_id = phases.phases == 1 ? report.run_id() : absl::StrCat(report.run_id(), "-p", phase);

    std::vector<absl::Status> prepared(n);
    ForEachWorker(n, [&](size_t i) {
      v1::PrepareRequest request;
      request.set_run_id(run_id);
      *request.mutable_spec() = phase_spec;
      request.set_worker_index(static_cast<uint32_t>(i));
      request.set_worker_count(static_cast<uint32_t>(n));
      request.set_interval_ns(report.interval_ns());
      request.set_lease_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(options.lease)));
      auto response = clients[i]->Prepare(request, absl::Minutes(30));
      prepared[i] = response.status();
      if (response.ok()) {
        for (const v1::TargetInfo& t : response->targets()) {
          const std::string line = absl::StrCat(t.path(), ": ", t.fs_type(), " ", t.mount_source(), " on ", t.mount_point());
          auto* targets = report.mutable_workers(static_cast<int>(i))->mutable_targets();
          std::lock_guard<std::mutex> lock(report_mu);
          if (std::find(targets->begin(), targets->end(), line) == targets->end()) *targets->Add() = line;
        }
      }
    });
    for (size_t i = 0; i < n; ++i) {
      if (!prepared[i].ok()) failures.push_back(std::string(prepared[i].message()));
    }
    if (!failures.empty()) {
      ForEachWorker(n, [&](size_t i) { (void)clients[i]->Stop(run_id, "another worker failed to prepare", absl::Seconds(2)); });
      if (phase == 0) return Fail(absl::FailedPreconditionError(absl::StrJoin(failures, "\niofleet: ")), 1);
      for (const std::string& f : failures) report.add_problems(absl::StrCat("phase ", phase, " not run: ", f));
      break;
    }

    // Streams first (so nothing is missed), leases kept alive, then one start instant.
    std::vector<std::atomic<bool>> stream_done(n);
    std::vector<std::thread> streams;
    for (size_t i = 0; i < n; ++i) {
      streams.emplace_back([&, i] {
        stream_status[i] = clients[i]->ReadIntervals(run_id, [&](const v1::IntervalReport& r) {
          v1::IntervalReport global = r;
          if (r.job_index() < global_index.size()) global.set_job_index(static_cast<uint32_t>(global_index[r.job_index()]));
          aggregator.Add(i, global);
        });
        stream_done[i] = true;
      });
    }
    std::atomic<bool> phase_over{false};
    std::vector<std::atomic<int64_t>> last_heartbeat_ok(n);
    for (auto& t : last_heartbeat_ok) t = absl::ToUnixNanos(absl::Now());
    std::thread heartbeats([&] {
      while (!phase_over) {
        ForEachWorker(n, [&](size_t i) {
          if (stream_done[i]) return;
          if (clients[i]->Heartbeat(run_id, absl::Seconds(1)).ok()) {
            last_heartbeat_ok[i] = absl::ToUnixNanos(absl::Now());
          } else if (absl::Now() - absl::FromUnixNanos(last_heartbeat_ok[i]) > options.lease) {
            // The worker has not answered for a whole lease: it is gone (and has stopped its IO).
            clients[i]->CancelStream();
          }
        });
        absl::SleepFor(std::min(options.lease / 5, absl::Seconds(1)));
      }
    });

    const int64_t start = absl::ToUnixNanos(absl::Now() + absl::Milliseconds(500));
    if (phase == 0) report.set_start_unix_ns(start);
    for (size_t j : global_index) aggregator.MarkStarted(j, start);
    std::vector<absl::Status> started(n);
    ForEachWorker(n, [&](size_t i) {
      v1::StartRequest request;
      request.set_run_id(run_id);
      request.set_start_unix_ns(start);
      auto response = clients[i]->Start(request, absl::Seconds(5));
      started[i] = response.status();
      if (response.ok() && response->lead_ns() < 0) {
        Log(LogLevel::kWarning, absl::StrCat("worker ", addresses[i], " got the start request ", -response->lead_ns() / 1000000, " ms late"));
      }
    });
    bool any_start_failed = false;
    for (size_t i = 0; i < n; ++i) {
      if (!started[i].ok()) {
        report.add_problems(std::string(started[i].message()));
        any_start_failed = true;
      }
    }
    if (any_start_failed) {
      ForEachWorker(n, [&](size_t i) { (void)clients[i]->Stop(run_id, "another worker failed to start", absl::Seconds(2)); });
    }

    // Wait for every stream to end; Ctrl-C stops the workers, whose final reports still come.
    for (size_t i = 0; i < n;) {
      if (stream_done[i]) {
        ++i;
        continue;
      }
      if (g_interrupted && !interrupted) {
        interrupted = true;
        std::cerr << "iofleet: interrupted; stopping the workers and reporting what was measured\n";
        ForEachWorker(n, [&](size_t w) { (void)clients[w]->Stop(run_id, "interrupted by the user (Ctrl-C)", absl::Seconds(2)); });
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    for (std::thread& t : streams) t.join();
    phase_over = true;
    heartbeats.join();
    ForEachWorker(n, [&](size_t i) { (void)clients[i]->Stop(run_id, "run complete", absl::Seconds(1)); });
    if (any_start_failed) break;
    if (phase + 1 < phases.phases && interrupted) {
      report.add_problems(absl::StrCat("stonewall phases ", phase + 1, " to ", phases.phases - 1, " were not run"));
    }
  }
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);

  // 7. Report.
  aggregator.FillReport(&report);
  if (interrupted) report.add_problems("interrupted by the user: results cover the time until the stop");
  for (size_t i = 0; i < n; ++i) {
    if (!aggregator.WorkerComplete(i)) {
      report.add_problems(absl::StrCat("worker ", addresses[i], " did not deliver all its results (",
                                       stream_status[i].ok() ? "stream ended early" : stream_status[i].message(),
                                       "): its figures cover only the intervals received"));
    }
  }
  for (const v1::JobResult& job : report.jobs()) {
    for (const v1::WorkerResult& w : job.workers()) {
      if (!w.error().empty()) report.add_problems(absl::StrCat("job '", job.name(), "' on ", w.worker(), ": ", w.error()));
    }
  }
  const std::string rendered = options.output_format == "normal" ? RenderTextReport(report)
                               : options.output_format == "json+" ? RenderFioJsonReport(report, true)
                               : options.output_format == "iofleet-json" ? RenderJsonReport(report)
                                                                         : RenderFioJsonReport(report, false);
  if (options.output_file.empty()) {
    std::fwrite(rendered.data(), 1, rendered.size(), stdout);
    std::fflush(stdout);
  } else if (absl::Status written = WriteFileAtomically(options.output_file, rendered); !written.ok()) {
    return Fail(written, 1);
  }
  if (!report.problems().empty()) {
    for (const std::string& p : report.problems()) std::cerr << "iofleet: " << p << "\n";
    return 1;
  }
  return 0;
}

}  // namespace iofleet
