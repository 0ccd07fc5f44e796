#include "worker/worker_session.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "job/run_limits.h"

namespace iofleet {
namespace {

// Kept messages at most: the report window plus room for answers and problems.
constexpr size_t kKeptMessages = 4 * WorkerSession::kReportWindow;
// How long a session without runs waits, detached, for its controller to resume it.
constexpr auto kIdleResumeWait = std::chrono::seconds(10);

v1::StopRequest MakeStop(const std::string& run_id) {
  v1::StopRequest stop;
  stop.set_run_id(run_id);
  stop.set_reason("the controller gave the preparation up");
  return stop;
}

}  // namespace

WorkerSession::WorkerSession(SessionBackend* backend, std::string id)
    : backend_(backend), id_(std::move(id)), replay_(kKeptMessages) {}

WorkerSession::~WorkerSession() { Close(); }

absl::StatusOr<uint64_t> WorkerSession::Attach(Send send, Cancel cancel, uint64_t controller_received, const v1::WorkerMessage* greeting) {
  Cancel replaced;
  uint64_t attachment = 0;
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    if (closing_) return absl::UnavailableError("the session is over");
    if (greeting != nullptr) send(std::make_shared<const v1::WorkerMessage>(*greeting));
    if (!replay_.Resend(controller_received, [&send](const Message& m) { send(m); })) {
      return absl::DataLossError(absl::StrCat("session ", id_, " cannot be resumed: the controller acknowledged nothing for too long and ",
                                              "messages it missed were dropped"));
    }
    replaced = std::move(cancel_);
    send_ = std::move(send);
    cancel_ = std::move(cancel);
    attachment = ++attachment_;
  }
  window_cv_.notify_all();
  if (replaced) replaced();  // the stream this one replaces ends (its Detach then finds itself replaced)
  return attachment;
}

void WorkerSession::Detach(uint64_t attachment) {
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    if (attachment != attachment_ || !send_) return;
    send_ = nullptr;
    cancel_ = nullptr;
    detached_at_ = AwakeClock::Now();
  }
}

void WorkerSession::Close() {
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    closing_ = true;
    send_ = nullptr;
    cancel_ = nullptr;
  }
  window_cv_.notify_all();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, given_up] : preparing_) {
      *given_up = true;
      backend_->PreparationGivenUp(id);
    }
    // Their forwarding threads wake now (a run prepared later sees closing_ and is not kept),
    // and their arrivals no longer come here.
    for (const std::shared_ptr<SessionRun>& run : runs_) {
      run->StopDelivering();
      run->WatchArrivals(nullptr);
    }
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  runs_.clear();
}

uint64_t WorkerSession::received_through() {
  std::lock_guard<std::mutex> lock(out_mu_);
  return replay_.received();
}

bool WorkerSession::Expired(AwakeClock::time_point now) {
  AwakeClock::time_point detached_at;
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    if (send_) return false;  // a stream is attached
    detached_at = detached_at_;
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::chrono::nanoseconds wait = kIdleResumeWait;
  if (!runs_.empty()) {
    wait = std::chrono::nanoseconds(0);
    for (const std::shared_ptr<SessionRun>& run : runs_) wait = std::max(wait, run->lease());
  }
  return now - std::max(last_heard_, detached_at) > wait;
}

bool WorkerSession::Emit(v1::WorkerMessage message) {
  std::unique_lock<std::mutex> lock(out_mu_);
  if (message.has_reports()) {
    window_cv_.wait(lock, [this] { return closing_ || replay_.unacknowledged() < kReportWindow; });
  }
  if (closing_) return false;
  Message numbered = replay_.Number(std::move(message));
  sent_since_probe_ = true;
  // A broken stream keeps the message too: the resumed stream sends it again.
  if (send_) send_(std::move(numbered));
  return true;
}

void WorkerSession::Problem(const std::string& run_id, const std::string& command, const absl::Status& status) {
  v1::WorkerMessage message;
  v1::SessionProblem* problem = message.mutable_problem();
  problem->set_run_id(run_id);
  problem->set_command(command);
  problem->set_code(static_cast<int32_t>(status.code()));
  problem->set_message(std::string(status.message()));
  Emit(std::move(message));
}

bool WorkerSession::Handle(const v1::ControllerMessage& message) {
  const int64_t received_unix_ns = backend_->NowUnixNs();
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    // Its acknowledgement frees kept messages (and window room); a message already received
    // before a cut, sent again on the resumed stream, is dropped.
    const bool fresh = replay_.Receive(message);
    window_cv_.notify_all();
    if (!fresh) return true;
  }
  {
    // Any word from the controller keeps this session's runs alive.
    std::lock_guard<std::mutex> lock(mu_);
    last_heard_ = AwakeClock::Now();
    for (const std::shared_ptr<SessionRun>& run : runs_) run->RenewLease();
  }
  v1::WorkerMessage out;
  switch (message.command_case()) {
    case v1::ControllerMessage::kHello: {
      absl::Status hello = backend_->DoHello(message.hello(), out.mutable_hello());
      Emit(std::move(out));  // who this worker is, also when it refuses the controller
      if (!hello.ok()) Problem("", "hello", hello);
      return true;
    }
    case v1::ControllerMessage::kPrepare: {
      auto given_up = std::make_shared<std::atomic<bool>>(false);
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_) return true;
      if (!preparing_.emplace(message.prepare().run_id(), given_up).second) {
        Problem(message.prepare().run_id(), "prepare", absl::AlreadyExistsError("this run is being prepared already"));
        return true;
      }
      threads_.emplace_back([this, request = message.prepare(), given_up]() mutable {
        pthread_setname_np(pthread_self(), "session-run");  // (else it has the gRPC thread's name)
        PrepareRun(std::move(request), given_up);
      });
      return true;
    }
    case v1::ControllerMessage::kStart: {
      absl::StatusOr<int64_t> lead = backend_->DoStart(message.start());
      if (!lead.ok()) {
        Problem(message.start().run_id(), "start", lead.status());
        return true;
      }
      out.mutable_started()->set_run_id(message.start().run_id());
      out.mutable_started()->set_lead_ns(*lead);
      Emit(std::move(out));
      return true;
    }
    case v1::ControllerMessage::kStop: {
      {
        // A run still being laid out is given up (its prepare answers CANCELLED).
        std::lock_guard<std::mutex> lock(mu_);
        if (auto it = preparing_.find(message.stop().run_id()); it != preparing_.end()) {
          *it->second = true;
          backend_->PreparationGivenUp(it->first);
          return true;
        }
      }
      if (absl::Status stopped = backend_->DoStop(message.stop()); !stopped.ok()) Problem(message.stop().run_id(), "stop", stopped);
      return true;
    }
    case v1::ControllerMessage::kRelease: {
      const v1::JobRelease& release = message.release();
      // Every field checked before it is used (the job index by the run it names).
      absl::Status released = CheckRunId(release.run_id());
      if (released.ok()) released = CheckStartInstant(release.start_unix_ns(), backend_->NowUnixNs());
      if (released.ok()) {
        std::shared_ptr<SessionRun> run;
        {
          std::lock_guard<std::mutex> lock(mu_);
          for (const std::shared_ptr<SessionRun>& r : runs_) {
            if (r->run_id() == release.run_id()) run = r;
          }
        }
        released = run != nullptr ? run->Release(release.job_index(), release.start_unix_ns())
                                  : absl::NotFoundError(absl::StrCat("no run ", release.run_id(), " in this session to release a job of"));
      }
      if (!released.ok()) Problem(release.run_id(), "release", released);
      return true;
    }
    case v1::ControllerMessage::kRenew:
      return true;  // renewed above
    case v1::ControllerMessage::kProbe: {
      {
        // Heard since the previous probe: this one needs no answer unless the controller asks.
        std::lock_guard<std::mutex> lock(out_mu_);
        const bool heard = sent_since_probe_;
        sent_since_probe_ = false;
        if (heard && message.probe().answer_only_if_silent()) return true;
      }
      v1::ClockEcho* echo = out.mutable_echo();
      echo->set_sequence(message.probe().sequence());
      echo->set_controller_send_unix_ns(message.probe().controller_send_unix_ns());
      echo->set_worker_receive_unix_ns(received_unix_ns);
      echo->set_worker_send_unix_ns(backend_->NowUnixNs());
      Emit(std::move(out));
      return true;
    }
    case v1::ControllerMessage::kEnd:
      return false;
    case v1::ControllerMessage::COMMAND_NOT_SET:
      break;
  }
  Problem("", "?", absl::InvalidArgumentError("a session message with no command (from a newer controller?)"));
  return true;
}

void WorkerSession::PrepareRun(v1::PrepareRequest request, std::shared_ptr<std::atomic<bool>> given_up) {
  const std::string run_id = request.run_id();
  v1::WorkerMessage out;
  v1::RunPrepared* prepared = out.mutable_prepared();
  absl::Status done = backend_->DoPrepare(request, prepared->mutable_response(), [this, given_up] { return *given_up || closing_; });
  if (done.ok() && *given_up) {
    (void)backend_->DoStop(MakeStop(run_id));  // laid out just as it was given up
    done = absl::CancelledError("the controller gave the preparation up");
  }
  absl::StatusOr<std::shared_ptr<SessionRun>> run = done.ok() ? backend_->TakeReports(run_id) : absl::StatusOr<std::shared_ptr<SessionRun>>(done);
  {
    std::lock_guard<std::mutex> lock(mu_);
    preparing_.erase(run_id);
    if (run.ok() && closing_) run = absl::CancelledError("the session ended during the layout");
    if (run.ok()) {
      (*run)->RenewLease();  // the lease counts from here, not from when the layout began
      if (request.spec().jobs_released()) {
        // Its tasks' arrivals at each job of the sequence go to the controller, which releases
        // the job once every worker's have come. (Set with the run kept, under mu_: Close lets
        // go of it before the session goes.)
        (*run)->WatchArrivals([this, run_id](uint32_t job, bool not_run) {
          v1::WorkerMessage message;
          v1::JobArrival* arrival = message.mutable_arrived();
          arrival->set_run_id(run_id);
          arrival->set_job_index(job);
          arrival->set_not_run(not_run);
          Emit(std::move(message));
        });
      }
      runs_.push_back(*run);
    }
  }
  if (!run.ok()) return Problem(run_id, "prepare", run.status());
  prepared->set_run_id(run_id);
  Emit(std::move(out));
  ForwardReports(*std::move(run));
}

void WorkerSession::ForwardReports(std::shared_ptr<SessionRun> run) {
  const SessionRun::Delivered delivered = run->DeliverReports(
      [this](std::vector<v1::IntervalReport> reports) {
        v1::WorkerMessage message;
        for (v1::IntervalReport& report : reports) *message.mutable_reports()->add_reports() = std::move(report);
        return Emit(std::move(message));  // false: the session is over; the lease ends the run
      },
      [this] { return closing_.load(); });
  if (delivered != SessionRun::Delivered::kAll) return;
  if (std::optional<v1::RelaySummary> summary = run->Summary(); summary.has_value()) {
    v1::WorkerMessage message;
    *message.mutable_summary() = *std::move(summary);
    if (!Emit(std::move(message))) return;
  }
  v1::WorkerMessage message;
  message.mutable_ended()->set_run_id(run->run_id());
  Emit(std::move(message));
}

}  // namespace iofleet
