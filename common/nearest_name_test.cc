#include "common/nearest_name.h"

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(NearestName, FindsTypos) {
  std::vector<std::string> names = {"hosts", "hostfile", "interval", "output"};
  EXPECT_EQ(NearestName("hsts", names), "hosts");
  EXPECT_EQ(NearestName("intreval", names), "interval");
  EXPECT_EQ(NearestName("zzzzzzzz", names), "");
  EXPECT_EQ(DidYouMean("outptu", names, "--"), " (did you mean --output?)");
}

TEST(EditDistance, Basics) {
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
  EXPECT_EQ(EditDistance("same", "same"), 0);
}

}  // namespace
}  // namespace iofleet
