// For tests that talk to a worker over real gRPC without a process of its own: a
// WorkerServiceImpl served on 127.0.0.1 (any free port) in the test, and the session commands
// those tests send.
#ifndef IOFLEET_WORKER_IN_PROCESS_WORKER_H_
#define IOFLEET_WORKER_IN_PROCESS_WORKER_H_

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "job/block_sizes.h"
#include "worker/worker_service.h"

namespace iofleet {
namespace testing {

class InProcessWorker {
 public:
  // Allowed root: the test's TEST_TMPDIR. `token`: required of every call when set.
  explicit InProcessWorker(const std::string& token = "")
      : service_(*PathPolicy::Create({std::getenv("TEST_TMPDIR")}), ProtocolVersions{kProtocolVersion, kMinCompatibleProtocolVersion}, token) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    address_ = "127.0.0.1:" + std::to_string(port);
  }
  ~InProcessWorker() {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
  bool serving() const { return server_ != nullptr; }
  const std::string& address() const { return address_; }

 private:
  WorkerServiceImpl service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

// A null-engine read job at 2,000 IOPS for `runtime_ms`, 100 ms intervals.
inline v1::ControllerMessage PrepareNullRun(const std::string& run_id, int runtime_ms, uint64_t lease_ms = 5000) {
  v1::ControllerMessage message;
  v1::PrepareRequest* prepare = message.mutable_prepare();
  prepare->set_run_id(run_id);
  prepare->set_worker_count(1);
  prepare->set_interval_ns(100'000'000);
  prepare->set_lease_ns(lease_ms * 1'000'000);
  v1::JobSpec* job = prepare->mutable_spec()->add_jobs();
  job->set_name("null");
  job->set_rw(v1::RAND_READ);
  SetFixedBlockSize(job, 4096);
  job->set_size(1 << 20);
  job->set_numjobs(1);
  job->set_iodepth(1);
  job->set_ioengine("null");
  job->set_time_based(true);
  job->set_runtime_ns(static_cast<uint64_t>(runtime_ms) * 1'000'000);
  job->add_rate_iops(2000);
  return message;
}

inline v1::ControllerMessage StartRun(const std::string& run_id, absl::Duration ahead) {
  v1::ControllerMessage message;
  message.mutable_start()->set_run_id(run_id);
  message.mutable_start()->set_start_unix_ns(absl::ToUnixNanos(absl::Now() + ahead));
  return message;
}

inline v1::ControllerMessage HelloMessage() {
  v1::ControllerMessage message;
  message.mutable_hello()->set_protocol_version(kProtocolVersion);
  message.mutable_hello()->set_min_compatible_version(kMinCompatibleProtocolVersion);
  return message;
}

}  // namespace testing
}  // namespace iofleet

#endif  // IOFLEET_WORKER_IN_PROCESS_WORKER_H_
