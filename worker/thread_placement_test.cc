#include "worker/thread_placement.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

// Runs `body` on a fresh thread (placement is per thread and is not undone).
template <typename Body>
void OnOwnThread(Body body) {
  std::thread(body).join();
}

std::vector<int> AffinityOfThisThread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST(ThreadPlacement, CpusAllowedSharedAndSplit) {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 2) GTEST_SKIP() << "needs two CPUs";
  v1::JobSpec job;
  job.add_cpus_allowed(0);
  job.add_cpus_allowed(1);
  OnOwnThread([&] {
    ASSERT_TRUE(PlaceThisThread(job, 5).ok());
    EXPECT_THAT(AffinityOfThisThread(), ::testing::ElementsAre(0, 1)) << "shared: every thread may use both";
  });
  job.set_cpus_allowed_split(true);
  OnOwnThread([&] {
    ASSERT_TRUE(PlaceThisThread(job, 5).ok());
    EXPECT_THAT(AffinityOfThisThread(), ::testing::ElementsAre(1)) << "split: thread 5 of 2 CPUs gets the second";
  });
  v1::JobSpec missing;
  missing.add_cpus_allowed(8000);
  OnOwnThread([&] {
    absl::Status placed = PlaceThisThread(missing, 0);
    EXPECT_FALSE(placed.ok());
    EXPECT_THAT(std::string(placed.message()), HasSubstr("CPUs 8000"));
  });
}

TEST(ThreadPlacement, NumaNodesAndMemoryPolicy) {
  auto node0 = NumaNodeCpus(0);
  ASSERT_TRUE(node0.ok()) << node0.status();  // every Linux host has node 0
  v1::JobSpec job;
  job.add_numa_cpu_nodes(0);
  job.set_numa_mem_policy(v1::JobSpec::NUMA_MEM_BIND);
  job.add_numa_mem_nodes(0);
  OnOwnThread([&] {
    ASSERT_TRUE(PlaceThisThread(job, 0).ok());
    std::vector<int> expected(node0->begin(), node0->end());
    EXPECT_EQ(AffinityOfThisThread(), expected);
    int mode = -1;
    unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {};
    ASSERT_EQ(::syscall(SYS_get_mempolicy, &mode, mask, 1024 + 1, nullptr, 0), 0);
    EXPECT_EQ(mode, 2) << "MPOL_BIND";
    EXPECT_EQ(mask[0] & 1, 1u) << "node 0";
  });
  v1::JobSpec absent;
  absent.add_numa_cpu_nodes(1000);
  OnOwnThread([&] {
    absl::Status placed = PlaceThisThread(absent, 0);
    EXPECT_EQ(placed.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(placed.message()), HasSubstr("numa_cpu_nodes: NUMA node 1000 does not exist on this host (online nodes: "));
  });
  v1::JobSpec interleave_absent;
  interleave_absent.set_numa_mem_policy(v1::JobSpec::NUMA_MEM_INTERLEAVE);
  interleave_absent.add_numa_mem_nodes(0);
  interleave_absent.add_numa_mem_nodes(1000);
  OnOwnThread([&] {
    absl::Status placed = PlaceThisThread(interleave_absent, 0);
    EXPECT_FALSE(placed.ok());
    EXPECT_THAT(std::string(placed.message()), HasSubstr("numa_mem_policy (nodes 0,1000): NUMA node 1000 does not exist on this host (online nodes: "));
  });
}

}  // namespace
}  // namespace iofleet
