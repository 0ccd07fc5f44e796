#include "common/units.h"

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(ParseSize, FioSuffixesAreBinary) {
  EXPECT_EQ(*ParseSize("512"), 512u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("4K"), 4096u);
  EXPECT_EQ(*ParseSize("4KiB"), 4096u);
  EXPECT_EQ(*ParseSize("2m"), 2u << 20);
  EXPECT_EQ(*ParseSize("1g"), 1ull << 30);
  EXPECT_EQ(*ParseSize("1MB"), 1u << 20);
}

TEST(ParseSize, RejectsGarbageWithTheText) {
  auto bad = ParseSize("4x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'4x'"), std::string::npos);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("k").ok());
  EXPECT_FALSE(ParseSize("99999999999p").ok());
}

TEST(ParseDuration, DefaultUnitAndSuffixes) {
  EXPECT_EQ(*ParseDurationNs("30"), 30'000'000'000ull);
  EXPECT_EQ(*ParseDurationNs("500ms"), 500'000'000ull);
  EXPECT_EQ(*ParseDurationNs("2m"), 120'000'000'000ull);
  EXPECT_EQ(*ParseDurationNs("1h"), 3'600'000'000'000ull);
  EXPECT_EQ(*ParseDurationNs("250us"), 250'000ull);
  EXPECT_FALSE(ParseDurationNs("5 parsecs").ok());
}

TEST(Format, HumanUnits) {
  EXPECT_EQ(FormatBytes(4096), "4KiB");
  EXPECT_EQ(FormatBytes(1.5 * 1024 * 1024), "1.50MiB");
  EXPECT_EQ(FormatCount(12345), "12.3k");
  EXPECT_EQ(FormatDurationNs(1500), "1.50us");
}

}  // namespace
}  // namespace iofleet
