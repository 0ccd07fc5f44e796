#include "controller/worker_client.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/protocol_version.h"
#include "grpcpp/grpcpp.h"

namespace iofleet {
namespace {

void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

std::string Hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

WorkerClient::WorkerClient(std::string address, TransportSecurity security)
    : address_(std::move(address)), security_(std::move(security)) {
  grpc::ChannelArguments args;
  // Reconnect quickly after a refused connection instead of gRPC's default 1..120 s backoff.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = grpc::CreateCustomChannel(address_, ChannelCredentialsFor(security_), args);
  stub_ = v1::WorkerService::NewStub(channel_);
}

void WorkerClient::Authenticate(grpc::ClientContext* context) const {
  if (!security_.token.empty()) context->AddMetadata(kTokenMetadataKey, security_.token);
}

absl::Status WorkerClient::Named(const grpc::Status& status, absl::string_view call) const {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  std::string message = status.error_message();
  if (code == absl::StatusCode::kUnauthenticated) {
    return absl::Status(code, absl::StrCat("worker ", address_, " refused the controller: ", message));
  }
  if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded) {
    return absl::Status(code, absl::StrCat("worker ", address_, " unreachable (", call, "): ", message));
  }
  return absl::Status(code, absl::StrCat("worker ", address_, ": ", message));
}

absl::StatusOr<v1::HelloResponse> WorkerClient::Hello(absl::Duration timeout) {
  grpc::ClientContext context;
  Authenticate(&context);
  SetDeadline(&context, timeout);
  // Keep trying to connect until the deadline (a worker may be starting), then give up.
  context.set_wait_for_ready(true);
  v1::HelloRequest request;
  request.set_protocol_version(kProtocolVersion);
  request.set_min_compatible_version(kMinCompatibleProtocolVersion);
  request.set_controller_host(Hostname());
  v1::HelloResponse response;
  grpc::Status status = stub_->Hello(&context, request, &response);
  if (!status.ok() && status.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
    return Named(status, "hello");
  }
  // Check from our side too: the worker may be older than anything this controller supports,
  // and then its refusal (if any) would not know our rules.
  absl::Status compatible = CheckProtocolCompatible(
      {kProtocolVersion, kMinCompatibleProtocolVersion}, "controller",
      {response.protocol_version(), response.min_compatible_version()}, absl::StrCat("worker ", address_));
  if (!compatible.ok()) return compatible;
  if (!status.ok()) return Named(status, "hello");
  return response;
}

absl::StatusOr<v1::PrepareResponse> WorkerClient::Prepare(const v1::PrepareRequest& request, absl::Duration timeout) {
  return Call(&v1::WorkerService::Stub::Prepare, request, timeout, "prepare", &prepare_);
}

void WorkerClient::ResetPrepare() {
  std::lock_guard<std::mutex> lock(prepare_.mu);
  prepare_.cancelled = false;
}

void WorkerClient::CancelPrepare() {
  std::lock_guard<std::mutex> lock(prepare_.mu);
  prepare_.cancelled = true;
  if (prepare_.context != nullptr) prepare_.context->TryCancel();
}

absl::StatusOr<v1::StartResponse> WorkerClient::Start(const v1::StartRequest& request, absl::Duration timeout) {
  return Call(&v1::WorkerService::Stub::Start, request, timeout, "start");
}

absl::Status WorkerClient::Stop(const std::string& run_id, const std::string& reason, absl::Duration timeout) {
  v1::StopRequest request;
  request.set_run_id(run_id);
  request.set_reason(reason);
  return Call(&v1::WorkerService::Stub::Stop, request, timeout, "stop").status();
}

absl::Status WorkerClient::Heartbeat(const std::string& run_id, absl::Duration timeout) {
  v1::HeartbeatRequest request;
  request.set_run_id(run_id);
  return Call(&v1::WorkerService::Stub::Heartbeat, request, timeout, "heartbeat").status();
}

absl::Status WorkerClient::ReadIntervals(const std::string& run_id,
                                         const std::function<void(const v1::IntervalReport&)>& on_report) {
  grpc::ClientContext context;
  Authenticate(&context);
  {
    std::lock_guard<std::mutex> lock(stream_mu_);
    if (stream_cancelled_) return absl::CancelledError(absl::StrCat("worker ", address_, ": stream cancelled"));
    stream_context_ = &context;
  }
  v1::StreamIntervalsRequest request;
  request.set_run_id(run_id);
  std::unique_ptr<grpc::ClientReader<v1::IntervalReport>> reader = stub_->StreamIntervals(&context, request);
  v1::IntervalReport report;
  while (reader->Read(&report)) on_report(report);
  grpc::Status status = reader->Finish();
  std::lock_guard<std::mutex> lock(stream_mu_);
  stream_context_ = nullptr;
  return Named(status, "interval stream");
}

void WorkerClient::CancelStream() {
  std::lock_guard<std::mutex> lock(stream_mu_);
  stream_cancelled_ = true;
  if (stream_context_ != nullptr) stream_context_->TryCancel();
}

}  // namespace iofleet
