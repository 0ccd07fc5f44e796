#include "controller/cluster_session.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/protocol_version.h"
#include "controller/host_differences.h"

namespace iofleet {
namespace {

volatile sig_atomic_t g_interrupted = 0;
volatile sig_atomic_t g_presses = 0;
volatile sig_atomic_t g_user_stop = 0;  // never cleared: the user wants the command to end
// The first Ctrl-C stops the workers and collects what they measured; a second one exits now.
void OnInterrupt(int) {
  g_presses = g_presses + 1;  // a plain store: sig_atomic_t has no atomic increment
  if (g_presses >= 2) ::_exit(130);
  g_interrupted = 1;
  g_user_stop = 1;
}

// Runs fn(i) for every worker in parallel and waits for all.
template <typename Fn>
void ForEachWorker(size_t count, Fn fn) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < count; ++i) threads.emplace_back([&fn, i] { fn(i); });
  for (std::thread& t : threads) t.join();
}

}  // namespace

std::string NewRunId() {
  std::random_device random;
  return absl::StrCat("r-", absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), "-",
                      absl::StrFormat("%06x", random() & 0xffffff));
}

absl::StatusOr<std::unique_ptr<ClusterSession>> ClusterSession::Open(const SessionOptions& options, v1::RunReport* report) {
  std::unique_ptr<ClusterSession> session(new ClusterSession());
  session->options_ = options;
  session->local_ = options.hosts.empty();
  session->addresses_ = options.hosts;
  if (session->local_) {
    absl::Status started = session->local_workers_.Start(options.local_workers, options.local_roots, options.worker_binary);
    if (!started.ok()) return started;
    session->addresses_ = session->local_workers_.addresses();
  }
  for (const std::string& address : session->addresses_) {
    // Local workers listen on loopback without credentials of their own.
    session->clients_.push_back(std::make_unique<WorkerClient>(address, session->local_ ? TransportSecurity{} : options.security));
  }
  const size_t n = session->clients_.size();
  session->stream_status_.assign(n, absl::OkStatus());

  // Handshake with every worker at once; any failure ends the run before IO.
  std::vector<absl::StatusOr<v1::HelloResponse>> hellos(n, absl::UnknownError("not asked"));
  ForEachWorker(n, [&](size_t i) { hellos[i] = session->clients_[i]->Hello(options.connect_timeout); });
  std::vector<std::string> failures;
  for (size_t i = 0; i < n; ++i) {
    if (!hellos[i].ok()) failures.push_back(std::string(hellos[i].status().message()));
  }
  if (!failures.empty()) return absl::UnavailableError(absl::StrJoin(failures, "\niofleet: "));
  report->set_interval_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(options.interval)));
  for (size_t i = 0; i < n; ++i) {
    v1::WorkerInfo* info = report->add_workers();
    info->set_address(session->addresses_[i]);
    info->set_hostname(hellos[i]->hostname());
    info->set_protocol_version(hellos[i]->protocol_version());
    info->set_kernel(hellos[i]->kernel());
    info->set_cores(hellos[i]->cores());
    info->set_local(session->local_);
  }
  g_interrupted = 0;
  g_presses = 0;
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return session;
}

void ClusterSession::ClearInterrupt() { g_interrupted = 0; }

bool UserInterrupted() { return g_user_stop != 0; }

ClusterSession::~ClusterSession() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

PhaseOutcome ClusterSession::RunPhase(const v1::RunSpec& phase_spec, const std::vector<size_t>& global_index,
                                      const std::string& run_id, RunAggregator* aggregator, v1::RunReport* report) {
  PhaseOutcome outcome;
  last_run_id_ = run_id;
  const size_t n = clients_.size();
  auto& clients = clients_;
  auto& addresses = addresses_;
  auto& stream_status = stream_status_;
  const SessionOptions& options = options_;
  std::mutex report_mu;  // prepare threads add each worker's targets
  std::vector<std::string> failures;
  bool interrupted = false;
    std::vector<absl::Status> prepared(n);
    for (auto& client : clients) client->ResetPrepare();
    ForEachWorker(n, [&](size_t i) {
      v1::PrepareRequest request;
      request.set_run_id(run_id);
      *request.mutable_spec() = phase_spec;
      request.set_worker_index(static_cast<uint32_t>(i));
      request.set_worker_count(static_cast<uint32_t>(n));
      request.set_interval_ns(report->interval_ns());
      request.set_lease_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(options.lease)));
      auto response = clients[i]->Prepare(request, absl::Minutes(30));
      prepared[i] = response.status();
      if (!response.ok() && response.status().code() != absl::StatusCode::kCancelled) {
        // One worker failed (or was lost) while the others may be laying out gigabytes: give
        // their preparation up at once rather than wait for it to finish.
        for (size_t j = 0; j < n; ++j) {
          if (j != i) clients[j]->CancelPrepare();
        }
      }
      if (response.ok() && static_cast<int>(i) < report->workers_size()) {
        // Host facts once, targets as each phase names them.
        std::lock_guard<std::mutex> lock(report_mu);
        v1::HostFacts* facts = report->mutable_workers(static_cast<int>(i))->mutable_facts();
        const auto known_targets = facts->targets();
        const v1::HostFacts& fresh = response->facts();
        *facts->mutable_hostname() = fresh.hostname();
        *facts->mutable_kernel() = fresh.kernel();
        *facts->mutable_cpu_model() = fresh.cpu_model();
        facts->set_cpus(fresh.cpus());
        facts->set_memory_bytes(fresh.memory_bytes());
        for (const v1::TargetFacts& t : fresh.targets()) {
          bool known = false;
          for (const v1::TargetFacts& k : known_targets) known |= k.path() == t.path();
          if (!known) *facts->add_targets() = t;
        }
      }
    });
    size_t given_up = 0;
    for (size_t i = 0; i < n; ++i) {
      if (prepared[i].code() == absl::StatusCode::kCancelled) ++given_up;
      else if (!prepared[i].ok()) failures.push_back(std::string(prepared[i].message()));
    }
    if (!failures.empty() && given_up > 0) {
      failures.push_back(absl::StrCat("preparation stopped on ", given_up, " other worker(s) at once, so nothing runs"));
    }
    if (!failures.empty()) {
      ForEachWorker(n, [&](size_t i) { (void)clients[i]->Stop(run_id, "another worker failed to prepare", absl::Seconds(2)); });
      for (const std::string& f : failures) report->add_problems(f);
      outcome.prepared = false;
      return outcome;
    }

    // Streams first (so nothing is missed), leases kept alive, then one start instant.
    std::vector<std::atomic<bool>> stream_done(n);
    std::vector<std::thread> streams;
    for (size_t i = 0; i < n; ++i) {
      streams.emplace_back([&, i] {
        stream_status[i] = clients[i]->ReadIntervals(run_id, [&](const v1::IntervalReport& r) {
          v1::IntervalReport global = r;
          if (r.job_index() < global_index.size()) global.set_job_index(static_cast<uint32_t>(global_index[r.job_index()]));
          aggregator->Add(i, global);
        });
        stream_done[i] = true;
      });
    }
    std::atomic<bool> phase_over{false};
    std::vector<std::atomic<int64_t>> last_heartbeat_ok(n);
    for (auto& t : last_heartbeat_ok) t = absl::ToUnixNanos(absl::Now());
    std::vector<std::atomic<bool>> answering(n);  // the latest heartbeat was answered
    for (auto& a : answering) a = true;
    std::thread heartbeats([&] {
      while (!phase_over) {
        ForEachWorker(n, [&](size_t i) {
          if (stream_done[i]) return;
          answering[i] = clients[i]->Heartbeat(run_id, absl::Seconds(1)).ok();
          if (answering[i]) {
            last_heartbeat_ok[i] = absl::ToUnixNanos(absl::Now());
          } else if (absl::Now() - absl::FromUnixNanos(last_heartbeat_ok[i]) > options.lease) {
            // The worker has not answered for a whole lease: it is gone (and has stopped its IO).
            clients[i]->CancelStream();
          }
        });
        if (options.metrics != nullptr) {
          // Up: answers heartbeats, or has ended the phase with its results delivered.
          size_t up = 0;
          for (size_t i = 0; i < n; ++i) up += stream_done[i] ? stream_status[i].ok() : answering[i].load();
          options.metrics->Gauge("iofleet_cluster_workers_up", "Workers answering the controller (heartbeats) or done with the phase")
              .Set(static_cast<double>(up));
        }
        // Beat every lease/5 (at most 1 s), but notice the phase's end at once.
        const absl::Time next = absl::Now() + std::min(options.lease / 5, absl::Seconds(1));
        while (!phase_over && absl::Now() < next) absl::SleepFor(absl::Milliseconds(20));
      }
    });

    const int64_t start = absl::ToUnixNanos(absl::Now() + absl::Milliseconds(250));
    outcome.start_unix_ns = start;
    for (size_t j : global_index) aggregator->MarkStarted(j, start);
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
        report->add_problems(std::string(started[i].message()));
        any_start_failed = true;
      }
    }
    if (any_start_failed) {
      ForEachWorker(n, [&](size_t i) { (void)clients[i]->Stop(run_id, "another worker failed to start", absl::Seconds(2)); });
    }

    // Wait for every stream to end; Ctrl-C stops the workers, whose final reports still come.
    bool aborted = false;
    for (size_t i = 0; i < n;) {
      // --on-worker-loss=abort: a lost worker stops the whole phase on every worker.
      if (options.abort_on_worker_loss && !aborted) {
        for (size_t w = 0; w < n; ++w) {
          if (stream_done[w] && !stream_status[w].ok()) {
            aborted = true;
            outcome.aborted = true;
            report->add_problems(absl::StrCat("aborted (--on-worker-loss=abort): worker ", addresses[w], " was lost"));
            ForEachWorker(n, [&](size_t x) { (void)clients[x]->Stop(run_id, "aborted: another worker was lost", absl::Seconds(2)); });
            break;
          }
        }
      }
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
  MarkHostDifferences(report);
  outcome.interrupted = interrupted || g_interrupted;
  outcome.aborted = outcome.aborted || aborted;
  return outcome;
}

void ClusterSession::ReportIncompleteWorkers(const RunAggregator& aggregator, v1::RunReport* report) const {
  uint32_t completed = 0;
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (aggregator.WorkerComplete(i)) {
      ++completed;
      continue;
    }
    const int64_t last = aggregator.LastReportUnixNs(i);
    const std::string when = last > report->start_unix_ns() && report->start_unix_ns() > 0
                                 ? absl::StrFormat(" at %.1f s", static_cast<double>(last - report->start_unix_ns()) / 1e9)
                                 : " before its first interval";
    // Ask the worker what became of the run: it says why it dropped it (its lease expired
    // while it could not hear us, say), or that it never heard of it (it was restarted and
    // holds no state of this run), or it does not answer at all.
    std::string now;
    if (!last_run_id_.empty()) {
      const absl::Status asked = clients_[i]->Heartbeat(last_run_id_, absl::Seconds(1));
      if (asked.code() == absl::StatusCode::kFailedPrecondition) {
        now = absl::StrCat("; it answers again and says: ", absl::StripPrefix(asked.message(), absl::StrCat("worker ", addresses_[i], ": ")));
      } else if (asked.code() == absl::StatusCode::kNotFound) {
        now = absl::StrCat("; it answers again but has no record of run ", last_run_id_,
                           ": it was restarted (or another worker now listens there), and does no IO for this run");
      } else if (!asked.ok()) {
        now = "; it does not answer now either";
      }
    }
    report->add_problems(absl::StrCat("worker ", addresses_[i], " lost", when, " (",
                                      stream_status_[i].ok() ? "stream ended early" : stream_status_[i].message(),
                                      "): its figures cover only the intervals received", now));
  }
  report->set_workers_completed(completed);
  report->set_workers_expected(static_cast<uint32_t>(clients_.size()));
}

}  // namespace iofleet
