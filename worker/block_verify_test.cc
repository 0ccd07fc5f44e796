#include "worker/block_verify.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/data_pattern.h"

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
std::vector<char> WrittenBlock(const VerifyFormat& format, uint64_t offset, const BlockWriter& writer, int fill) {
  std::vector<char> block(4096);
  for (size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * fill);
  SealBlock(format, block.data(), block.size(), offset, writer);
  return block;
}

constexpr BlockWriter kWriter{.job = 2, .worker = 5, .thread = 1, .seed = 0xabc, .generation = 3, .write_number = 17};

TEST_P(BlockVerify, SealedBlocksCheckAndEveryKindOfDamageIsNamed) {
  const VerifyFormat format{.kind = GetParam()};
  const std::vector<char> block = WrittenBlock(format, 8192, kWriter, 7);
  EXPECT_TRUE(CheckBlock(format, block.data(), block.size(), 8192, 3, "f").ok());
  EXPECT_TRUE(CheckBlock(format, block.data(), block.size(), 8192, -1, "f").ok());
  const std::string misplaced(CheckBlock(format, block.data(), block.size(), 4096, 3, "f").message());
  EXPECT_THAT(misplaced, HasSubstr("found the block written for offset 8192"));
  EXPECT_THAT(misplaced, HasSubstr("written by job 2, worker 5, thread 1 (seed 0xabc), generation 3, write 17"));
  EXPECT_THAT(std::string(CheckBlock(format, block.data(), block.size(), 8192, 4, "f").message()),
              HasSubstr("found generation 3, expected 4 (written by job 2, worker 5"));
  std::vector<char> corrupt = block;
  corrupt[2000] ^= 1;
  absl::Status bad = CheckBlock(format, corrupt.data(), corrupt.size(), 8192, 3, "/x/f");
  EXPECT_EQ(bad.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("at offset 8192 in /x/f"));
  EXPECT_THAT(std::string(bad.message()), HasSubstr("the data is corrupted"));
  std::vector<char> zeros(4096, 0);
  EXPECT_THAT(std::string(CheckBlock(format, zeros.data(), zeros.size(), 0, -1, "f").message()), HasSubstr("no verify header"));
}

TEST_P(BlockVerify, ABlockHoldingSectorsOfTwoWritesIsTornNotStaleOrCorrupted) {
  const VerifyFormat format{.kind = GetParam()};
  // The first 2 KiB of a new write (generation 4) landed; the rest is still the old block.
  const std::vector<char> old_block = WrittenBlock(format, 8192, kWriter, 7);
  BlockWriter next = kWriter;
  next.generation = 4;
  next.write_number = 40;
  std::vector<char> torn = WrittenBlock(format, 8192, next, 11);
  std::copy(old_block.begin() + 2048, old_block.end(), torn.begin() + 2048);
  const absl::Status status = CheckBlock(format, torn.data(), torn.size(), 8192, 4, "f");
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("generation 4, write 40, but the sector at offset 10240 was written by another write: torn block"));
  // The old header over new data is torn as well, not merely stale.
  std::vector<char> reverse = WrittenBlock(format, 8192, next, 11);
  std::copy(old_block.begin(), old_block.begin() + 512, reverse.begin());
  EXPECT_THAT(std::string(CheckBlock(format, reverse.data(), reverse.size(), 8192, 4, "f").message()),
              HasSubstr("torn block"));
}

// Every checksum fio offers; meta checks the header and the sector stamps but not the data.
INSTANTIATE_TEST_SUITE_P(Kinds, BlockVerify,
                         ::testing::Values(v1::JobSpec::VERIFY_CRC32C, v1::JobSpec::VERIFY_MD5, v1::JobSpec::VERIFY_CRC64,
                                           v1::JobSpec::VERIFY_CRC32, v1::JobSpec::VERIFY_CRC16, v1::JobSpec::VERIFY_CRC7,
                                           v1::JobSpec::VERIFY_SHA1, v1::JobSpec::VERIFY_SHA256, v1::JobSpec::VERIFY_SHA512,
                                           v1::JobSpec::VERIFY_SHA3_224, v1::JobSpec::VERIFY_SHA3_256, v1::JobSpec::VERIFY_SHA3_384,
                                           v1::JobSpec::VERIFY_SHA3_512, v1::JobSpec::VERIFY_XXHASH));

// The published check values ("123456789") of each CRC and of XXH32.
TEST(Checksums, KnownVectors) {
  EXPECT_EQ(Crc64("123456789", 9), 0x995DC9BBDF1939FAull);  // CRC-64/XZ
  EXPECT_EQ(Crc32("123456789", 9), 0xCBF43926u);             // CRC-32 (zlib)
  EXPECT_EQ(Crc16("123456789", 9), 0xBB3Du);                 // CRC-16/ARC
  EXPECT_EQ(Crc7("123456789", 9), 0x75u);                    // CRC-7/MMC
  EXPECT_EQ(XxHash32("", 0), 0x02CC5D05u);
  EXPECT_EQ(XxHash32("123456789", 9), 0x937BAD67u);
}

TEST(BlockVerifyMeta, ChecksTheHeaderNotTheData) {
  const VerifyFormat meta{.kind = v1::JobSpec::VERIFY_META};
  std::vector<char> block = WrittenBlock(meta, 8192, kWriter, 7);
  EXPECT_TRUE(CheckBlock(meta, block.data(), block.size(), 8192, 3, "f").ok());
  block[3000] ^= 1;  // data fio's meta does not cover
  EXPECT_TRUE(CheckBlock(meta, block.data(), block.size(), 8192, 3, "f").ok());
  block[48] ^= 1;  // the writer's job index in the header
  EXPECT_THAT(std::string(CheckBlock(meta, block.data(), block.size(), 8192, 3, "f").message()), HasSubstr("the header is corrupted"));
}

// surface-scan.fio: verify=meta, verify_pattern=0xaa555aa5, verify_interval=512 on 64k blocks.
TEST(BlockVerifyPattern, EveryIntervalHasAHeaderAndThePatternAfterIt) {
  v1::DataPattern pattern;
  pattern.set_bytes("\xaa\x55\x5a\xa5");
  const VerifyFormat format{.kind = v1::JobSpec::VERIFY_META, .interval = 512, .pattern = &pattern};
  std::vector<char> block(65536);
  SealBlock(format, block.data(), block.size(), 1 << 20, kWriter);
  EXPECT_TRUE(CheckBlock(format, block.data(), block.size(), 1 << 20, -1, "f").ok());
  // Interval 3 starts at 1536 with its own header for its own offset; its data is the pattern.
  uint64_t header_offset;
  std::memcpy(&header_offset, block.data() + 1536 + 8, 8);
  EXPECT_EQ(header_offset, (1u << 20) + 1536);
  EXPECT_EQ(static_cast<uint8_t>(block[1536 + 80]), 0xaa);
  EXPECT_EQ(static_cast<uint8_t>(block[1536 + 81]), 0x55);
  std::vector<char> bad = block;
  bad[1536 + 100] = 0;
  const std::string message(CheckBlock(format, bad.data(), bad.size(), 1 << 20, -1, "f").message());
  EXPECT_THAT(message, HasSubstr("of 512 bytes at offset 1050112"));
  EXPECT_THAT(message, HasSubstr("byte 100 of the block (file offset 1050212) is 00, the pattern has aa"));
  // An interval swapped with another is misplaced.
  std::vector<char> swapped = block;
  std::copy(block.begin(), block.begin() + 512, swapped.begin() + 512);
  EXPECT_THAT(std::string(CheckBlock(format, swapped.data(), swapped.size(), 1 << 20, -1, "f").message()),
              HasSubstr("found the block written for offset 1048576 (512 bytes)"));
}

TEST(BlockVerifyPattern, PatternWithoutHeaderChecksEveryByteAndTheOffset) {
  auto pattern = ParseDataPattern("\"ab\"%o", true);
  ASSERT_TRUE(pattern.ok());
  const VerifyFormat format{.kind = v1::JobSpec::VERIFY_PATTERN_NO_HEADER, .pattern = &*pattern};
  std::vector<char> block(4096);
  SealBlock(format, block.data(), block.size(), 40960, kWriter);
  EXPECT_EQ(block[0], 'a');
  EXPECT_TRUE(CheckBlock(format, block.data(), block.size(), 40960, -1, "f").ok());
  // The same bytes read at another offset: %o tells.
  EXPECT_THAT(std::string(CheckBlock(format, block.data(), block.size(), 0, -1, "f").message()), HasSubstr("is not the pattern"));
}

}  // namespace
}  // namespace iofleet
