// The controller's handle on one worker: the WorkerService calls with deadlines, errors that
// name the worker, and the interval stream read on a thread of its own.
#ifndef IOFLEET_CONTROLLER_WORKER_CLIENT_H_
#define IOFLEET_CONTROLLER_WORKER_CLIENT_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/transport_security.h"
#include "proto/worker_service.grpc.pb.h"

namespace iofleet {

class WorkerClient {
 public:
  explicit WorkerClient(std::string address, TransportSecurity security = {});

  const std::string& address() const { return address_; }

  // Handshake; kUnavailable/kDeadlineExceeded naming the worker when it cannot be reached
  // within `timeout`, kFailedPrecondition when its protocol is incompatible.
  absl::StatusOr<v1::HelloResponse> Hello(absl::Duration timeout);
  // Prepare can be given up from another thread (CancelPrepare), e.g. when another worker is
  // lost during a long layout: it then returns kCancelled at once.
  absl::StatusOr<v1::PrepareResponse> Prepare(const v1::PrepareRequest& request, absl::Duration timeout);
  // Until the next ResetPrepare(), which each phase calls before it prepares.
  void CancelPrepare();
  void ResetPrepare();
  absl::StatusOr<v1::StartResponse> Start(const v1::StartRequest& request, absl::Duration timeout);
  absl::Status Stop(const std::string& run_id, const std::string& reason, absl::Duration timeout);
  absl::Status Heartbeat(const std::string& run_id, absl::Duration timeout);

  // Reads the run's interval stream until the worker ends it (OK) or it breaks; calls
  // `on_report` for every report, on the calling thread. CancelStream() makes it return.
  absl::Status ReadIntervals(const std::string& run_id,
                             const std::function<void(const v1::IntervalReport&)>& on_report);
  void CancelStream();

 private:
  absl::Status Named(const grpc::Status& status, absl::string_view call) const;
  // A call another thread may give up: the context in flight, and whether it was given up.
  struct Cancellable {
    std::mutex mu;
    grpc::ClientContext* context = nullptr;
    bool cancelled = false;
  };
  // One unary call with the token and a deadline; errors named by Named(). Every RPC but
  // Hello (which also checks versions) and the stream goes through it. With `cancellable`,
  // the call is registered there and returns kCancelled once it is (or was) given up.
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (v1::WorkerService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                                const Request& request, absl::Duration timeout, absl::string_view name,
                                Cancellable* cancellable = nullptr) {
    grpc::ClientContext context;
    Authenticate(&context);
    context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    if (cancellable != nullptr) {
      std::lock_guard<std::mutex> lock(cancellable->mu);
      if (cancellable->cancelled) return absl::CancelledError(absl::StrCat("worker ", address_, ": ", name, " given up"));
      cancellable->context = &context;
    }
    Response response;
    const grpc::Status result = (stub_.get()->*method)(&context, request, &response);
    if (cancellable != nullptr) {
      std::lock_guard<std::mutex> lock(cancellable->mu);
      cancellable->context = nullptr;
    }
    absl::Status status = Named(result, name);
    if (!status.ok()) return status;
    return response;
  }
  // Adds the token (if any) to a call.
  void Authenticate(grpc::ClientContext* context) const;

  const std::string address_;
  const TransportSecurity security_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  Cancellable prepare_;
  std::mutex stream_mu_;
  grpc::ClientContext* stream_context_ = nullptr;
  bool stream_cancelled_ = false;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_WORKER_CLIENT_H_
