#include "worker/block_verify.h"

#include <algorithm>
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

// A 4 KiB block as a job thread writes it: data, sector stamps, then the header.
std::vector<char> WrittenBlock(v1::JobSpec::Verify kind, uint64_t offset, const BlockWriter& writer, int fill) {
  std::vector<char> block(4096);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * fill);
  StampSectors(block.data(), block.size(), offset, writer);
  SealBlock(kind, block.data(), block.size(), offset, writer);
  return block;
}

constexpr BlockWriter kWriter{.job = 2, .worker = 5, .thread = 1, .seed = 0xabc, .generation = 3, .write_number = 17};

TEST_P(BlockVerify, SealedBlocksCheckAndEveryKindOfDamageIsNamed) {
  const std::vector<char> block = WrittenBlock(GetParam(), 8192, kWriter, 7);
  EXPECT_TRUE(CheckBlock(GetParam(), block.data(), block.size(), 8192, 3, "f").ok());
  EXPECT_TRUE(CheckBlock(GetParam(), block.data(), block.size(), 8192, -1, "f").ok());
  const std::string misplaced(CheckBlock(GetParam(), block.data(), block.size(), 4096, 3, "f").message());
  EXPECT_THAT(misplaced, HasSubstr("found the block written for offset 8192"));
  EXPECT_THAT(misplaced, HasSubstr("written by job 2, worker 5, thread 1 (seed 0xabc), generation 3, write 17"));
  EXPECT_THAT(std::string(CheckBlock(GetParam(), block.data(), block.size(), 8192, 4, "f").message()),
              HasSubstr("found generation 3, expected 4 (written by job 2, worker 5"));
  std::vector<char> corrupt = block;
  corrupt[2000] ^= 1;
  absl::Status bad = CheckBlock(GetParam(), corrupt.data(), corrupt.size(), 8192, 3, "/x/f");
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("at offset 8192 in /x/f"));
  EXPECT_THAT(std::string(bad.message()), HasSubstr("the data is corrupted"));
  std::vector<char> zeros(4096, 0);
  EXPECT_THAT(std::string(CheckBlock(GetParam(), zeros.data(), zeros.size(), 0, -1, "f").message()), HasSubstr("no verify header"));
}

TEST_P(BlockVerify, ABlockHoldingSectorsOfTwoWritesIsTornNotStaleOrCorrupted) {
  // The first 2 KiB of a new write (generation 4) landed; the rest is still the old block.
  const std::vector<char> old_block = WrittenBlock(GetParam(), 8192, kWriter, 7);
  BlockWriter next = kWriter;
  next.generation = 4;
  next.write_number = 40;
  std::vector<char> torn = WrittenBlock(GetParam(), 8192, next, 11);
  std::copy(old_block.begin() + 2048, old_block.end(), torn.begin() + 2048);
  const absl::Status status = CheckBlock(GetParam(), torn.data(), torn.size(), 8192, 4, "f");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("generation 4, write 40, but the sector at offset 10240 was written by another write: torn block"));
  // The old header over new data is torn as well, not merely stale.
  std::vector<char> reverse = WrittenBlock(GetParam(), 8192, next, 11);
  std::copy(old_block.begin(), old_block.begin() + 512, reverse.begin());
  EXPECT_THAT(std::string(CheckBlock(GetParam(), reverse.data(), reverse.size(), 8192, 4, "f").message()),
              HasSubstr("torn block"));
}

INSTANTIATE_TEST_SUITE_P(Kinds, BlockVerify, ::testing::Values(v1::JobSpec::VERIFY_CRC32C, v1::JobSpec::VERIFY_MD5));

}  // namespace
}  // namespace iofleet
