#include "worker/worker_session.h"

#include <algorithm>
#include <chrono>

#include "absl/time/clock.h"

namespace iofleet {

WorkerSession::WorkerSession(SessionBackend* backend, Send send, std::function<bool()> cancelled)
    : backend_(backend), send_(std::move(send)), cancelled_(std::move(cancelled)) {}

WorkerSession::~WorkerSession() { Close(); }

void WorkerSession::Close() {
  closing_ = true;
  std::vector<std::thread> forwarders;
  {
    std::lock_guard<std::mutex> lock(mu_);
    forwarders.swap(forwarders_);
  }
  for (std::thread& t : forwarders) t.join();
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
  const int64_t received_unix_ns = absl::ToUnixNanos(absl::Now());
  {
    // Any word from the controller keeps this session's runs alive.
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& run_id : runs_) backend_->RenewLease(run_id);
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
      const std::string& run_id = message.prepare().run_id();
      v1::RunPrepared* prepared = out.mutable_prepared();
      absl::Status done = backend_->DoPrepare(message.prepare(), prepared->mutable_response(), [this] { return closing_ || cancelled_(); });
      if (!done.ok()) return Problem(run_id, "prepare", done);
      absl::StatusOr<std::shared_ptr<WorkerRun>> run = backend_->TakeReports(run_id);
      if (!run.ok()) return Problem(run_id, "prepare", run.status());
      prepared->set_run_id(run_id);
      std::lock_guard<std::mutex> lock(mu_);
      runs_.push_back(run_id);
      send_(out);
      forwarders_.emplace_back([this, run = *std::move(run)]() mutable { ForwardReports(std::move(run)); });
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
      echo->set_worker_send_unix_ns(absl::ToUnixNanos(absl::Now()));
      send_(out);
      return;
    }
    case v1::ControllerMessage::COMMAND_NOT_SET:
      break;
  }
  Problem("", "?", absl::InvalidArgumentError("a session message with no command (from a newer controller?)"));
}

void WorkerSession::ForwardReports(std::shared_ptr<WorkerRun> run) {
  const std::string run_id = run->request().run_id();
  while (!closing_) {
    v1::IntervalReport report;
    bool ended = false;
    if (run->NextReport(std::chrono::milliseconds(200), &report, &ended)) {
      v1::WorkerMessage message;
      *message.mutable_report() = std::move(report);
      if (!send_(message)) return;  // the controller is gone; the lease ends the run
    } else if (ended) {
      v1::WorkerMessage message;
      message.mutable_ended()->set_run_id(run_id);
      send_(message);
      return;
    }
  }
}

}  // namespace iofleet
