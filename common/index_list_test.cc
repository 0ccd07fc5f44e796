#include "common/index_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// fio's cpus_allowed=0-2,5 and the kernel's cpulist "0-3,8": sorted, without repeats, bounded.
TEST(IndexList, RangesAndNumbersSortedWithoutRepeats) {
  EXPECT_THAT(*ParseIndexList("5,0-2,1", 16), ElementsAre(0, 1, 2, 5));
  EXPECT_THAT(*ParseIndexList(" 3 ", 16), ElementsAre(3));
  EXPECT_THAT(std::string(ParseIndexList("3-1", 16).status().message()), HasSubstr("'3-1' is not a number or an ascending range like 0-3"));
  EXPECT_THAT(std::string(ParseIndexList("0,,1", 16).status().message()), HasSubstr("'' is not a number"));
  EXPECT_THAT(std::string(ParseIndexList("4-16", 16).status().message()), HasSubstr("'4-16' goes above 15"));
}

}  // namespace
}  // namespace iofleet
