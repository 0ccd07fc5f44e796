#include "controller/session_client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace iofleet {

std::shared_ptr<grpc::Channel> SessionChannel(const std::string& address, const TransportSecurity& security, absl::Duration lease) {
  grpc::ChannelArguments args;
  // Reconnect quickly after a refused connection instead of gRPC's default 1..120 s backoff.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // The connection is pinged once a lease; one whose ping goes unanswered for four leases is
  // taken for dead, which ends its streams (the session above then resumes them on a new
  // connection, or gives the worker up). Not sooner: on a saturated worker host the pings are
  // answered seconds late, and tearing down a connection that would have carried on is what
  // loses workers there (256 workers at 2,000 IOPS each on 2 cores: 53 to 89 of 256 completed
  // with a one-lease timeout, all with four). Not more often either: the session's own probes
  // already cross every second, and each ping wakes the worker (a thousand workers on one host
  // pay for every wakeup). The worker's runs do not wait for this: they stop at their lease when
  // the controller's messages stop arriving.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(std::max<int64_t>(1000, absl::ToInt64Milliseconds(lease))));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(std::max<int64_t>(1000, absl::ToInt64Milliseconds(4 * lease))));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);  // as the worker's server (worker/main.cc)
  return grpc::CreateCustomChannel(address, ChannelCredentialsFor(security), args);
}

SessionClient::SessionClient(v1::WorkerService::Stub* stub, size_t worker, std::string address, const TransportSecurity& security,
                             SessionEvents* events, uint64_t connection, bool wait_for_ready)
    : SessionStream(worker, connection, std::move(address)), events_(events) {
  if (!security.token.empty()) context_.AddMetadata(kTokenMetadataKey, security.token);
  // A worker that is still starting is waited for (the controller gives up on its own clock).
  context_.set_wait_for_ready(wait_for_ready);
  stub->async()->Session(&context_, this);
  // Held until no write can start any more (the stream is ending): a command queued on one
  // thread as the stream breaks on another is never written to a finished reactor.
  AddHold();
  StartRead(&incoming_);
  StartCall();
}

SessionClient::~SessionClient() {
  Cancel();
  std::unique_lock<std::mutex> lock(mu_);
  closed_cv_.wait(lock, [this] { return closed_; });
}

bool SessionClient::Send(v1::ControllerMessage message) {
  const v1::ControllerMessage* next = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ending_) return false;
    outgoing_.Push(std::move(message));
    next = NextWriteLocked();
  }
  if (next != nullptr) StartWrite(next);  // outside the lock: a reaction may take it
  return true;
}

const v1::ControllerMessage* SessionClient::NextWriteLocked() {
  return ending_ ? nullptr : outgoing_.Next();
}

void SessionClient::OnWriteDone(bool ok) {
  const v1::ControllerMessage* next = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    outgoing_.Done(ok);
    if (ok) {
      next = NextWriteLocked();
    } else {
      ending_ = true;  // the stream is broken: OnDone follows
    }
    if (next == nullptr && !ReleaseHoldLocked()) return;
  }
  if (next != nullptr) {
    StartWrite(next);
  } else {
    RemoveHold();
  }
}

void SessionClient::OnReadDone(bool ok) {
  if (ok) {
    events_->OnMessage(*this, std::move(incoming_));
    StartRead(&incoming_);
    return;
  }
  // The worker ended the stream, or it broke: no more writes; OnDone follows.
  {
    std::lock_guard<std::mutex> lock(mu_);
    ending_ = true;
    if (!ReleaseHoldLocked()) return;
  }
  RemoveHold();
}

bool SessionClient::ReleaseHoldLocked() {
  if (!ending_ || outgoing_.writing() || hold_released_) return false;
  hold_released_ = true;
  return true;
}

void SessionClient::OnDone(const grpc::Status& status) {
  absl::Status closed;
  if (!status.ok()) {
    closed = absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          absl::StrCat("worker ", address_, ": session ended: ", status.error_message()));
  }
  events_->OnClosed(*this, closed);
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  closed_cv_.notify_all();
}

void SessionClient::Cancel() { context_.TryCancel(); }

bool SessionClient::WaitClosed(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return closed_cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [this] { return closed_; });
}

}  // namespace iofleet
