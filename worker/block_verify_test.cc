#include "worker/block_verify.h"

#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

TEST(Crc32c, KnownVectors) {
  // RFC 3720's test vector and the classic "123456789" check value.
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
}

class BlockVerify : public ::testing::TestWithParam<v1::JobSpec::Verify> {};

TEST_P(BlockVerify, SealedBlocksCheckAndEveryKindOfDamageIsNamed) {
  std::vector<char> block(4096);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 7);
  SealBlock(GetParam(), block.data(), block.size(), 8192, 3);
  EXPECT_TRUE(CheckBlock(GetParam(), block.data(), block.size(), 8192, 3, "f").ok());
  EXPECT_TRUE(CheckBlock(GetParam(), block.data(), block.size(), 8192, -1, "f").ok());
  EXPECT_THAT(std::string(CheckBlock(GetParam(), block.data(), block.size(), 4096, 3, "f").message()),
              HasSubstr("found the block written for offset 8192"));
  EXPECT_THAT(std::string(CheckBlock(GetParam(), block.data(), block.size(), 8192, 4, "f").message()),
              HasSubstr("found generation 3, expected 4: stale data"));
  std::vector<char> corrupt = block;
  corrupt[2000] ^= 1;
  absl::Status bad = CheckBlock(GetParam(), corrupt.data(), corrupt.size(), 8192, 3, "/x/f");
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("at offset 8192 in /x/f"));
  EXPECT_THAT(std::string(bad.message()), HasSubstr("the data is corrupted"));
  std::vector<char> zeros(4096, 0);
  EXPECT_THAT(std::string(CheckBlock(GetParam(), zeros.data(), zeros.size(), 0, -1, "f").message()), HasSubstr("no verify header"));
}

INSTANTIATE_TEST_SUITE_P(Kinds, BlockVerify, ::testing::Values(v1::JobSpec::VERIFY_CRC32C, v1::JobSpec::VERIFY_MD5));

}  // namespace
}  // namespace iofleet
