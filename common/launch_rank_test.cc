#include "common/launch_rank.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

auto From(std::map<std::string, std::string> env) {
  return [env = std::move(env)](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchRank, MpiRankFirstThenPmixThenSlurmThenKubernetes) {
  auto rank = LaunchRankFromEnvironment(From({{"SLURM_PROCID", "2"}, {"PMIX_RANK", "5"}, {"OMPI_COMM_WORLD_RANK", "7"}}));
  ASSERT_TRUE(rank.ok());
  ASSERT_TRUE(rank->has_value());
  EXPECT_EQ((*rank)->rank, 7u);
  EXPECT_EQ((*rank)->source, "OMPI_COMM_WORLD_RANK");
  // srun --mpi=pmix gives PMIX_RANK and SLURM_PROCID, no OMPI_ variable.
  rank = LaunchRankFromEnvironment(From({{"SLURM_PROCID", "2"}, {"PMIX_RANK", "2"}}));
  EXPECT_EQ((*rank)->source, "PMIX_RANK");
  rank = LaunchRankFromEnvironment(From({{"SLURM_PROCID", "0"}}));
  EXPECT_EQ((*rank)->rank, 0u);
  rank = LaunchRankFromEnvironment(From({{"JOB_COMPLETION_INDEX", "11"}}));
  EXPECT_EQ((*rank)->rank, 11u);
}

TEST(LaunchRank, NoneSetIsNoRank) {
  auto rank = LaunchRankFromEnvironment(From({{"SLURM_JOB_ID", "12"}}));
  ASSERT_TRUE(rank.ok());
  EXPECT_FALSE(rank->has_value());
}

TEST(LaunchRank, AMalformedValueIsNamed) {
  for (const char* bad : {"", "x", "-1", "1.5", "2000000", "99999999999999999999"}) {
    auto rank = LaunchRankFromEnvironment(From({{"SLURM_PROCID", bad}}));
    ASSERT_FALSE(rank.ok()) << bad;
    EXPECT_NE(rank.status().message().find("SLURM_PROCID='"), std::string::npos) << rank.status();
  }
}

}  // namespace
}  // namespace iofleet
