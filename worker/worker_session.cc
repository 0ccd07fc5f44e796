#include "worker/worker_session.h"

#include <algorithm>
#include <chrono>

#include "absl/time/clock.h"

namespace iofleet {
namespace {

v1::StopRequest MakeStop(const std::string& run_id) {
  v1::StopRequest stop;
  stop.set_run_id(run_id);
  stop.set_reason("the controller gave the preparation up");
  return stop;
}

}  // namespace

WorkerSession::WorkerSession(SessionBackend* backend, Send send, std::function<bool()> cancelled)
    : backend_(backend), send_(std::move(send)), cancelled_(std::move(cancelled)) {}

WorkerSession::~WorkerSession() { Close(); }

void WorkerSession::Close() {
  closing_ = true;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, given_up] : preparing_) *given_up = true;
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  // The session is over: each run's lease runs again from the controller's last word.
  for (const std::shared_ptr<WorkerRun>& run : runs_) run->ReleaseLease(last_heard_);
  runs_.clear();
}

void WorkerSession::Problem(const std::string& run_id, const std::string& command, const absl::Status& status) {
  v1::WorkerMessage message;
  v1::SessionProblem* problem = message.mutable_problem();
  problem->set_run_id(run_id);
  problem->set_command(command);
  problem->set_code(static_cast<int32_t>(status.code()));
  problem->set_message(std::string(status.message()));
  send_(message);
}

void WorkerSession::Handle(const v1::ControllerMessage& message) {
  const int64_t received_unix_ns = backend_->NowUnixNs();
  {
    // Any word from the controller keeps this session's runs alive.
    std::lock_guard<std::mutex> lock(mu_);
    last_heard_ = WorkerRun::Clock::now();
    for (const std::shared_ptr<WorkerRun>& run : runs_) run->RenewLease();
  }
  v1::WorkerMessage out;
  switch (message.command_case()) {
    case v1::ControllerMessage::kHello: {
      absl::Status hello = backend_->DoHello(message.hello(), out.mutable_hello());
      send_(out);  // who this worker is, also when it refuses the controller
      if (!hello.ok()) Problem("", "hello", hello);
      return;
    }
    case v1::ControllerMessage::kPrepare: {
      auto given_up = std::make_shared<std::atomic<bool>>(false);
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_) return;
      if (!preparing_.emplace(message.prepare().run_id(), given_up).second) {
        return Problem(message.prepare().run_id(), "prepare", absl::AlreadyExistsError("this run is being prepared already"));
      }
      threads_.emplace_back([this, request = message.prepare(), given_up]() mutable { PrepareRun(std::move(request), given_up); });
      return;
    }
    case v1::ControllerMessage::kStart: {
      absl::StatusOr<int64_t> lead = backend_->DoStart(message.start());
      if (!lead.ok()) return Problem(message.start().run_id(), "start", lead.status());
      out.mutable_started()->set_run_id(message.start().run_id());
      out.mutable_started()->set_lead_ns(*lead);
      send_(out);
      return;
    }
    case v1::ControllerMessage::kStop: {
      {
        // A run still being laid out is given up (its prepare answers CANCELLED).
        std::lock_guard<std::mutex> lock(mu_);
        if (auto it = preparing_.find(message.stop().run_id()); it != preparing_.end()) {
          *it->second = true;
          return;
        }
      }
      if (absl::Status stopped = backend_->DoStop(message.stop()); !stopped.ok()) Problem(message.stop().run_id(), "stop", stopped);
      return;
    }
    case v1::ControllerMessage::kRenew:
      return;  // renewed above
    case v1::ControllerMessage::kProbe: {
      v1::ClockEcho* echo = out.mutable_echo();
      echo->set_sequence(message.probe().sequence());
      echo->set_controller_send_unix_ns(message.probe().controller_send_unix_ns());
      echo->set_worker_receive_unix_ns(received_unix_ns);
      echo->set_worker_send_unix_ns(backend_->NowUnixNs());
      send_(out);
      return;
    }
    case v1::ControllerMessage::COMMAND_NOT_SET:
      break;
  }
  Problem("", "?", absl::InvalidArgumentError("a session message with no command (from a newer controller?)"));
}

void WorkerSession::PrepareRun(v1::PrepareRequest request, std::shared_ptr<std::atomic<bool>> given_up) {
  const std::string run_id = request.run_id();
  v1::WorkerMessage out;
  v1::RunPrepared* prepared = out.mutable_prepared();
  absl::Status done = backend_->DoPrepare(request, prepared->mutable_response(), [this, given_up] { return *given_up || closing_ || cancelled_(); });
  if (done.ok() && *given_up) {
    (void)backend_->DoStop(MakeStop(run_id));  // laid out just as it was given up
    done = absl::CancelledError("the controller gave the preparation up");
  }
  absl::StatusOr<std::shared_ptr<WorkerRun>> run = done.ok() ? backend_->TakeReports(run_id) : absl::StatusOr<std::shared_ptr<WorkerRun>>(done);
  {
    std::lock_guard<std::mutex> lock(mu_);
    preparing_.erase(run_id);
    if (run.ok() && closing_) run = absl::CancelledError("the session ended during the layout");
    if (run.ok()) {
      (*run)->RenewLease();  // the lease counts from here, not from when the layout began
      (*run)->HoldLease();
      runs_.push_back(*run);
    }
  }
  if (!run.ok()) return Problem(run_id, "prepare", run.status());
  prepared->set_run_id(run_id);
  send_(out);
  ForwardReports(*std::move(run));
}

void WorkerSession::ForwardReports(std::shared_ptr<WorkerRun> run) {
  const WorkerRun::Delivered delivered = run->DeliverReports(
      [this](v1::IntervalReport report) {
        v1::WorkerMessage message;
        *message.mutable_report() = std::move(report);
        return send_(message);  // false: the controller is gone; the lease ends the run
      },
      [this] { return closing_.load(); });
  if (delivered != WorkerRun::Delivered::kAll) return;
  v1::WorkerMessage message;
  message.mutable_ended()->set_run_id(run->request().run_id());
  send_(message);
}

}  // namespace iofleet
