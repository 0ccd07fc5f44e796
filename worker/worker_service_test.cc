// The service's contract without the network: handshake contents, Prepare idempotency, the
// order of calls, and refusals — calling the handlers directly.
#include "worker/worker_service.h"

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "job/block_sizes.h"

namespace iofleet {
namespace {


using ::testing::Contains;
using ::testing::HasSubstr;

class WorkerServiceTest : public ::testing::Test {
 protected:
  WorkerServiceTest()
      : root_(std::getenv("TEST_TMPDIR")),
        service_(*PathPolicy::Create({root_}), {kProtocolVersion, kMinCompatibleProtocolVersion}) {}

  v1::PrepareRequest Request(const std::string& run_id, uint64_t size) {
    v1::PrepareRequest request;
    request.set_run_id(run_id);
    request.set_worker_count(1);
    v1::JobSpec* job = request.mutable_spec()->add_jobs();
    job->set_name("j");
    job->set_rw(v1::SEQ_WRITE);
    SetFixedBlockSize(job, 4096);
    job->set_size(size);
    job->set_numjobs(1);
    job->set_iodepth(1);
    job->set_ioengine("sync");
    job->set_directory(root_ + "/svc");
    return request;
  }

  std::string root_;
  WorkerServiceImpl service_;
  grpc::ServerContext context_;
};

TEST_F(WorkerServiceTest, HelloDescribesTheWorkerAndRefusesOldControllers) {
  v1::HelloRequest hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_min_compatible_version(kMinCompatibleProtocolVersion);
  v1::HelloResponse response;
  ASSERT_TRUE(service_.Hello(&context_, &hello, &response).ok());
  EXPECT_EQ(response.protocol_version(), kProtocolVersion);
  EXPECT_THAT(response.engines(), Contains("psync"));
  EXPECT_THAT(response.allowed_roots(), Contains(root_));
  EXPECT_GT(response.cores(), 0u);
  EXPECT_FALSE(response.hostname().empty());
  EXPECT_THAT(response.kernel(), HasSubstr("Linux"));

  hello.set_protocol_version(0);
  hello.set_min_compatible_version(0);
  hello.set_controller_host("old-box");
  grpc::Status refused = service_.Hello(&context_, &hello, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("controller on old-box speaks protocol 0"));
}

TEST_F(WorkerServiceTest, PrepareIsIdempotentPerRunId) {
  v1::PrepareResponse first, second, conflicting;
  v1::PrepareRequest original = Request("run-a", 1 << 20);
  ASSERT_TRUE(service_.Prepare(&context_, &original, &first).ok());
  ASSERT_EQ(first.files_size(), 1);
  EXPECT_TRUE(first.files(0).laid_out());
  v1::PrepareRequest same = Request("run-a", 1 << 20);
  ASSERT_TRUE(service_.Prepare(&context_, &same, &second).ok());
  EXPECT_EQ(first.SerializeAsString(), second.SerializeAsString());
  v1::PrepareRequest different = Request("run-a", 2 << 20);
  grpc::Status status = service_.Prepare(&context_, &different, &conflicting);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(WorkerServiceTest, CallsOutOfOrderOrOutOfBoundsAreRefused) {
  v1::StartRequest start;
  start.set_run_id("never-prepared");
  start.set_start_unix_ns(absl::ToUnixNanos(absl::Now()));
  v1::StartResponse started;
  EXPECT_EQ(service_.Start(&context_, &start, &started).error_code(), grpc::StatusCode::NOT_FOUND);

  v1::PrepareRequest invalid = Request("run-b", 1 << 20);
  SetFixedBlockSize(invalid.mutable_spec()->mutable_jobs(0), 0);
  v1::PrepareResponse response;
  grpc::Status status = service_.Prepare(&context_, &invalid, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("bs must be greater than 0"));

  v1::PrepareRequest outside = Request("run-c", 1 << 20);
  outside.mutable_spec()->mutable_jobs(0)->set_directory("/var/lib/iofleet-nope");
  status = service_.Prepare(&context_, &outside, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace iofleet
