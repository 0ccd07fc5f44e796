#include "controller/host_profiles.h"

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

v1::FoldedStack* Add(v1::HostProfile* p, const std::string& stack, uint64_t count, uint32_t pid) {
  v1::FoldedStack* s = p->add_stacks();
  s->set_stack(stack);
  s->set_count(count);
  s->set_pid(pid);
  return s;
}

std::map<std::string, std::string> ByName(std::vector<std::pair<std::string, std::string>> files) {
  return std::map<std::string, std::string>(files.begin(), files.end());
}

TEST(HostProfiles, TheHostSumsItsProcessesAndEachWorkerGetsItsOwnStacks) {
  google::protobuf::RepeatedPtrField<v1::HostProfile> profiles;
  v1::HostProfile* p = profiles.Add();
  p->set_host("h1");
  p->set_frequency_hz(99);
  Add(p, "io-job;RunJobThread;io_uring_enter", 5, 100);
  Add(p, "io-job;RunJobThread;io_uring_enter", 7, 200);
  Add(p, "kworker/0:1;loop_process_work", 3, 9);
  google::protobuf::RepeatedPtrField<v1::WorkerInfo> workers;
  for (auto [address, pid] : {std::pair<const char*, uint32_t>{"127.0.0.1:1000", 100}, {"127.0.0.1:2000", 200}, {"relay:9", 0}}) {
    v1::WorkerInfo* w = workers.Add();
    w->set_address(address);
    w->set_hostname("h1");
    w->set_pid(pid);
  }
  const std::map<std::string, std::string> files = ByName(ProfileFiles(profiles, workers));
  // The host's stacks summed over its processes, one line per stack.
  EXPECT_EQ(files.at("profile-h1.folded"), "io-job;RunJobThread;io_uring_enter 12\nkworker/0:1;loop_process_work 3\n");
  EXPECT_EQ(files.at("profile-worker-127.0.0.1_1000.folded"), "io-job;RunJobThread;io_uring_enter 5\n");
  EXPECT_EQ(files.at("profile-worker-127.0.0.1_2000.folded"), "io-job;RunJobThread;io_uring_enter 7\n");
  EXPECT_THAT(files.at("flamegraph-worker-127.0.0.1_2000.svg"), ::testing::HasSubstr("worker 127.0.0.1:2000 (pid 200) on h1"));
  EXPECT_EQ(files.count("flamegraph-h1.svg"), 1u);
  // A worker without a process id (behind a relay) has no graph of its own.
  EXPECT_EQ(files.size(), 6u);
}

TEST(HostProfiles, NoWorkerGraphsPastTheLimit) {
  google::protobuf::RepeatedPtrField<v1::HostProfile> profiles;
  v1::HostProfile* p = profiles.Add();
  p->set_host("h1");
  google::protobuf::RepeatedPtrField<v1::WorkerInfo> workers;
  for (int i = 0; i <= kMaxWorkerProfiles; ++i) {
    Add(p, "io-job;x", 1, static_cast<uint32_t>(i + 1));
    v1::WorkerInfo* w = workers.Add();
    w->set_address(absl::StrCat("127.0.0.1:", 1000 + i));
    w->set_hostname("h1");
    w->set_pid(static_cast<uint32_t>(i + 1));
  }
  EXPECT_EQ(ProfileFiles(profiles, workers).size(), 2u);  // the host's folded stacks and graph
}

}  // namespace
}  // namespace iofleet
