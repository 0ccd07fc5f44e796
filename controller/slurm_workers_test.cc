#include "controller/slurm_workers.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

auto From(std::map<std::string, std::string> env) {
  return [env = std::move(env)](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

TEST(SlurmAllocation, TheJobAndItsNodeCountFromSlurmsEnvironment) {
  absl::StatusOr<SlurmAllocation> a = CurrentSlurmAllocation(From({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "3"}}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->job_id, "42");
  EXPECT_EQ(a->nodes, 3);
  a = CurrentSlurmAllocation(From({{"SLURM_JOB_ID", "42"}, {"SLURM_NNODES", "16"}}));  // older Slurm's name
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->nodes, 16);
}

TEST(SlurmAllocation, OutsideAnAllocationSaysWhereToRunIt) {
  absl::StatusOr<SlurmAllocation> a = CurrentSlurmAllocation(From({}));
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("SLURM_JOB_ID is not set"));
  EXPECT_THAT(a.status().message(), HasSubstr("sbatch"));
  a = CurrentSlurmAllocation(From({{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NUM_NODES", "many"}}));
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("'many'"));
}

}  // namespace
}  // namespace iofleet
