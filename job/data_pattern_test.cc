#include "job/data_pattern.h"

#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

std::string Hex(const std::string& bytes) {
  std::string out;
  char b[4];
  for (unsigned char c : bytes) {
    snprintf(b, sizeof(b), "%02x ", c);
    out += b;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string Parsed(const char* text) {
  auto p = ParseDataPattern(text, true);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status();
  return p.ok() ? Hex(p->bytes()) : "";
}

// The examples of fio's lib/pattern.c, byte for byte.
TEST(DataPatternTest, ParsesFiosExamples) {
  EXPECT_EQ(Parsed("\"abcd\""), "61 62 63 64");
  EXPECT_EQ(Parsed("-1024"), "00 fc ff ff");
  EXPECT_EQ(Parsed("66"), "42");
  EXPECT_EQ(Parsed("0xFF0X1"), "ff 01");
  EXPECT_EQ(Parsed("%o"), "00 00 00 00 00 00 00 00");
  EXPECT_EQ(Parsed("\"123\"0xFFeeCC"), "31 32 33 ff ee cc");
  EXPECT_EQ(Parsed("-100xab\"1\"%o\"2\""), "f6 ff ff ff ab 31 00 00 00 00 00 00 00 00 32");
  EXPECT_EQ(Parsed("0xaa555aa5"), "aa 55 5a a5");  // surface-scan.fio's
  EXPECT_EQ(Parsed("0"), "00");
  EXPECT_EQ(Parsed("0xabc"), "0a bc");
}

TEST(DataPatternTest, RefusesWhatFioRefuses) {
  EXPECT_FALSE(ParseDataPattern("", true).ok());
  EXPECT_FALSE(ParseDataPattern("\"open", true).ok());
  EXPECT_FALSE(ParseDataPattern("4294967296", true).ok());
  EXPECT_FALSE(ParseDataPattern("%x", true).ok());
  EXPECT_FALSE(ParseDataPattern("zz", true).ok());
  // buffer_pattern has no %o in fio.
  EXPECT_FALSE(ParseDataPattern("%o", false).ok());
  EXPECT_FALSE(ParseDataPattern(std::string(1100, 'f').insert(0, "0x"), true).ok());
  EXPECT_FALSE(ParseDataPattern("'/nonexistent/pattern'", true).ok());
}

TEST(DataPatternTest, FillsAndFindsTheFirstWrongByte) {
  auto p = ParseDataPattern("0xaa55%o", true);
  ASSERT_TRUE(p.ok());
  std::string buffer(40, '\0');
  FillWithPattern(*p, buffer.data(), buffer.size(), 0x0102);
  EXPECT_EQ(Hex(buffer.substr(0, 12)), "aa 55 02 01 00 00 00 00 00 00 aa 55");
  EXPECT_FALSE(FirstPatternMismatch(*p, buffer.data(), buffer.size(), 0, 0x0102).has_value());
  // Starting mid-buffer (after a header), the phase says where in the pattern it is.
  EXPECT_FALSE(FirstPatternMismatch(*p, buffer.data() + 13, buffer.size() - 13, 13, 0x0102).has_value());
  // Another block's offset is a mismatch at its first byte.
  EXPECT_EQ(FirstPatternMismatch(*p, buffer.data(), buffer.size(), 0, 0x0103), 2u);
  buffer[33] ^= 1;
  EXPECT_EQ(FirstPatternMismatch(*p, buffer.data(), buffer.size(), 0, 0x0102), 33u);
}

TEST(DataPatternTest, ChecksRequests) {
  v1::DataPattern p;
  EXPECT_FALSE(CheckDataPattern(p).ok());
  p.set_bytes("abcd");
  EXPECT_TRUE(CheckDataPattern(p).ok());
  p.add_block_offset_at(0);  // 8 bytes of offset in a 4-byte pattern
  EXPECT_FALSE(CheckDataPattern(p).ok());
  p.set_bytes(std::string(600, 'a'));
  p.clear_block_offset_at();
  EXPECT_FALSE(CheckDataPattern(p).ok());
}

}  // namespace
}  // namespace iofleet
