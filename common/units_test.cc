#include "common/units.h"

#include "absl/strings/str_cat.h"
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

TEST(ParseSize, ArithmeticAsInFioJobFiles) {
  EXPECT_EQ(*ParseSize("5*1024*1024"), 5u << 20);
  EXPECT_EQ(*ParseSize("(5*1024*1024)"), 5u << 20);
  EXPECT_EQ(*ParseSize("(2*1m+4k)"), (2u << 20) + 4096);
  EXPECT_EQ(*ParseSize("(1+2)*1k"), 3072u);
  EXPECT_EQ(*ParseSize("(7/2)*2"), 6u);  // integer division of whole numbers, as fio's
  EXPECT_EQ(*ParseSize("2^10"), 1024u);
  EXPECT_EQ(*ParseSize("(10 % 3)"), 1u);
  EXPECT_EQ(*ParseSize("-(-4k)"), 4096u);
  EXPECT_EQ(*ParseSize("1g/3"), 357913941u);
  for (const char* bad : {"(1-2)", "(4k", "4k)", "(1/0)", "4k*", "2*4x", "((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))"}) {
    EXPECT_FALSE(ParseSize(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseSize(std::string(60000, '-') + "1").ok());  // bounded, not a stack overflow
  EXPECT_FALSE(ParseSize("2" + std::string(60000, '^')).ok());
  EXPECT_FALSE(ParseSize(absl::StrCat("2", std::string(30000, ' '), "^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2^2")).ok());
  EXPECT_EQ(*EvaluateCount("(16*2)"), 32u);
  EXPECT_FALSE(EvaluateCount("2^70").ok());
}

TEST(ParseDuration, Arithmetic) {
  EXPECT_EQ(*ParseDurationNs("(1m+30s)"), 90'000'000'000ull);
  EXPECT_EQ(*ParseDurationNs("(2*30)"), 60'000'000'000ull);  // bare: the default unit
  EXPECT_EQ(*ParseDurationNs("2*500ms"), 1'000'000'000ull);
}

TEST(Format, HumanUnits) {
  EXPECT_EQ(FormatBytes(4096), "4KiB");
  EXPECT_EQ(FormatBytes(1.5 * 1024 * 1024), "1.50MiB");
  EXPECT_EQ(FormatCount(12345), "12.3k");
  EXPECT_EQ(FormatDurationNs(1500), "1.50us");
}

}  // namespace
}  // namespace iofleet
