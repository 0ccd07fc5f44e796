#include "worker/worker_service.h"

#include "common/hostname.h"

#include "worker/session_writer.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "common/transport_security.h"
#include "engines/engine_registry.h"
#include "google/protobuf/util/message_differencer.h"
#include "job/run_limits.h"
#include "worker/host_facts.h"
#include "worker/request_validation.h"
#include "worker/session_run.h"

namespace iofleet {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

std::string KernelRelease() {
  struct utsname u;
  return ::uname(&u) == 0 ? std::string(u.sysname) + " " + u.release : "unknown";
}

}  // namespace

WorkerServiceImpl::WorkerServiceImpl(PathPolicy policy, ProtocolVersions versions, std::string token, IntervalMetrics* metrics,
                                     uint64_t max_run_memory)
    : policy_(std::move(policy)), versions_(versions), token_(std::move(token)), metrics_(metrics), max_run_memory_(max_run_memory) {
  lease_watchdog_ = std::thread([this] { WatchLeases(); });
}

WorkerServiceImpl::~WorkerServiceImpl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    watchdog_cv_.notify_all();
  }
  lease_watchdog_.join();
  StopAll("worker shutting down");
  // Sessions kept for a resume hold this service as their backend: they end first.
  sessions_.CloseAll();
}

void WorkerServiceImpl::WatchLeases() {
  std::unique_lock<std::mutex> lock(mu_);
  auto asleep = AwakeClock::Steady::now();
  std::chrono::nanoseconds tick = std::chrono::seconds(1);
  while (true) {
    watchdog_cv_.wait_for(lock, tick, [this] { return shutting_down_ || runs_added_; });
    if (shutting_down_) break;
    runs_added_ = false;
    // How late this tick came is how long the worker could not run: not counted in leases (a
    // wake before the tick, for a new run, oversleeps nothing).
    const auto awake = AwakeClock::Steady::now();
    AwakeClock::NoteSleep(tick, awake - asleep);
    // A tenth of the shortest lease (a run stops within 10% of its lease, and a pause costs it
    // at most that; 500 ms for the default), a second without runs: a thousand idle workers on
    // one host wake rarely.
    tick = std::chrono::seconds(1);
    for (const auto& [id, run] : runs_) tick = std::min<std::chrono::nanoseconds>(tick, std::max<std::chrono::nanoseconds>(run->lease() / 10, std::chrono::milliseconds(50)));
    // The runs are checked without the service lock held, so a run busy cutting an interval
    // never holds up the RPCs that look runs up.
    std::vector<std::pair<std::string, std::shared_ptr<WorkerRun>>> runs(runs_.begin(), runs_.end());
    lock.unlock();
    const auto now = AwakeClock::Now();
    std::vector<std::string> done;
    for (const auto& [id, run] : runs) {
      if (!run->LeaseExpired(now)) continue;
      ExpireLease(id, *run);
      // Forget the run once it has wound down; a stream still reading holds its own reference.
      if (run->finished()) done.push_back(id);
    }
    sessions_.ForgetExpired();
    lock.lock();
    for (const std::string& id : done) {
      runs_.erase(id);
      streamed_.erase(id);
    }
    asleep = AwakeClock::Steady::now();
  }
}

void WorkerServiceImpl::ExpireLease(const std::string& run_id, WorkerRun& run) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ended_.count(run_id)) return;
    RememberEnded(run_id, absl::StrCat("its lease expired at ", absl::FormatTime("%H:%M:%E3S UTC", absl::Now(), absl::UTCTimeZone()),
                                       " (no heartbeat from the controller for ", absl::FormatDuration(absl::FromChrono(run.lease())),
                                       "), so this worker stopped its IO and dropped the run"));
  }
  if (!run.finished()) {
    Log(LogLevel::kWarning, absl::StrCat("run ", run_id, ": no heartbeat from the controller within the lease; stopping its IO"));
    run.Stop("lease expired: the controller stopped sending heartbeats", v1::STOP_CAUSE_LEASE_EXPIRED);
  }
}

void WorkerServiceImpl::RememberEnded(const std::string& run_id, const std::string& why) {
  constexpr size_t kRemembered = 1024;
  if (!ended_.emplace(run_id, why).second) return;
  ended_order_.push_back(run_id);
  if (ended_order_.size() > kRemembered) {
    ended_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
}

bool WorkerServiceImpl::Ended(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_.count(run_id) > 0;
}

absl::Status WorkerServiceImpl::NoRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = ended_.find(run_id); it != ended_.end()) {
    return absl::FailedPreconditionError(absl::StrCat("run ", run_id, " ended on this worker: ", it->second));
  }
  return absl::NotFoundError(absl::StrCat("this worker has no run ", run_id, " (never prepared here, or the worker was restarted since)"));
}

grpc::Status WorkerServiceImpl::Authorize(const grpc::ServerContext* context) const {
  if (token_.empty()) return grpc::Status::OK;
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kTokenMetadataKey);
  if (it != metadata.end() && TokensEqual(std::string(it->second.data(), it->second.size()), token_)) return grpc::Status::OK;
  Log(LogLevel::kWarning, absl::StrCat("refused a call from ", context->peer(), ": ", it == metadata.end() ? "no token" : "wrong token"));
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "this worker needs the controller's --token-file (missing or wrong token)");
}

std::shared_ptr<ZoneRegistry> WorkerServiceImpl::ZonesOf(const std::string& run_group) {
  if (run_group.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(zone_groups_mu_);
  for (const auto& [group, zones] : zone_groups_) {
    if (group == run_group) return zones;
  }
  if (zone_groups_.size() >= kZoneGroupsKept) zone_groups_.pop_front();
  zone_groups_.emplace_back(run_group, std::make_shared<ZoneRegistry>());
  return zone_groups_.back().second;
}

std::shared_ptr<WorkerRun> WorkerServiceImpl::FindRun(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = runs_.find(run_id);
  return it == runs_.end() ? nullptr : it->second;
}

void WorkerServiceImpl::StopAll(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, run] : runs_) run->Stop(reason, v1::STOP_CAUSE_SHUTDOWN);
}

grpc::Status WorkerServiceImpl::Hello(grpc::ServerContext* context, const v1::HelloRequest* request,
                                      v1::HelloResponse* response) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  return ToGrpc(DoHello(*request, response));
}

absl::Status WorkerServiceImpl::DoHello(const v1::HelloRequest& request, v1::HelloResponse* response) {
  response->set_protocol_version(versions_.version);
  response->set_min_compatible_version(versions_.min_compatible);
  response->set_worker_version(kIofleetVersion);
  response->set_hostname(LocalHostname());
  response->set_cores(std::thread::hardware_concurrency());
  response->set_kernel(KernelRelease());
  response->set_pid(static_cast<uint32_t>(::getpid()));
  for (const std::string& name : EngineNames()) response->add_engines(name);
  for (const std::string& root : policy_.roots()) response->add_allowed_roots(root);
  for (const char* feature : {"interval-histograms", "lease", "timed-start", "job-release"}) response->add_features(feature);
  // An incompatible controller gets a clear refusal; the response still says who we are.
  return CheckProtocolCompatible(versions_, "worker", {request.protocol_version(), request.min_compatible_version()},
                                 absl::StrCat("controller on ", request.controller_host()));
}

grpc::Status WorkerServiceImpl::Prepare(grpc::ServerContext* context, const v1::PrepareRequest* request,
                                        v1::PrepareResponse* response) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  if (request->spec().jobs_released()) {
    // Arrivals and releases travel on a session; a run prepared by this call would wait at its
    // second job for a release nothing can send.
    return ToGrpc(absl::InvalidArgumentError("jobs_released: a run whose jobs the controller releases is prepared over a session (Session), not by Prepare"));
  }
  // A long layout stops when the controller cancels the call (another worker was lost).
  return ToGrpc(DoPrepare(*request, response, [context] { return context->IsCancelled(); }));
}

absl::Status WorkerServiceImpl::DoPrepare(const v1::PrepareRequest& prepare, v1::PrepareResponse* response,
                                          const std::function<bool()>& cancelled) {
  const v1::PrepareRequest* request = &prepare;
  // Every field is checked here, by the same rules as the controller's, before anything is
  // allocated or touched: a request may come from anything that holds the token.
  if (absl::Status valid = ValidatePrepareRequest(*request); !valid.ok()) return valid;
  if (auto existing = FindRun(request->run_id())) {
    // Idempotent: the same request again gets the same answer; a different one is refused.
    if (!google::protobuf::util::MessageDifferencer::Equals(existing->request(), *request)) {
      return absl::AlreadyExistsError(absl::StrCat("run ", request->run_id(), " was prepared with a different job"));
    }
    *response = existing->prepared();
    return absl::OkStatus();
  }
  if (Ended(request->run_id())) return NoRun(request->run_id());
  {
    // The runs going at once stay within --max-run-memory. Runs that have finished (kept until
    // their lease lapses) hold no IO buffers any more, so a run right after another (compare
    // --repeat) is not refused for the previous one.
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t held = EstimateRunMemory(request->spec());
    size_t others = 0;
    for (const auto& [id, run] : runs_) {
      if (run->finished()) continue;
      const uint64_t estimate = EstimateRunMemory(run->request().spec());
      held = held > UINT64_MAX - estimate ? UINT64_MAX : held + estimate;
      ++others;
    }
    if (absl::Status fits = CheckRunMemory(held, max_run_memory_); !fits.ok()) {
      return others == 0 ? fits
                         : absl::Status(fits.code(), absl::StrCat(fits.message(), " (counting the ", others, " other run(s) this worker is running)"));
    }
  }
  auto layout = LayOutRunFiles(*request, policy_, cancelled);
  if (!layout.ok()) return layout.status();
  // Host facts ride along with the targets the layout found.
  v1::HostFacts host = CollectHostFacts();
  host.mutable_targets()->Swap(layout->response.mutable_facts()->mutable_targets());
  *layout->response.mutable_facts() = host;
  *response = layout->response;
  WorkerRun::ReportObserver observer;
  if (metrics_ != nullptr) {
    observer = [metrics = metrics_](const v1::PrepareRequest& prepared, const v1::IntervalReport& report) {
      static constexpr const char* kDirections[] = {"", "read", "write", "trim", "sync", "meta"};
      const double seconds = static_cast<double>(std::max<int64_t>(1, report.end_unix_ns() - report.start_unix_ns())) / 1e9;
      const std::string job = report.job_index() < static_cast<uint32_t>(prepared.spec().jobs_size())
                                  ? prepared.spec().jobs(static_cast<int>(report.job_index())).name()
                                  : "?";
      for (const v1::DirectionStats& d : report.directions()) {
        const int index = static_cast<int>(d.direction());
        if (index < 1 || index > 5) continue;
        const prometheus::Labels labels = {{"run", prepared.run_id()}, {"job", job}, {"direction", kDirections[index]}};
        metrics->Add(labels, d.ops(), d.bytes(), d.errors(), d.latency());
        metrics->SetQueueDepth(labels, d.latency(), seconds);
      }
    };
  }
  auto run = std::make_shared<WorkerRun>(*request, std::move(*layout), std::move(observer), ZonesOf(request->spec().run_group()));
  // Prepared means armed: every thread set up and waiting for the instant, so that the start
  // the controller picks next finds nothing left to do here.
  if (!run->WaitArmed(cancelled)) {
    run->Stop("the controller gave the preparation up");
    return absl::CancelledError("the controller gave the preparation up");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = runs_.emplace(request->run_id(), run);
  if (!inserted) *response = it->second->prepared();  // a concurrent duplicate won the race
  runs_added_ = true;
  watchdog_cv_.notify_all();
  Log(LogLevel::kInfo, absl::StrCat("run ", request->run_id(), ": prepared ", response->files_size(), " file(s)"));
  return absl::OkStatus();
}

grpc::Status WorkerServiceImpl::Start(grpc::ServerContext* context, const v1::StartRequest* request,
                                      v1::StartResponse* response) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  absl::StatusOr<int64_t> lead = DoStart(*request);
  if (!lead.ok()) return ToGrpc(lead.status());
  response->set_lead_ns(*lead);
  return grpc::Status::OK;
}

absl::StatusOr<int64_t> WorkerServiceImpl::DoStart(const v1::StartRequest& request) {
  if (absl::Status valid = ValidateStartRequest(request, absl::ToUnixNanos(absl::Now())); !valid.ok()) return valid;
  auto run = FindRun(request.run_id());
  if (!run) return NoRun(request.run_id());
  run->RenewLease();
  return run->Start(request.start_unix_ns());
}

grpc::Status WorkerServiceImpl::Stop(grpc::ServerContext* context, const v1::StopRequest* request, v1::StopResponse*) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  return ToGrpc(DoStop(*request));
}

absl::Status WorkerServiceImpl::DoStop(const v1::StopRequest& request) {
  auto run = FindRun(request.run_id());
  if (!run) return NoRun(request.run_id());
  run->Stop(request.reason().empty() ? "stopped by the controller" : request.reason().substr(0, 1024), RequestedStopCause(request));
  return absl::OkStatus();
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                          v1::HeartbeatResponse* response) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  auto run = FindRun(request->run_id());
  // An expired lease is not renewed, even when the watchdog has not got to it yet (a worker
  // resumed from a pause may find a heartbeat queued from before); a run dropped for it is
  // not revived by a late heartbeat, which is told why.
  if (run && run->LeaseExpired(AwakeClock::Now())) ExpireLease(request->run_id(), *run);
  if (!run || Ended(request->run_id())) return ToGrpc(NoRun(request->run_id()));
  run->RenewLease();
  response->set_run_active(!run->finished());
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::StreamIntervals(grpc::ServerContext* context,
                                                const v1::StreamIntervalsRequest* request,
                                                grpc::ServerWriter<v1::IntervalReport>* writer) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  absl::StatusOr<std::shared_ptr<WorkerRun>> taken = TakeRun(request->run_id());
  if (!taken.ok()) return ToGrpc(taken.status());
  auto write = [writer](std::vector<v1::IntervalReport> reports) {
    for (const v1::IntervalReport& report : reports) {
      if (!writer->Write(report)) return false;
    }
    return true;
  };
  switch ((*taken)->DeliverReports(write,
                                   [context] { return context->IsCancelled(); })) {
    case WorkerRun::Delivered::kAll:
      return grpc::Status::OK;
    case WorkerRun::Delivered::kReaderGone:
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the controller closed the stream");
    case WorkerRun::Delivered::kStopped:
      break;
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled by the controller");
}

absl::StatusOr<std::shared_ptr<SessionRun>> WorkerServiceImpl::TakeReports(const std::string& run_id) {
  absl::StatusOr<std::shared_ptr<WorkerRun>> run = TakeRun(run_id);
  if (!run.ok()) return run.status();
  return std::shared_ptr<SessionRun>(*std::move(run));
}

absl::StatusOr<std::shared_ptr<WorkerRun>> WorkerServiceImpl::TakeRun(const std::string& run_id) {
  auto run = FindRun(run_id);
  if (!run) return NoRun(run_id);
  std::lock_guard<std::mutex> lock(mu_);
  if (!streamed_.insert(run_id).second) {
    return absl::AlreadyExistsError(absl::StrCat("run ", run_id, " already has a stream reading its reports (one reader per run)"));
  }
  return run;
}

grpc::Status WorkerServiceImpl::Session(grpc::ServerContext* context, grpc::ServerReaderWriter<v1::WorkerMessage, v1::ControllerMessage>* stream) {
  if (grpc::Status auth = Authorize(context); !auth.ok()) return auth;
  v1::ControllerMessage first;
  if (!stream->Read(&first)) return grpc::Status::OK;
  const std::string id = first.has_hello() ? first.hello().session_id() : "";
  SessionWriter<grpc::ServerReaderWriter<v1::WorkerMessage, v1::ControllerMessage>> writer(stream);
  WorkerSession::Send send = [&writer](WorkerSession::Message message) { return writer.Send(std::move(message)); };
  WorkerSession::Cancel cancel = [context] { context->TryCancel(); };
  std::shared_ptr<WorkerSession> session;
  absl::StatusOr<uint64_t> attachment;
  bool ended = false;
  if (first.has_hello() && first.hello().resume()) {
    // The controller lost the stream, not the session: put this stream under it.
    if (absl::Status valid = CheckSessionId(id); !valid.ok()) return ToGrpc(valid);
    session = id.empty() ? nullptr : sessions_.Find(id);
    if (session == nullptr) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("this worker has no session ", id, " to resume: it was restarted, or the session was over (",
                                       "detached for longer than its runs' leases, so their IO stopped)"));
    }
    v1::WorkerMessage greeting;
    if (absl::Status hello = DoHello(first.hello(), greeting.mutable_hello()); !hello.ok()) return ToGrpc(hello);
    greeting.mutable_hello()->set_resumed(true);
    greeting.mutable_hello()->set_received_through(session->received_through());
    attachment = session->Attach(send, cancel, first.hello().received_through(), &greeting);
    if (!attachment.ok()) {
      sessions_.Forget(session);
      return ToGrpc(attachment.status());
    }
    Log(LogLevel::kInfo, absl::StrCat("session ", id, " resumed by ", context->peer()));
  } else {
    absl::StatusOr<std::shared_ptr<WorkerSession>> made = sessions_.New(id);
    if (!made.ok()) return ToGrpc(made.status());
    session = *std::move(made);
    attachment = session->Attach(send, cancel, 0, nullptr);
    if (!attachment.ok()) return ToGrpc(attachment.status());
    ended = !session->Handle(first);
  }
  v1::ControllerMessage message;
  while (!ended && stream->Read(&message)) ended = !session->Handle(message);
  if (ended || session->id().empty()) {
    sessions_.Forget(session);  // the controller is done with it (or it could never be resumed)
  } else {
    session->Detach(*attachment);  // kept for a resume until its runs' leases run out
    Log(LogLevel::kInfo, absl::StrCat("session ", session->id(), ": its stream from ", context->peer(),
                                      " ended; the session waits for a resume until its runs' leases run out"));
  }
  return context->IsCancelled() ? grpc::Status(grpc::StatusCode::CANCELLED, "session stream cancelled") : grpc::Status::OK;
}

}  // namespace iofleet
