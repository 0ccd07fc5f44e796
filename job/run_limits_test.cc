#include "job/run_limits.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

TEST(RunLimits, IntervalAndLeaseBoundsNameTheLimit) {
  EXPECT_TRUE(CheckIntervalNs(1'000'000'000).ok());
  EXPECT_THAT(CheckIntervalNs(1).message(), HasSubstr("below the minimum of 10ms"));
  EXPECT_THAT(CheckIntervalNs(UINT64_MAX).message(), HasSubstr("above the maximum of 1h"));
  EXPECT_THAT(CheckLeaseNs(0, "lease_ns").message(), HasSubstr("lease_ns 0 is below the minimum of 500ms"));
  EXPECT_TRUE(CheckReportRate(100, 10'000'000).ok());
  EXPECT_THAT(CheckReportRate(4096, 10'000'000).message(), HasSubstr("use an interval of at least 409.6ms"));
}

TEST(RunLimits, StartInstantWithinAWindowAroundNow) {
  const int64_t now = 1'800'000'000'000'000'000;
  EXPECT_TRUE(CheckStartInstant(now + 250'000'000, now).ok());
  EXPECT_TRUE(CheckStartInstant(now - 2'000'000'000, now).ok()) << "a little late starts at once";
  EXPECT_THAT(CheckStartInstant(now - 86'400'000'000'000, now).message(), HasSubstr("in the past"));
  EXPECT_THAT(CheckStartInstant(0, now).message(), HasSubstr("in the past"));
  EXPECT_THAT(CheckStartInstant(INT64_MIN, INT64_MAX).message(), HasSubstr("in the past"));
  EXPECT_THAT(CheckStartInstant(INT64_MAX, now).message(), HasSubstr("ahead"));
}

TEST(RunLimits, RunIdAndWorkerPlace) {
  EXPECT_TRUE(CheckRunId("run-1").ok());
  EXPECT_FALSE(CheckRunId("").ok());
  EXPECT_THAT(CheckRunId(std::string(1000, 'x')).message(), HasSubstr("above the maximum of 128"));
  EXPECT_FALSE(CheckRunId("a b").ok());
  EXPECT_TRUE(CheckWorkerPlace(1, 2).ok());
  EXPECT_THAT(CheckWorkerPlace(2, 2).message(), HasSubstr("not below worker_count"));
  EXPECT_FALSE(CheckWorkerPlace(0, 0).ok());
}

TEST(RunLimits, MemoryEstimateGrowsWithThreadsAndBuffersAndSaturates) {
  v1::RunSpec spec;
  v1::JobSpec* job = spec.add_jobs();
  job->set_numjobs(1);
  job->set_iodepth(1);
  job->mutable_read_bs()->set_min(4096);
  job->mutable_read_bs()->set_max(4096);
  job->set_size(1 << 20);
  const uint64_t one = EstimateRunMemory(spec);
  job->set_numjobs(4);
  EXPECT_EQ(EstimateRunMemory(spec), 4 * one);
  job->set_iodepth(4096);
  job->mutable_read_bs()->set_max(1ull << 30);
  EXPECT_THAT(CheckRunMemory(EstimateRunMemory(spec), kDefaultMaxRunMemory).message(), HasSubstr("--max-run-memory"));
  EXPECT_EQ(CheckRunMemory(EstimateRunMemory(spec), kDefaultMaxRunMemory).code(), absl::StatusCode::kResourceExhausted);
  job->set_numjobs(UINT32_MAX);
  EXPECT_EQ(EstimateRunMemory(spec), UINT64_MAX) << "saturates, never wraps";
}

}  // namespace
}  // namespace iofleet
