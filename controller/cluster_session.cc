#include "controller/cluster_session.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <atomic>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/hostname.h"
#include "common/log.h"
#include "common/printable.h"
#include "common/protocol_version.h"
#include "controller/host_differences.h"

namespace iofleet {
namespace {

volatile sig_atomic_t g_interrupted = 0;
volatile sig_atomic_t g_presses = 0;
volatile sig_atomic_t g_user_stop = 0;  // never cleared: the user wants the command to end
// The write end of the running session's interrupt pipe (-1: none). A handler may do little
// more than write(2): the session's watcher thread reads the byte and wakes every waiter, so
// waits need not poll for Ctrl-C.
volatile sig_atomic_t g_interrupt_fd = -1;
// The first Ctrl-C stops the workers and collects what they measured; a second one exits now.
void OnInterrupt(int) {
  g_presses = g_presses + 1;  // a plain store: sig_atomic_t has no atomic increment
  if (g_presses >= 2) ::_exit(130);
  g_interrupted = 1;
  g_user_stop = 1;
  const int fd = g_interrupt_fd;
  const char interrupted = 'i';
  if (fd >= 0) (void)!::write(fd, &interrupted, 1);
}

// What one relay may stand for: more than a run's worker indices could name is a lie.
constexpr uint32_t kMaxRelayedWorkers = 1u << 20;

}  // namespace

std::string NewRunId() {
  std::random_device random;
  return absl::StrCat("r-", absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), "-",
                      absl::StrFormat("%06x", random() & 0xffffff));
}

namespace {
// A token for one run's workers (--slurm without --token-file): 256 random bits.
std::string NewToken() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 8; ++i) absl::StrAppend(&token, absl::StrFormat("%08x", random()));
  return token;
}
}  // namespace

absl::StatusOr<std::unique_ptr<ClusterSession>> ClusterSession::Open(const SessionOptions& options, v1::RunReport* report) {
  std::unique_ptr<ClusterSession> session(new ClusterSession());
  session->options_ = options;
  session->local_ = options.hosts.empty() && options.listen.empty() && !options.launches_workers();
  session->addresses_ = options.hosts;
  // Names each worker's session, so a stream cut short can resume it.
  session->session_name_ = absl::StrCat("s-", absl::StrFormat("%016x", std::random_device()() * 0x100000000ull + std::random_device()()));
  std::optional<SlurmAllocation> allocation;
  if (options.launches_workers()) {
    const char* how = options.slurm ? "--slurm" : "--ssh";
    if (options.slurm) {
      absl::StatusOr<SlurmAllocation> current = CurrentSlurmAllocation();
      if (!current.ok()) return current.status();
      allocation = *current;
    }
    if (options.security.tls()) {
      return absl::UnimplementedError(absl::StrCat(how, " with mutual TLS is not supported yet (the workers would need certificates of their "
                                                   "own on every host): give --token-file, or no credentials and the run makes a token of its own"));
    }
    // The workers dial back from the other nodes: any address, a free port, and a token (the
    // given one or one made for this run), handed to them in srun's environment.
    if (session->options_.listen.empty()) session->options_.listen = "0.0.0.0:0";
    session->options_.expect_workers = allocation.has_value() ? allocation->nodes : static_cast<int>(options.ssh_hosts.size());
    if (session->options_.security.token.empty()) session->options_.security.token = NewToken();
  }
  if (!session->options_.listen.empty()) {
    const SessionOptions& options = session->options_;
    session->security_ = options.security;
    session->addresses_.resize(static_cast<size_t>(options.expect_workers));
    session->peers_.resize(session->addresses_.size());
    session->taken_.assign(session->addresses_.size(), false);
    for (size_t i = 0; i < session->addresses_.size(); ++i) session->links_.push_back(std::make_unique<Link>());
    absl::StatusOr<std::unique_ptr<SessionListener>> listener =
        SessionListener::Start(options.listen, options.security, static_cast<DialInHandler*>(session.get()));
    if (!listener.ok()) return listener.status();
    session->listener_ = *std::move(listener);
    if (options.launches_workers()) {
      if (absl::Status launched = session->LaunchWorkers(allocation); !launched.ok()) return launched;
    }
    if (absl::Status arrived = session->AwaitDialIns(); !arrived.ok()) return arrived;
  } else if (session->local_) {
    absl::Status started = session->local_workers_.Start(options.local_workers, options.local_roots, options.worker_binary);
    if (!started.ok()) return started;
    session->addresses_ = session->local_workers_.addresses();
  }
  const size_t n = session->addresses_.size();
  if (session->listener_ == nullptr) session->DialWorkers();
  std::vector<std::string> failures;
  {
    std::lock_guard<std::mutex> lock(session->mu_);
    for (size_t i = 0; i < n; ++i) {
      const Peer& p = session->peers_[i];
      const std::string& address = session->addresses_[i];
      if (p.hello) {
        // Checked from our side: the worker may be older than anything this controller supports.
        absl::Status compatible = CheckProtocolCompatible({kProtocolVersion, kMinCompatibleProtocolVersion}, "controller",
                                                          {p.hello->protocol_version(), p.hello->min_compatible_version()},
                                                          absl::StrCat("worker ", address));
        if (!compatible.ok()) failures.push_back(std::string(compatible.message()));
        if (p.hello->relayed_workers() > kMaxRelayedWorkers) {
          failures.push_back(absl::StrCat("worker ", address, " says it relays ", p.hello->relayed_workers(), " workers (at most ",
                                          kMaxRelayedWorkers, ")"));
        }
      } else if (p.closed && p.lost.code() == absl::StatusCode::kUnimplemented) {
        failures.push_back(absl::StrCat("worker ", address, " has no session stream: it is an iofleet-worker older than protocol ",
                                        kMinCompatibleProtocolVersion, ", which this controller (protocol ", kProtocolVersion, ") needs"));
      } else if (p.closed && p.lost.code() == absl::StatusCode::kUnauthenticated) {
        failures.push_back(absl::StrCat("worker ", address, " refused the controller: ", absl::StripPrefix(p.lost.message(), absl::StrCat("worker ", address, ": session ended: "))));
      } else if (p.closed) {
        failures.push_back(absl::StrCat("worker ", address, " unreachable (hello): ", p.lost.message()));
      } else {
        failures.push_back(absl::StrCat("worker ", address, " unreachable (hello): no answer within ", absl::FormatDuration(options.connect_timeout)));
      }
    }
  }
  if (failures.empty()) {
    // Worker indices are 32-bit: relays' shares together must fit.
    std::lock_guard<std::mutex> lock(session->mu_);
    const uint64_t total = session->TotalWeightLocked();
    if (total > kMaxRelayedWorkers * uint64_t{16}) failures.push_back(absl::StrCat("the relays stand for ", total, " workers together: too many"));
  }
  if (!failures.empty()) return absl::UnavailableError(absl::StrJoin(failures, "\niofleet: "));
  report->set_interval_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(options.interval)));
  {
    std::lock_guard<std::mutex> lock(session->mu_);
    for (size_t i = 0; i < n; ++i) {
      const v1::HelloResponse& h = *session->peers_[i].hello;
      v1::WorkerInfo* info = report->add_workers();
      info->set_address(session->addresses_[i]);
      info->set_hostname(h.hostname());
      info->set_protocol_version(h.protocol_version());
      info->set_kernel(h.kernel());
      info->set_cores(h.cores());
      info->set_pid(h.pid());
      info->set_local(session->local_);
      if (session->peers_[i].launch_rank.has_value()) info->set_launch_rank(*session->peers_[i].launch_rank);
      if (h.relayed_workers() > 0) {
        info->set_hostname(absl::StrCat(h.hostname(), " (relay of ", h.relayed_workers(), " workers)"));
      }
    }
  }
  // One probe round before the first phase: round trips for the start instant, clock offsets.
  v1::ControllerMessage probe;
  probe.mutable_probe()->set_sequence(0);
  probe.mutable_probe()->set_controller_send_unix_ns(absl::ToUnixNanos(absl::Now()));
  session->Broadcast(probe);
  session->WaitUntil([&] {
    for (const Peer& p : session->peers_) {
      if (p.round_trip_ns < 0 && !p.closed) return false;
    }
    return true;
  }, options.connect_timeout, false);
  session->keeper_ = std::thread([s = session.get()] { s->Keep(); });
  g_interrupted = 0;
  g_presses = 0;
  if (::pipe2(session->interrupt_pipe_, O_CLOEXEC) == 0) {
    session->interrupt_watcher_ = std::thread([s = session.get()] { s->WatchInterrupts(); });
    g_interrupt_fd = session->interrupt_pipe_[1];
  }
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return session;
}

v1::ControllerMessage ClusterSession::Hello(size_t worker) const {
  v1::ControllerMessage hello;
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  hello.mutable_hello()->set_min_compatible_version(kMinCompatibleProtocolVersion);
  hello.mutable_hello()->set_controller_host(LocalHostname());
  hello.mutable_hello()->set_session_id(SessionId(worker));
  return hello;
}

v1::ControllerMessage ClusterSession::ResumeHello(size_t worker, uint64_t received_through) const {
  v1::ControllerMessage hello = Hello(worker);
  hello.mutable_hello()->set_resume(true);
  hello.mutable_hello()->set_received_through(received_through);
  return hello;
}

void ClusterSession::KeepStream(std::shared_ptr<SessionStream> stream) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(), [](const std::shared_ptr<SessionStream>& s) {
                   return s.use_count() == 1 && s->WaitClosed(absl::ZeroDuration());
                 }),
                 streams_.end());
  streams_.push_back(std::move(stream));
}

void ClusterSession::DialWorkers() {
  const size_t n = addresses_.size();
  peers_.resize(n);
  // Local workers listen on loopback without credentials of their own.
  security_ = local_ ? TransportSecurity{} : options_.security;
  for (size_t i = 0; i < n; ++i) {
    stubs_.push_back(v1::WorkerService::NewStub(SessionChannel(addresses_[i], security_, options_.lease)));
    links_.push_back(std::make_unique<Link>());
    links_[i]->connection = 1;
    links_[i]->client = std::make_shared<SessionClient>(stubs_[i].get(), i, addresses_[i], security_, static_cast<SessionEvents*>(this), 1);
    streams_.push_back(links_[i]->client);
  }
  // Handshake with every worker at once; any failure ends the run before IO.
  for (size_t i = 0; i < n; ++i) Send(i, Hello(i));
  WaitUntil([&] {
    for (const Peer& p : peers_) {
      if (!p.hello && !p.closed) return false;
    }
    return true;
  }, options_.connect_timeout, false);
}

absl::Status ClusterSession::LaunchWorkers(const std::optional<SlurmAllocation>& allocation) {
  // The address the workers dial: the one listened on, or this host's name for any address.
  std::string host = options_.listen.substr(0, options_.listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") host = LocalHostname();
  const std::string controller = absl::StrCat(host, ":", listener_->port());
  auto ended = [this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      launcher_exited_ = true;
    }
    cv_.notify_all();
  };
  if (allocation.has_value()) {
    auto slurm = std::make_unique<SlurmWorkers>();
    absl::Status started = slurm->Start(SlurmLaunch{.allocation = *allocation,
                                                    .controller = controller,
                                                    .token = options_.security.token,
                                                    .allowed_roots = options_.local_roots,
                                                    .worker_binary = options_.worker_binary},
                                        ended);
    launcher_ = std::move(slurm);
    if (!started.ok()) return started;
    std::cerr << "iofleet: starting " << allocation->nodes << " worker(s), one per node of Slurm job " << allocation->job_id
              << " (srun); they dial " << controller << "\n";
    return absl::OkStatus();
  }
  SshLaunch launch{.hosts = options_.ssh_hosts,
                   .ssh_command = options_.ssh_command,
                   .controller = controller,
                   .token = options_.security.token,
                   .allowed_roots = options_.local_roots,
                   .remote_worker = options_.ssh_worker};
  if (options_.ssh_copy) {
    launch.copy_binary = options_.worker_binary;
    if (launch.copy_binary.empty()) {
      absl::StatusOr<std::string> found = LocalWorkers::FindWorkerBinary();
      if (!found.ok()) return found.status();
      launch.copy_binary = *found;
    }
  }
  auto ssh = std::make_unique<SshWorkers>();
  absl::Status started = ssh->Start(launch, ended);
  launcher_ = std::move(ssh);
  if (!started.ok()) return started;
  std::cerr << "iofleet: starting a worker on each of " << options_.ssh_hosts.size() << " host(s) over ssh"
            << (options_.ssh_copy ? " (sending this iofleet-worker)" : "") << "; they dial " << controller << "\n";
  return absl::OkStatus();
}

absl::Status ClusterSession::AwaitDialIns() {
  if (launcher_ == nullptr) {
    std::cerr << "iofleet: listening on " << options_.listen << " (port " << listener_->port() << ") for " << options_.expect_workers
              << " worker(s): iofleet-worker --controller HOST:" << listener_->port() << "\n";
  }
  const bool arrived = WaitUntil([&] {
    size_t ready = 0;
    for (const Peer& p : peers_) ready += p.hello.has_value() || p.closed;
    return ready == peers_.size() || launcher_exited_;
  }, options_.wait, true);
  size_t ready = 0;
  bool launcher_exited = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Peer& p : peers_) ready += p.hello.has_value();
    launcher_exited = launcher_exited_;
  }
  if (launcher_exited && ready < peers_.size()) {
    return absl::UnavailableError(absl::StrCat("the workers' launcher ended: ", launcher_->EndedEarly(), ", when ", ready, " of ",
                                               peers_.size(), " worker(s) had dialled in (their messages are above)"));
  }
  if (arrived) return absl::OkStatus();
  if (g_interrupted) return absl::CancelledError(absl::StrCat("interrupted while waiting for workers: ", ready, " of ", peers_.size(), " had dialled in"));
  return absl::DeadlineExceededError(absl::StrCat(ready, " of ", peers_.size(), " worker(s) dialled in within --wait ", absl::FormatDuration(options_.wait),
                                                  " (start them with: iofleet-worker --controller THIS_HOST:", listener_->port(), ")"));
}

absl::Status ClusterSession::OnOffer(const std::shared_ptr<DialInStream>& stream, const v1::HelloResponse& offer) {
  size_t worker = 0;
  bool resume = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return absl::UnavailableError("this controller is closing");
    if (!offer.session_id().empty()) {
      // A worker whose connection was cut, back for its session.
      worker = peers_.size();
      for (size_t i = 0; i < peers_.size(); ++i) {
        if (taken_[i] && SessionId(i) == offer.session_id()) worker = i;
      }
      if (worker == peers_.size() || peers_[worker].closed) {
        return absl::NotFoundError(absl::StrCat("this controller has no session ", offer.session_id(),
                                                " (it belongs to another run, or the worker was given up)"));
      }
      resume = true;
    } else {
      if (dialled_in_ >= peers_.size()) {
        return absl::ResourceExhaustedError(absl::StrCat("this controller expected ", peers_.size(), " worker(s) and has them all"));
      }
      if (offer.has_launch_rank()) {
        // Numbered by its launcher (mpirun, srun, an Indexed Job): it is that worker.
        worker = offer.launch_rank();
        if (worker >= peers_.size()) {
          return absl::InvalidArgumentError(absl::StrCat("launch rank ", worker, " is beyond the ", peers_.size(),
                                                         " worker(s) this controller expects (ranks 0 to ", peers_.size() - 1, ")"));
        }
        if (taken_[worker]) {
          return absl::AlreadyExistsError(absl::StrCat("launch rank ", worker, " has dialled in already (from ", addresses_[worker],
                                                       "): two workers were started with one rank"));
        }
      } else {
        worker = static_cast<size_t>(std::find(taken_.begin(), taken_.end(), false) - taken_.begin());
      }
      taken_[worker] = true;
      if (offer.has_launch_rank()) peers_[worker].launch_rank = offer.launch_rank();
      ++dialled_in_;
      addresses_[worker] = stream->address();
    }
  }
  Link& link = *links_[worker];
  {
    std::lock_guard<std::mutex> lock(link.mu);
    const uint64_t connection = ++link.connection;
    stream->Bind(worker, connection, static_cast<SessionEvents*>(this));
    if (resume) {
      // What the worker missed goes again, after the answer saying what we received.
      stream->Send(ResumeHello(worker, link.replay.received()));
      if (!link.replay.Resend(offer.received_through(), [&](const std::shared_ptr<const v1::ControllerMessage>& m) { stream->Send(*m); })) {
        return absl::DataLossError("this controller cannot resume the session: commands the worker missed were dropped");
      }
    }
    link.client = stream;
    link.pending.reset();
  }
  KeepStream(stream);
  if (resume) {
    std::lock_guard<std::mutex> lock(mu_);
    Peer& p = peers_[worker];
    p.reconnecting = p.attempt_pending = false;
    ++p.resumes;
    Log(LogLevel::kWarning, absl::StrFormat("worker %s dialled in again: its session resumed, nothing lost", addresses_[worker]));
  } else {
    Send(worker, Hello(worker));
  }
  cv_.notify_all();
  return absl::OkStatus();
}

uint64_t ClusterSession::TotalWeightLocked() const {
  uint64_t total = 0;
  for (const Peer& p : peers_) total += Weight(p);
  return total;
}

uint32_t ClusterSession::relayed_workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<uint32_t>(TotalWeightLocked());  // bounded when the session opened
}

std::vector<uint32_t> ClusterSession::RelayedBySession() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint32_t> relayed;
  relayed.reserve(peers_.size());
  for (const Peer& p : peers_) relayed.push_back(Relayed(p));
  return relayed;
}

void ClusterSession::WaitForInterrupt() {
  WaitUntil([] { return false; }, absl::InfiniteDuration(), true);
}

void ClusterSession::ClearInterrupt() { g_interrupted = 0; }

bool UserInterrupted() { return g_user_stop != 0; }

ClusterSession::~ClusterSession() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  keeper_cv_.notify_all();
  if (keeper_.joinable()) keeper_.join();
  // Tells every worker the session is over (it forgets it instead of keeping it for a resume),
  // and gives them a moment to end their streams before the rest are cancelled.
  v1::ControllerMessage end;
  end.mutable_end();
  Broadcast(end);
  WaitUntil([&] {
    for (const Peer& p : peers_) {
      if (!p.closed) return false;
    }
    return true;
  }, absl::Seconds(1), false);
  std::vector<std::shared_ptr<SessionStream>> streams;
  {
    std::lock_guard<std::mutex> lock(streams_mu_);
    streams.swap(streams_);
  }
  for (const std::unique_ptr<Link>& link : links_) {
    std::lock_guard<std::mutex> lock(link->mu);
    link->client.reset();
    link->pending.reset();
  }
  // Every stream ends before this object does (their events come here).
  for (const auto& stream : streams) stream->Cancel();
  for (const auto& stream : streams) stream->WaitClosed(absl::Seconds(10));
  streams.clear();
  listener_.reset();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  g_interrupt_fd = -1;
  if (interrupt_watcher_.joinable()) {
    const char quit = 'q';
    (void)!::write(interrupt_pipe_[1], &quit, 1);
    interrupt_watcher_.join();
  }
  for (int& fd : interrupt_pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void ClusterSession::WatchInterrupts() {
  while (true) {
    char byte = 0;
    const ssize_t n = ::read(interrupt_pipe_[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1 || byte == 'q') return;
    std::lock_guard<std::mutex> lock(mu_);  // a waiter between its check and its wait is not missed
    cv_.notify_all();
  }
}

template <typename Done>
bool ClusterSession::WaitUntil(Done done, absl::Duration timeout, bool notice_interrupt) {
  const absl::Time deadline = absl::Now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  while (!done()) {
    if (notice_interrupt && g_interrupted) return false;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    // Ctrl-C wakes this too (WatchInterrupts).
    cv_.wait_for(lock, absl::ToChronoNanoseconds(std::min(left, absl::Hours(1))));  // (an infinite wait would overflow)
  }
  return true;
}

void ClusterSession::OnMessage(const SessionStream& from, v1::WorkerMessage message) {
  const size_t worker = from.worker();
  const int64_t now = absl::ToUnixNanos(absl::Now());
  bool resumed = false, unresumable = false;
  {
    Link& link = *links_[worker];
    std::lock_guard<std::mutex> lock(link.mu);
    if (from.connection() != link.connection) return;  // an earlier stream's last words
    if (message.has_hello() && message.hello().resumed()) {
      // The worker has the session still: what it has not received goes again, first.
      std::shared_ptr<SessionStream> resuming = link.pending;
      if (resuming == nullptr || resuming.get() != &from) return;
      if (!link.replay.Resend(message.hello().received_through(), [&](const std::shared_ptr<const v1::ControllerMessage>& m) { resuming->Send(*m); })) {
        unresumable = true;
        resuming->Cancel();
      } else {
        link.client = std::move(resuming);
        resumed = true;
      }
      link.pending.reset();
    } else if (!link.replay.Receive(message)) {
      return;  // sent again on a resumed stream, but it arrived before the cut
    }
  }
  if (unresumable) return;  // its OnClosed follows; the keeper tries again until the lease
  ReportSink* sink = nullptr;
  std::vector<v1::IntervalReport> reports;
  ReleaseStep release;
  // Whether a wait may now be over. Reports and later probe echoes change nothing a wait looks
  // at: the thread running the phase is not woken (and does not rescan every worker) for each of
  // the thousands a second.
  bool changed = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Peer& p = peers_[worker];
    if (p.last_heard_unix_ns > 0) p.longest_silence_ns = std::max(p.longest_silence_ns, now - p.last_heard_unix_ns);
    if (resumed) {
      p.reconnecting = p.attempt_pending = false;
      ++p.resumes;
      Log(LogLevel::kWarning, absl::StrFormat("worker %s: its connection was cut (%s); the session resumed, nothing lost (longest silence "
                                              "so far %.1f s)",
                                              addresses_[worker], p.cut_by.message(), static_cast<double>(p.longest_silence_ns) / 1e9));
    }
    p.last_heard_unix_ns = now;
    switch (message.event_case()) {
      case v1::WorkerMessage::kHello:
        if (!resumed) p.hello = message.hello();
        break;
      case v1::WorkerMessage::kPrepared:
        if (message.prepared().run_id() == run_id_) {
          p.prepared = true;
          p.prepare_response = message.prepared().response();
        }
        break;
      case v1::WorkerMessage::kStarted:
        if (message.started().run_id() == run_id_) {
          p.started = true;
          p.start_lead_ns = message.started().lead_ns();
        }
        break;
      case v1::WorkerMessage::kReports:
        changed = resumed;
        if (sink_ == nullptr) break;
        sink = sink_;
        reports.reserve(message.reports().reports_size());
        for (v1::IntervalReport& report : *message.mutable_reports()->mutable_reports()) {
          if (report.run_id() != run_id_) continue;
          if (report.job_index() < global_index_->size()) report.set_job_index(static_cast<uint32_t>((*global_index_)[report.job_index()]));
          auto remap = [this](google::protobuf::RepeatedField<uint32_t>* phase_jobs) {
            google::protobuf::RepeatedField<uint32_t> jobs;
            for (uint32_t j : *phase_jobs) {
              if (j < global_index_->size()) jobs.Add(static_cast<uint32_t>((*global_index_)[j]));
            }
            phase_jobs->Swap(&jobs);
          };
          for (v1::BlockDeviceStages& device : *report.mutable_block_devices()) remap(device.mutable_jobs());
          for (v1::HostProfile& profile : *report.mutable_profiles()) remap(profile.mutable_jobs());
          reports.push_back(std::move(report));
        }
        break;
      case v1::WorkerMessage::kSummary:
        if (message.summary().run_id() == run_id_ && IsRelay(p)) p.summary = message.summary();
        break;
      case v1::WorkerMessage::kEnded:
        if (message.ended().run_id() == run_id_) p.ended = true;
        break;
      case v1::WorkerMessage::kArrived: {
        const v1::JobArrival& arrival = message.arrived();
        if (!releasing_ || arrival.run_id() != run_id_ || arrival.job_index() == 0 || arrival.job_index() >= phase_jobs_) break;
        p.arrived_at = std::max(p.arrived_at, arrival.job_index());
        if (arrival.not_run()) p.not_run_from = std::min(p.not_run_from, arrival.job_index());
        release = NextReleaseLocked();
        changed = resumed;  // (nothing the phase's thread waits for)
        break;
      }
      case v1::WorkerMessage::kProblem: {
        const v1::SessionProblem& problem = message.problem();
        const absl::Status status(static_cast<absl::StatusCode>(problem.code()), absl::StrCat("worker ", addresses_[worker], ": ", problem.message()));
        if (problem.run_id() == run_id_ && problem.command() == "prepare") p.prepare_status = status;
        if (problem.run_id() == run_id_ && problem.command() == "start") p.start_status = status;
        if (problem.run_id() == run_id_ && problem.command() == "release" && releasing_ && !release_stopped_) {
          // Its tasks would wait at the gate for good: the sequence ends everywhere.
          release_stopped_ = true;
          release.what = ReleaseStep::kStop;
          release.run_id = run_id_;
          release.reason = absl::StrCat("worker ", addresses_[worker], " refused a release (", problem.message(), "): the phases after it are not run");
        }
        break;
      }
      case v1::WorkerMessage::kEcho: {
        const v1::ClockEcho& echo = message.echo();
        changed = resumed || p.round_trip_ns < 0;  // the first: Open waits for every worker's
        p.round_trip_ns = now - echo.controller_send_unix_ns() - (echo.worker_send_unix_ns() - echo.worker_receive_unix_ns());
        p.clock.Add(p.round_trip_ns, ((echo.worker_receive_unix_ns() - echo.controller_send_unix_ns()) + (echo.worker_send_unix_ns() - now)) / 2);
        break;
      }
      case v1::WorkerMessage::EVENT_NOT_SET:
        break;
    }
  }
  if (changed) cv_.notify_all();
  Act(release);
  // Outside the lock: the aggregator has its own, and a thousand sessions report at once.
  if (sink != nullptr && !reports.empty()) sink->Add(worker, std::move(reports));
}

ClusterSession::ReleaseStep ClusterSession::NextReleaseLocked() {
  ReleaseStep step;
  if (!releasing_ || release_stopped_ || released_ + 1 >= phase_jobs_) return step;
  const uint32_t next = released_ + 1;
  // The next job is due once every worker is through the one before: arrived at it, or lost.
  // It starts if all of them will run it; otherwise it runs nowhere, nor do the ones after it:
  // as mdtest stops at its first failure (and its ranks do not go on without one of them), a
  // job that failed on a worker, or a worker lost, ends the sequence — once the job under way
  // has ended everywhere, as a phase whose task fails on one worker ends on the others.
  size_t failed_on = SIZE_MAX, lost = SIZE_MAX;
  for (size_t i = 0; i < peers_.size(); ++i) {
    const Peer& p = peers_[i];
    if (p.closed && !p.ended) {
      if (lost == SIZE_MAX) lost = i;
      continue;
    }
    if (p.arrived_at < next) return step;
    if (p.not_run_from <= next && failed_on == SIZE_MAX) failed_on = i;
  }
  step.run_id = run_id_;
  if (failed_on != SIZE_MAX || lost != SIZE_MAX) {
    release_stopped_ = true;
    step.what = ReleaseStep::kStop;
    step.reason = failed_on != SIZE_MAX ? absl::StrCat("a phase failed on worker ", addresses_[failed_on], ": the phases after it are not run")
                                        : absl::StrCat("worker ", addresses_[lost], " was lost: the phases after it are not run");
    return step;
  }
  released_ = next;
  step.what = ReleaseStep::kRelease;
  step.job = next;
  step.start_unix_ns = absl::ToUnixNanos(absl::Now() + ReleaseLeadLocked());
  return step;
}

void ClusterSession::Act(const ReleaseStep& step) {
  switch (step.what) {
    case ReleaseStep::kNothing:
      return;
    case ReleaseStep::kRelease: {
      v1::ControllerMessage release;
      release.mutable_release()->set_run_id(step.run_id);
      release.mutable_release()->set_job_index(step.job);
      release.mutable_release()->set_start_unix_ns(step.start_unix_ns);
      Broadcast(release);
      return;
    }
    case ReleaseStep::kStop:
      Log(LogLevel::kWarning, absl::StrCat("run ", step.run_id, ": ", step.reason));
      StopAll(step.run_id, step.reason);
      return;
  }
}

absl::Duration ClusterSession::ReleaseLeadLocked() const {
  // Every worker is waiting already, its tasks asleep at the gate (StartGate::OpenWhenArrived):
  // the release only has to reach them all, and wake them, before its instant. A worker it
  // reaches late starts late, and the phase's time (from the instant) counts that against
  // iofleet, never for it. Unlike the start's lead, no prepare comes before it to be waited for.
  // (A lead of at least 1 ms instead of 0.3 changed nothing: two workers on a 2-vCPU VM, 20
  // alternations, the later worker's start 0-263 us after the other's against 0-1,629 us.)
  int64_t slowest_round_trip = 0;
  for (const Peer& p : peers_) slowest_round_trip = std::max(slowest_round_trip, p.round_trip_ns);
  return std::clamp(2 * absl::Nanoseconds(slowest_round_trip) + absl::Microseconds(50) * static_cast<int64_t>(links_.size()),
                    absl::Microseconds(300), absl::Seconds(2));
}

bool ClusterSession::ReleasesJobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Peer& p : peers_) {
    if (!p.hello.has_value() || IsRelay(p)) return false;
    if (std::find(p.hello->features().begin(), p.hello->features().end(), "job-release") == p.hello->features().end()) return false;
  }
  return !peers_.empty();
}

void ClusterSession::OnClosed(const SessionStream& from, const absl::Status& status) {
  const size_t worker = from.worker();
  {
    Link& link = *links_[worker];
    std::lock_guard<std::mutex> lock(link.mu);
    if (from.connection() != link.connection) return;  // an earlier stream, already replaced
    link.client.reset();
    link.pending.reset();
  }
  ReleaseStep release;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Peer& p = peers_[worker];
    // A stream that broke (the connection died, or the worker's side gave up on it) is resumed
    // on a new one; a worker that refused the session or the resume, or ended the session, is
    // lost. So is one before the handshake: it is unreachable.
    const absl::StatusCode code = status.code();
    const bool broken = code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kCancelled ||
                        code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kInternal ||
                        code == absl::StatusCode::kUnknown || code == absl::StatusCode::kAborted;
    // Nothing listens where the worker was (a resume's connection refused): its process is
    // gone, and its session with it.
    const bool gone = p.reconnecting && absl::StrContains(status.message(), "Connection refused");
    if (!closing_ && p.hello.has_value() && !p.closed && broken && !gone) {
      const int64_t now = absl::ToUnixNanos(absl::Now());
      if (!p.reconnecting) {
        p.reconnecting = true;
        p.cut_by = status;
        p.next_attempt_unix_ns = now;
      } else {
        p.next_attempt_unix_ns = now + absl::ToInt64Nanoseconds(absl::Milliseconds(250));  // a failed attempt: again shortly
      }
      p.attempt_pending = false;
    } else {
      p.closed = true;
      p.reconnecting = false;
      if (gone) {
        p.lost = absl::UnavailableError(absl::StrCat("worker ", addresses_[worker], ": its stream ended (", p.cut_by.message(),
                                                     ") and nothing listens there any more (connection refused): the worker process is gone"));
      } else if (p.lost.ok()) {
        p.lost = status.ok() ? absl::UnavailableError(absl::StrCat("worker ", addresses_[worker], ": the worker ended the session")) : status;
      }
      release = NextReleaseLocked();  // the others must not wait for it at the next phase
    }
  }
  cv_.notify_all();
  keeper_cv_.notify_all();
  Act(release);
}

void ClusterSession::Send(size_t worker, v1::ControllerMessage message) {
  Link& link = *links_[worker];
  std::lock_guard<std::mutex> lock(link.mu);
  std::shared_ptr<const v1::ControllerMessage> numbered = link.replay.Number(std::move(message));
  if (link.client != nullptr) link.client->Send(*numbered);
}

void ClusterSession::Broadcast(const v1::ControllerMessage& message) {
  for (size_t i = 0; i < links_.size(); ++i) Send(i, message);
}

void ClusterSession::Reconnect(size_t worker) {
  Link& link = *links_[worker];
  uint64_t connection = 0;
  {
    std::lock_guard<std::mutex> lock(link.mu);
    connection = ++link.connection;
    link.client.reset();
    link.pending.reset();
  }
  auto stream = std::make_shared<SessionClient>(stubs_[worker].get(), worker, addresses_[worker], security_, static_cast<SessionEvents*>(this), connection,
                                                /*wait_for_ready=*/false);
  uint64_t received = 0;
  {
    std::lock_guard<std::mutex> lock(link.mu);
    if (link.connection == connection) link.pending = stream;
    received = link.replay.received();
  }
  stream->Send(ResumeHello(worker, received));  // unnumbered: it opens the stream, it is not part of the session
  KeepStream(std::move(stream));
}

void ClusterSession::StopAll(const std::string& run_id, const std::string& reason, v1::StopCause cause) {
  v1::ControllerMessage stop;
  stop.mutable_stop()->set_run_id(run_id);
  stop.mutable_stop()->set_reason(reason);
  stop.mutable_stop()->set_cause(cause);
  Broadcast(stop);
}

void ClusterSession::Keep() {
  // Two beats and a fifth to a lease: a worker's lease survives one probe lost or a second
  // late. Not more often: at a thousand workers each probe is a write that wakes its worker,
  // and probes every lease/5 cost the controller 2 points of a core more during a run
  // (bench/scale_bench.sh 1024: 12.2-12.5% -> 10.1-10.4%).
  const int64_t beat = absl::ToInt64Nanoseconds(std::min(options_.lease * 2 / 5, absl::Seconds(2)));
  const int64_t lease = absl::ToInt64Nanoseconds(options_.lease);
  // When the last two probes went out: a worker up has been heard since the earlier.
  int64_t previous_probe = 0, last_probe = 0;
  int64_t next_probe = 0;
  uint64_t probes_sent = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!closing_) {
    int64_t now = absl::ToUnixNanos(absl::Now());
    if (now >= next_probe) {
      // A probe renews the workers' leases, acknowledges what they sent, and measures round
      // trips and clock offsets. Every kProbesPerFullRound-th asks every worker for an answer; the
      // others only the workers that have sent nothing since the previous one (a worker whose
      // reports flow is heard anyway): so an alive worker is heard at least once in any two
      // beats, and a frozen one drops out of `up` within three.
      v1::ControllerMessage probe;
      size_t up = 0;
      for (const Peer& p : peers_) {
        // Silence alone never makes a worker lost — a busy host is slow, not gone.
        if (!p.closed && !p.reconnecting) up += p.last_heard_unix_ns >= previous_probe;
      }
      previous_probe = last_probe;
      last_probe = now;
      probe.mutable_probe()->set_sequence(++probes_sent);
      probe.mutable_probe()->set_controller_send_unix_ns(now);
      probe.mutable_probe()->set_answer_only_if_silent(probes_sent % kProbesPerFullRound != 1);
      next_probe = now + beat;
      lock.unlock();
      Broadcast(probe);
      if (options_.metrics != nullptr) {
        options_.metrics->Gauge("iofleet_cluster_workers_up", "Workers whose session is open and answering").Set(static_cast<double>(up));
      }
      lock.lock();
      now = absl::ToUnixNanos(absl::Now());
    }
    // Sessions whose stream is gone: resumed on a new one, until two leases have passed since
    // the worker was last heard. Its runs have stopped by then (it renews them only on our
    // messages); the second lease is for a saturated worker host, whose threads run seconds
    // late and whose lease clock does not count that (worker/awake_clock.h).
    std::vector<size_t> attempt, give_up;
    int64_t wake = next_probe;
    for (size_t i = 0; i < peers_.size(); ++i) {
      Peer& p = peers_[i];
      if (!p.reconnecting) continue;
      if (now - p.last_heard_unix_ns > 2 * lease) {
        p.reconnecting = false;
        p.closed = true;
        p.lost = absl::UnavailableError(absl::StrCat(
            "worker ", addresses_[i], ": not heard for two leases (", absl::FormatDuration(2 * options_.lease),
            "): its connection was gone and the session could not be resumed (the stream ended: ", p.cut_by.message(), ")"));
        give_up.push_back(i);
      } else if (listener_ == nullptr && !p.attempt_pending && now >= p.next_attempt_unix_ns) {
        p.attempt_pending = true;
        attempt.push_back(i);
      } else {
        // A worker that dialled in dials again itself; we only wait for it.
        wake = std::min(wake, p.attempt_pending || listener_ != nullptr ? p.last_heard_unix_ns + 2 * lease + 1 : p.next_attempt_unix_ns);
      }
    }
    if (!attempt.empty() || !give_up.empty()) {
      lock.unlock();
      for (size_t i : attempt) Reconnect(i);
      for (size_t i : give_up) {
        std::lock_guard<std::mutex> link_lock(links_[i]->mu);
        ++links_[i]->connection;  // nothing from its streams is heard any more
        if (links_[i]->pending != nullptr) links_[i]->pending->Cancel();
        links_[i]->pending.reset();
      }
      if (!give_up.empty()) cv_.notify_all();
      lock.lock();
      continue;
    }
    keeper_cv_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(wake - now, 1'000'000)));
  }
}

PhaseOutcome ClusterSession::RunPhase(const v1::RunSpec& phase_spec, const std::vector<size_t>& global_index,
                                      const std::string& run_id, RunAggregator* aggregator, v1::RunReport* report) {
  PhaseOutcome outcome;
  // Reports of this phase stop reaching the aggregator when it returns.
  struct End {
    ClusterSession* s;
    ~End() { s->EndPhase(); }
  } end{this};
  // The session's interval, not the report's: a caller's report for one phase (mdtest's) need
  // not carry it, and a relay refuses a preparation without one.
  const PhasePreparation preparation = PreparePhase(phase_spec, global_index, run_id, aggregator, PhasePlacement{},
                                                    static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.interval)), nullptr);
  if (!preparation.ok()) {
    for (const std::string& f : preparation.failures) report->add_problems(f);
    if (preparation.interrupted) report->add_problems("interrupted by the user before the phase started");
    outcome.prepared = false;
    outcome.interrupted = preparation.interrupted;
    return outcome;
  }
  NoteFacts(report);
  aggregator->MarkArmed();  // (--target-metrics takes its baseline: before the instant is picked)
  const int64_t start = StartInstant();
  outcome.start_unix_ns = start;
  for (size_t j : global_index) aggregator->MarkStarted(j, start);
  StartPhase(run_id, start);
  const PhaseEnd phase_end = AwaitPhase(run_id);
  for (const std::string& p : phase_end.problems) report->add_problems(p);
  outcome.aborted = phase_end.aborted;
  NoteClocks(report, *aggregator, global_index);
  MarkHostDifferences(report);
  outcome.interrupted = phase_end.interrupted || g_interrupted;
  return outcome;
}

ClusterSession::PhasePreparation ClusterSession::PreparePhase(const v1::RunSpec& phase_spec, const std::vector<size_t>& global_index,
                                                              const std::string& run_id, ReportSink* sink, const PhasePlacement& placement,
                                                              uint64_t interval_ns, const std::function<bool()>& given_up) {
  const size_t n = links_.size();
  std::vector<uint32_t> first_index(n);
  uint32_t total = 0;
  // --block-stages: one worker per host traces its block devices (every worker of a host would
  // see all of the host's requests, and the cluster would count them as often as it has
  // workers there); a relay decides the same among its own workers.
  const bool block_stages = options_.block_stages || phase_spec.block_stages();
  const bool profile = options_.profile || phase_spec.profile();  // host-wide too
  std::vector<bool> traces_blocks(n, false);
  absl::flat_hash_set<std::string> hosts_seen;  // one set, not a look back over every earlier worker
  {
    std::lock_guard<std::mutex> lock(mu_);
    run_id_ = run_id;
    global_index_ = &global_index;
    sink_ = sink;
    releasing_ = phase_spec.jobs_released();
    release_stopped_ = false;
    phase_jobs_ = static_cast<uint32_t>(phase_spec.jobs_size());
    released_ = 0;
    for (size_t i = 0; i < n; ++i) {
      Peer& p = peers_[i];
      p.prepared = p.started = p.ended = false;
      p.prepare_response.reset();
      p.summary.reset();
      p.prepare_status = p.start_status = absl::OkStatus();
      p.arrived_at = 0;
      p.not_run_from = UINT32_MAX;
      // A relay's workers take consecutive indices.
      first_index[i] = placement.first_index + total;
      total += Weight(p);
      // A relay or a worker not heard from yet decides for itself.
      if (block_stages || profile) traces_blocks[i] = !p.hello || IsRelay(p) || hosts_seen.insert(p.hello->hostname()).second;
    }
  }
  if (placement.worker_count > 0) total = placement.worker_count;

  // Everywhere; the first failure gives the others' preparation up at once.
  for (size_t i = 0; i < n; ++i) {
    v1::ControllerMessage prepare;
    v1::PrepareRequest* request = prepare.mutable_prepare();
    request->set_run_id(run_id);
    *request->mutable_spec() = phase_spec;
    request->mutable_spec()->set_block_stages(block_stages && traces_blocks[i]);
    request->mutable_spec()->set_profile(profile && traces_blocks[i]);
    request->set_worker_index(first_index[i]);
    request->set_worker_count(total);
    request->set_interval_ns(interval_ns);
    request->set_lease_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.lease)));
    Send(i, std::move(prepare));
  }
  auto failed = [&](const Peer& p) { return !p.prepare_status.ok() || (!p.prepared && p.closed); };
  WaitUntil([&] {
    if (given_up && given_up()) return true;
    bool all = true;
    for (const Peer& p : peers_) {
      if (failed(p)) return true;
      all &= p.prepared;
    }
    return all;
  }, absl::Minutes(30), true);
  PhasePreparation preparation;
  preparation.interrupted = g_interrupted;
  const bool abandoned = given_up && given_up();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < n; ++i) {
      const Peer& p = peers_[i];
      if (!p.prepare_status.ok()) preparation.failures.push_back(std::string(p.prepare_status.message()));
      else if (!p.prepared && p.closed) preparation.failures.push_back(std::string(p.lost.message()));
    }
  }
  if (preparation.failures.empty() && !preparation.interrupted && !abandoned) return preparation;
  StopAll(run_id, preparation.interrupted ? "interrupted by the user (Ctrl-C)"
                  : abandoned             ? "the controller gave the preparation up"
                                          : "another worker failed to prepare");
  // Wait for the others' answers (prepared, or their layout given up) so none is left half-made.
  WaitUntil([&] {
    for (const Peer& p : peers_) {
      if (!p.prepared && p.prepare_status.ok() && !p.closed) return false;
    }
    return true;
  }, absl::Seconds(30), false);
  size_t stopped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Peer& p : peers_) stopped += p.prepare_status.code() == absl::StatusCode::kCancelled;
  }
  if (!preparation.failures.empty() && stopped > 0) {
    preparation.failures.push_back(absl::StrCat("preparation stopped on ", stopped, " other worker(s) at once, so nothing runs"));
  }
  if (abandoned && preparation.failures.empty()) preparation.failures.push_back("the controller gave the preparation up");
  return preparation;
}

void ClusterSession::NoteFacts(v1::RunReport* report) {
  // Host facts once, targets as each phase names them.
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < peers_.size() && static_cast<int>(i) < report->workers_size(); ++i) {
    if (!peers_[i].prepare_response.has_value()) continue;
    v1::HostFacts* facts = report->mutable_workers(static_cast<int>(i))->mutable_facts();
    const auto known_targets = facts->targets();
    const v1::HostFacts& fresh = peers_[i].prepare_response->facts();
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
}

std::vector<v1::PrepareResponse> ClusterSession::PrepareResponses() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<v1::PrepareResponse> responses;
  for (const Peer& p : peers_) responses.push_back(p.prepare_response.value_or(v1::PrepareResponse()));
  return responses;
}

absl::Duration ClusterSession::StartLead() const {
  // Far enough ahead for the slowest round trip measured (at least 3 ms, at most 2 s ahead): an
  // mdtest run starts a phase per operation, and each waits this long before it starts. Every
  // worker is armed already (it answered "prepared"); its mdtest tasks spin the last 2 ms before
  // the instant, rehearsing. Short matters: mdtest goes from one phase to the next within
  // microseconds, with what the last phase touched still in the CPU caches, and a phase of a few
  // ms that comes after a pause runs slower, mdtest's own too (README). With 10 ms here instead of
  // 3, two tasks on tmpfs removed 2,000 directories each at 0.82x mdtest's rate instead of
  // 0.92-0.98x (9 alternations, 2026-11-28).
  int64_t slowest_round_trip = 0, relays_lead = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Peer& p : peers_) {
      slowest_round_trip = std::max(slowest_round_trip, p.round_trip_ns);
      // A relay passes the instant on to its workers: it needs to hear of it that much earlier.
      if (p.prepare_response.has_value()) relays_lead = std::max(relays_lead, p.prepare_response->start_lead_ns());
    }
  }
  // Besides the round trip, the command goes out to n workers one after another and each of
  // them must be scheduled to read it: 0.25 ms a worker (256 workers: +64 ms).
  const absl::Duration own =
      std::clamp(4 * absl::Nanoseconds(slowest_round_trip) + absl::Milliseconds(3) + absl::Microseconds(250) * static_cast<int64_t>(links_.size()),
                 absl::Milliseconds(3), absl::Seconds(2));
  // (A relay's own lead is clamped the same way, so each level adds at most 2 s.)
  return own + std::clamp(absl::Nanoseconds(relays_lead), absl::ZeroDuration(), absl::Seconds(10));
}

int64_t ClusterSession::StartInstant() const { return absl::ToUnixNanos(absl::Now() + StartLead()); }

void ClusterSession::StartPhase(const std::string& run_id, int64_t start_unix_ns) {
  v1::ControllerMessage start_message;
  start_message.mutable_start()->set_run_id(run_id);
  start_message.mutable_start()->set_start_unix_ns(start_unix_ns);
  Broadcast(start_message);
}

ClusterSession::PhaseEnd ClusterSession::AwaitPhase(const std::string& run_id) {
  // Until every worker has delivered the phase's reports or is lost; Ctrl-C stops them all,
  // whose final reports still come.
  PhaseEnd end;
  const size_t n = links_.size();
  bool stopped = false, start_problems_reported = false;
  std::vector<bool> late_noted(n, false);
  while (true) {
    // A worker that could not start has nothing to deliver (the others are stopped for it).
    auto finished = [](const Peer& p) { return p.ended || p.closed || !p.start_status.ok(); };
    WaitUntil([&] {
      for (const Peer& p : peers_) {
        if (!finished(p)) return false;
      }
      return true;
    }, absl::Milliseconds(500), true);
    std::vector<std::string> start_failures;
    bool done = true, any_lost = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < n; ++i) {
        const Peer& p = peers_[i];
        done &= finished(p);
        any_lost |= p.closed && !p.ended;
        if (!p.start_status.ok() && !start_problems_reported) start_failures.push_back(std::string(p.start_status.message()));
        if (p.started && p.start_lead_ns < 0 && !late_noted[i]) {
          late_noted[i] = true;
          Log(LogLevel::kWarning, absl::StrCat("worker ", addresses_[i], " got the start request ", -p.start_lead_ns / 1000000, " ms late"));
        }
      }
    }
    if (!start_failures.empty()) {
      start_problems_reported = true;
      for (std::string& f : start_failures) end.problems.push_back(std::move(f));
      if (!stopped) StopAll(run_id, "another worker failed to start");
      stopped = true;
    }
    if (options_.abort_on_worker_loss && any_lost && !end.aborted) {
      end.aborted = true;
      std::string lost_address;
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (size_t i = 0; i < n && lost_address.empty(); ++i) {
          if (peers_[i].closed && !peers_[i].ended) lost_address = addresses_[i];
        }
      }
      end.problems.push_back(absl::StrCat("aborted (--on-worker-loss=abort): worker ", lost_address, " was lost"));
      StopAll(run_id, "aborted: another worker was lost");
    }
    if (done) break;
    if (g_interrupted && !end.interrupted) {
      end.interrupted = true;
      std::cerr << "iofleet: interrupted; stopping the workers and reporting what was measured\n";
      StopAll(run_id, "interrupted by the user (Ctrl-C)");
    }
  }
  StopAll(run_id, "run complete");
  return end;
}

void ClusterSession::EndPhase() {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = nullptr;
  global_index_ = nullptr;
  releasing_ = false;
}

std::vector<ClusterSession::PeerState> ClusterSession::PeerStates() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PeerState> states;
  for (size_t i = 0; i < peers_.size(); ++i) {
    const Peer& p = peers_[i];
    PeerState& state = states.emplace_back();
    state.address = addresses_[i];
    if (p.hello) state.hello = *p.hello;
    state.lost = p.closed && !p.ended ? (p.lost.ok() ? absl::UnavailableError("its session ended early") : p.lost) : absl::OkStatus();
    state.ended = p.ended;
    state.clock_offset_ns = p.clock.offset_ns();
    state.round_trip_ns = p.round_trip_ns;
    state.start_lead_ns = p.start_lead_ns;
    state.started = p.started;
    state.summary = p.summary;
  }
  return states;
}

void ClusterSession::NoteClocks(v1::RunReport* report, const RunAggregator& aggregator, const std::vector<size_t>& jobs) {
  std::lock_guard<std::mutex> lock(mu_);
  // The real start of each worker, on the controller's clock: its threads' lateness by its own
  // clock, less how far its clock is ahead (it read the instant off that clock).
  int64_t earliest = std::numeric_limits<int64_t>::max(), latest = std::numeric_limits<int64_t>::min();
  uint32_t late_starts = 0;
  // Intervals are cut by each worker's own clock: one that is off by more than 1% of an
  // interval puts its reports that much beside the others'.
  const int64_t tolerance = absl::ToInt64Nanoseconds(options_.interval) / 100;
  auto check_clock = [&](const std::string& address, int64_t offset_ns, int64_t round_trip_ns, size_t key) {
    // The estimate is uncertain by half the round trip: only an offset beyond that counts.
    if (std::abs(offset_ns) - round_trip_ns / 2 > tolerance && clock_warned_.insert(key).second) {
      report->add_problems(absl::StrFormat(
          "worker %s: its clock is %.1f ms %s the controller's (round trip %.1f ms), more than 1%% of the %s interval: its "
          "intervals are cut that far from the others' (synchronize the hosts' clocks, e.g. chrony)",
          address, std::abs(static_cast<double>(offset_ns)) / 1e6, offset_ns > 0 ? "ahead of" : "behind",
          static_cast<double>(round_trip_ns) / 1e6, absl::FormatDuration(options_.interval)));
    }
  };
  auto note_start = [&](int64_t offset) {
    earliest = std::min(earliest, offset);
    latest = std::max(latest, offset);
  };
  // Each relayed worker once per run, however many phases and relays: found by index and
  // address (10,000 behind 100 relays were 5e7 comparisons a phase by scanning).
  RelayedIndex relayed;
  for (int k = 0; k < report->relayed_workers_size(); ++k) {
    relayed.try_emplace(std::pair(report->relayed_workers(k).worker_index(), report->relayed_workers(k).address()), k);
  }
  for (size_t i = 0; i < peers_.size() && static_cast<int>(i) < report->workers_size(); ++i) {
    const Peer& p = peers_[i];
    v1::WorkerInfo* info = report->mutable_workers(static_cast<int>(i));
    if (p.round_trip_ns < 0) continue;
    info->set_clock_offset_ns(p.clock.offset_ns());
    info->set_round_trip_ns(p.round_trip_ns);
    info->set_start_lead_ns(p.start_lead_ns);
    info->set_session_resumes(p.resumes);
    info->set_longest_silence_ns(p.longest_silence_ns);
    if (IsRelay(p)) {
      // The workers behind it: their offsets are to the relay's clock, whose own is to ours.
      if (p.summary.has_value()) NoteRelayed(*p.summary, addresses_[i], p, &relayed, report);
      if (!p.summary.has_value() || !p.started) continue;
      for (const v1::RelayedWorkerSummary& w : p.summary->workers()) {
        const int64_t offset = w.clock_offset_ns() + p.clock.offset_ns();
        check_clock(w.address(), offset, w.round_trip_ns() + p.round_trip_ns, (static_cast<size_t>(i) << 32) + 1 + w.worker_index());
        if (!w.lost().empty() && w.elapsed_ns() == 0) continue;
        note_start(w.start_late_ns() - offset);
        late_starts += w.start_lead_ns() < 0;
      }
      continue;
    }
    if (std::optional<int64_t> late = aggregator.StartLateNs(i, jobs); late.has_value() && p.started) {
      const int64_t offset = *late - p.clock.offset_ns();
      info->set_start_offset_ns(offset);
      note_start(offset);
      late_starts += p.start_lead_ns < 0;
    }
    check_clock(addresses_[i], p.clock.offset_ns(), p.round_trip_ns, i << 32);
  }
  if (latest >= earliest) {
    report->set_start_skew_ns(latest - earliest);
    report->set_late_starts(late_starts);
  }
}

void ClusterSession::NoteRelayed(const v1::RelaySummary& summary, const std::string& relay, const Peer& p, RelayedIndex* known,
                                 v1::RunReport* report) {
  for (const v1::RelayedWorkerSummary& w : summary.workers()) {
    auto [at, first] = known->try_emplace(std::pair(w.worker_index(), w.address()), report->relayed_workers_size());
    v1::RelayedWorkerSummary* into = first ? nullptr : report->mutable_relayed_workers(at->second);
    if (into == nullptr) {
      // First phase: as the relay said, on our clock, the relay named.
      into = report->add_relayed_workers();
      *into = w;
      into->add_relays(relay);
      into->set_clock_offset_ns(w.clock_offset_ns() + p.clock.offset_ns());
      into->set_round_trip_ns(w.round_trip_ns() + p.round_trip_ns);
      continue;
    }
    // A later phase of the same run: its figures add up; latencies keep the worst phase's.
    into->set_ops(into->ops() + w.ops());
    into->set_bytes(into->bytes() + w.bytes());
    into->set_errors(into->errors() + w.errors());
    into->set_elapsed_ns(into->elapsed_ns() + w.elapsed_ns());
    into->set_latency_p50_ns(std::max(into->latency_p50_ns(), w.latency_p50_ns()));
    into->set_latency_p99_ns(std::max(into->latency_p99_ns(), w.latency_p99_ns()));
    into->set_late_intervals(into->late_intervals() + w.late_intervals());
    if (into->lost().empty()) into->set_lost(w.lost());
    if (into->stop_reason().empty()) {
      into->set_stop_reason(w.stop_reason());
      into->set_stop_cause(w.stop_cause());
    }
  }
}

void ClusterSession::ReportIncompleteWorkers(const RunAggregator& aggregator, v1::RunReport* report) const {
  uint32_t completed = 0, expected = 0;
  for (size_t i = 0; i < links_.size(); ++i) {
    std::optional<v1::RelaySummary> relayed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      expected += Weight(peers_[i]);
      if (IsRelay(peers_[i])) relayed = peers_[i].summary;
    }
    if (aggregator.WorkerComplete(i) && relayed.has_value()) {
      // A relay that delivered everything it had: its workers say for themselves.
      for (const v1::RelayedWorkerSummary& w : relayed->workers()) {
        if (w.lost().empty()) {
          ++completed;
        } else {
          report->add_problems(absl::StrCat("worker ", w.address(), " (behind relay ", addresses_[i], ") lost: ", w.lost(),
                                            ": its figures cover only the intervals received"));
        }
      }
      continue;
    }
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
    std::string run_id;
    absl::Status lost;
    {
      std::lock_guard<std::mutex> lock(mu_);
      run_id = run_id_;
      lost = peers_[i].lost;
    }
    if (!run_id.empty() && i < stubs_.size()) {
      // On the session's channel, waiting up to a second for it to reconnect (a restarted
      // worker listens again at once). (A worker that dialled in cannot be asked.)
      grpc::ClientContext context;
      if (!security_.token.empty()) context.AddMetadata(kTokenMetadataKey, security_.token);
      context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
      context.set_wait_for_ready(true);
      v1::HeartbeatRequest request;
      request.set_run_id(run_id);
      v1::HeartbeatResponse response;
      const grpc::Status asked = stubs_[i]->Heartbeat(&context, request, &response);
      if (asked.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        now = absl::StrCat("; it answers again and says: ", asked.error_message());
      } else if (asked.error_code() == grpc::StatusCode::NOT_FOUND) {
        now = absl::StrCat("; it answers again but has no record of run ", run_id,
                           ": it was restarted (or another worker now listens there), and does no IO for this run");
      } else if (!asked.ok()) {
        now = "; it does not answer now either";
      }
    }
    report->add_problems(absl::StrCat("worker ", addresses_[i], " lost", when, " (",
                                      lost.ok() ? "its session ended early" : absl::StripPrefix(lost.message(), absl::StrCat("worker ", addresses_[i], ": ")),
                                      "): its figures cover only the intervals received", now));
  }
  report->set_workers_completed(completed);
  report->set_workers_expected(expected);
  ReportLeaseStops(*report, report);
}

void ReportLeaseStops(const v1::RunReport& figures, v1::RunReport* report) {
  // A worker that stopped on its lease delivered what it measured, but stopped measuring before
  // its jobs' end (its controller, or relay, was silent for a lease as it saw it, or its relay's
  // controller was and the relay stopped it: STOP_CAUSE_LEASE_EXPIRED either way): the run is
  // short of it, which its totals alone do not show. Named once per worker, with the first
  // reason in words.
  constexpr size_t kNamed = 5;
  std::vector<std::string> named;
  std::string reason;
  size_t stopped = 0;
  absl::flat_hash_set<std::string> seen;
  auto note = [&](const std::string& who, v1::StopCause cause, const std::string& why) {
    if (cause != v1::STOP_CAUSE_LEASE_EXPIRED || !seen.insert(who).second) return;
    if (stopped++ == 0) reason = Printable(why);
    if (named.size() < kNamed) named.push_back(Printable(who));
  };
  // A relay's results merge its workers' (its stop reason is theirs): its workers are named.
  absl::flat_hash_set<std::string> relays;
  for (const v1::RelayedWorkerSummary& w : figures.relayed_workers()) relays.insert(w.relays().begin(), w.relays().end());
  for (const v1::JobResult& job : figures.jobs()) {
    for (const v1::WorkerResult& w : job.workers()) {
      if (!relays.contains(w.worker())) note(w.worker(), w.stop_cause(), w.stop_reason());
    }
  }
  for (const v1::RelayedWorkerSummary& w : figures.relayed_workers()) {
    note(absl::StrCat(w.address(), " (behind ", absl::StrJoin(w.relays(), ", "), ")"), w.stop_cause(), w.stop_reason());
  }
  if (stopped == 0) return;
  report->add_problems(absl::StrCat(stopped, stopped == 1 ? " worker" : " workers", " stopped before the jobs' end (", reason, "): ",
                                    absl::StrJoin(named, ", "), stopped > named.size() ? absl::StrCat(" and ", stopped - named.size(), " more") : "",
                                    "; their figures cover only the time until then"));
}

}  // namespace iofleet
