#include "common/printable.h"

#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(Printable, ControlBytesAndBrokenUtf8AreEscapedLongTextIsCut) {
  EXPECT_EQ(Printable("size=1m"), "size=1m");
  EXPECT_EQ(Printable(std::string("ab\0cd", 5)), "ab\\x00cd");
  EXPECT_EQ(Printable("\x1b[2J"), "\\x1b[2J") << "a terminal escape";
  EXPECT_EQ(Printable("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 stays";
  EXPECT_EQ(Printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(Printable(std::string(100000, 's'), 10), "ssssssssss... (100000 bytes in all)");
}

}  // namespace
}  // namespace iofleet
