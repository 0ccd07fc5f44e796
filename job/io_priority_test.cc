#include "job/io_priority.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/fio_job_file.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<IoPriorities> Of(const std::string& options) {
  auto spec = ParseFioJobText("[j]\nrw=randrw\nsize=1m\nioengine=libaio\n" + options, "p.fio");
  if (!spec.ok()) return spec.status();
  return ResolveIoPriorities(spec->jobs(0));
}

// fio's examples/cmdprio-percentage.fio: 20% of reads realtime, the rest idle (prioclass=3).
TEST(IoPriority, PercentageWithAJobClass) {
  auto p = Of("prioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\n");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->thread_priority);
  EXPECT_EQ(p->default_ioprio, IoprioValue(3, 0));
  ASSERT_EQ(p->rules[0].size(), 1u);
  EXPECT_EQ(p->rules[0][0].percent, 20u);
  EXPECT_EQ(p->rules[0][0].ioprio, IoprioValue(1, 0));
  EXPECT_EQ(p->rules[1].size(), 1u);  // one value: reads and writes
  EXPECT_THAT(p->distinct, ::testing::ElementsAre(IoprioValue(3, 0), IoprioValue(1, 0)));
  EXPECT_EQ(IoprioClass(p->distinct[1]), 1u);
}

// examples/cmdprio-bssplit.fio's forms: one class for every entry, a class and level per entry,
// and a hint per entry.
TEST(IoPriority, BlockSizeSplitForms) {
  auto simple = Of("cmdprio_bssplit=64k/100:1024k/0,1024k/0\ncmdprio_class=1\ncmdprio=0\n");
  ASSERT_TRUE(simple.ok()) << simple.status();
  ASSERT_EQ(simple->rules[0].size(), 1u);
  EXPECT_EQ(simple->rules[0][0].block_size, 65536u);
  EXPECT_TRUE(simple->rules[1].empty());  // 0% of writes: none
  auto advanced = Of("prioclass=2\nprio=7\ncmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\n");
  ASSERT_TRUE(advanced.ok()) << advanced.status();
  EXPECT_EQ(advanced->default_ioprio, IoprioValue(2, 7));
  ASSERT_EQ(advanced->rules[0].size(), 2u);
  EXPECT_EQ(advanced->rules[0][1].ioprio, IoprioValue(3, 2));
  auto hints = Of("cmdprio_bssplit=1M/10/2/0/1:1M/30/2/0/2:1M/60/2/0/0:2M/10/2/0/3:2M/90/2/0/0\n");
  ASSERT_TRUE(hints.ok()) << hints.status();
  EXPECT_EQ(hints->rules[0][0].ioprio, IoprioValue(2, 0, 1));
  EXPECT_EQ(IoprioHint(hints->rules[0][3].ioprio), 3u);
}

TEST(IoPriority, RefusesWhatFioRefuses) {
  EXPECT_THAT(std::string(Of("cmdprio_percentage=20\ncmdprio_bssplit=4k/10\n").status().message()), HasSubstr("cannot be combined"));
  EXPECT_THAT(std::string(Of("cmdprio_bssplit=4k/60/1/0:4k/60/3/0\n").status().message()), HasSubstr("add up to 120%"));
  EXPECT_THAT(std::string(Of("cmdprio_bssplit=4k/10/5/0\n").status().message()), HasSubstr("class 5 is not 0 to 3"));
  EXPECT_FALSE(Of("cmdprio_bssplit=4k/10/1\n").ok());  // three fields
  EXPECT_FALSE(Of("prio=9\n").ok());
  std::string many = "cmdprio_bssplit=";
  for (int level = 0; level < 8; ++level) many += "4k/10/2/" + std::to_string(level) + ":";
  many += "4k/10/1/0\n";
  EXPECT_THAT(std::string(Of(many).status().message()), HasSubstr("at most 8"));
}

}  // namespace
}  // namespace iofleet
