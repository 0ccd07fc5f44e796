#include "worker/cpu_profile.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

// What `perf script -F comm,pid,ip,sym` prints (perf 6.1), innermost frame first.
constexpr char kScript[] =
    "          io-job  4242 \n"
    "\tffffffff8156a2b0 io_submit_sqes\n"
    "\tffffffff8156b001 __do_sys_io_uring_enter\n"
    "\t55d0c0a1b2c3 iofleet::RunJobThread(iofleet::JobThreadPlan const&, iofleet::StopSignal const&)\n"
    "\n"
    "io-job 4242\n"
    "\tffffffff8156a2b0 io_submit_sqes\n"
    "\tffffffff8156b001 __do_sys_io_uring_enter\n"
    "\t55d0c0a1b2c3 iofleet::RunJobThread(iofleet::JobThreadPlan const&, iofleet::StopSignal const&)\n"
    "\n"
    "kworker/u4:1-ev    77 \n"
    "\tffffffff81000000 loop_process_work\n"
    "\t7f0000000000 [unknown]\n"
    "\n"
    "io-job 4343 \n"
    "\tffffffff8156a2b0 io_submit_sqes\n"
    "\n"
    "swapper     0 \n"
    "\tffffffff821f2c2b pv_native_safe_halt\n";

TEST(FoldPerfScript, FoldsSamplesRootFirstWithTheThreadNamePerProcess) {
  std::istringstream in(kScript);
  using Key = std::pair<uint32_t, std::string>;
  EXPECT_THAT(FoldPerfScript(in), ::testing::ElementsAre(
                                      ::testing::Pair(Key{0, "swapper;pv_native_safe_halt"}, 1u),
                                      ::testing::Pair(Key{77, "kworker/u4:1-ev;[unknown];loop_process_work"}, 1u),
                                      ::testing::Pair(Key{4242, "io-job;iofleet::RunJobThread(iofleet::JobThreadPlan const&, iofleet::StopSignal const&);__do_sys_io_uring_enter;io_submit_sqes"}, 2u),
                                      ::testing::Pair(Key{4343, "io-job;io_submit_sqes"}, 1u)));
}

TEST(FoldPerfScript, NoSemicolonOrSpaceInAThreadNameBreaksTheFormat) {
  std::istringstream in("a b;c\n\tffff x;y\n\n");
  EXPECT_THAT(FoldPerfScript(in), ::testing::ElementsAre(::testing::Pair(std::pair<uint32_t, std::string>{0, "a_b:c;x:y"}, 1u)));
}

TEST(ParsePerfStat, ReadsCountersAndNamesThoseTheKernelDoesNotCount) {
  v1::HostProfile profile;
  ParsePerfStat(
      "# started on Fri Nov 27 12:46:45 2026\n\n"
      "123456789,,cycles,2000000,100.00,,\n"
      "98765432,,instructions,2000000,100.00,0.80,insn per cycle\n"
      "<not supported>,,cache-misses,0,100.00,,\n",
      &profile);
  EXPECT_TRUE(profile.has_cycles());
  EXPECT_EQ(profile.cycles(), 123456789u);
  EXPECT_TRUE(profile.has_instructions());
  EXPECT_EQ(profile.instructions(), 98765432u);
  EXPECT_FALSE(profile.has_cache_misses());
  EXPECT_THAT(profile.problems(), ::testing::ElementsAre(::testing::HasSubstr("cache-misses <not supported>")));
}

}  // namespace
}  // namespace iofleet
