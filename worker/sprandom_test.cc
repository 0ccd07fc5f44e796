#include "worker/sprandom.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// fio's model for spr_op=0.15: write amplification 0.5/0.15 + 0.7, so the block garbage
// collection takes is 1 - 1/WA = 75.2% valid; the emptiest region holds that much, the fullest
// all of it, and the shares fall in between.
TEST(Sprandom, InvalidSharesFollowTheModel) {
  const std::vector<uint32_t> shares = SprandomOffsets::InvalidShares(100, 0.15);
  ASSERT_EQ(shares.size(), 100u);
  EXPECT_EQ(shares.front(), 2479u);
  EXPECT_EQ(shares.back(), 0u);
  EXPECT_TRUE(std::is_sorted(shares.rbegin(), shares.rend()));
  // fio's resampling (linear between the curve's points, at evenly spaced space), computed
  // apart: 2479, 2458, 2436 ... 1918 at region 25, 1315 at region 50.
  EXPECT_EQ(shares[1], 2458u);
  EXPECT_EQ(shares[2], 2436u);
  EXPECT_EQ(shares[25], 1918u);
  EXPECT_EQ(shares[50], 1315u);
  EXPECT_EQ(SprandomOffsets::InvalidShares(1, 0.15), std::vector<uint32_t>{0});
  EXPECT_EQ(SprandomOffsets::PhysicalBlocks(1000, 0.15), 1150u);
}

// Written to a log-structured drive (each write at the next physical place), the sequence
// leaves every region as valid as the model says: the data it holds at the end is the last
// write of each block. Every logical block is written.
TEST(Sprandom, LeavesEachRegionAsValidAsTheModelSays) {
  const uint64_t blocks = 20000;
  const uint32_t regions = 10;
  SprandomOffsets offsets(blocks, 0.15, regions, 42);
  std::vector<int64_t> last_write(blocks, -1);
  uint64_t writes = 0;
  while (const std::optional<uint64_t> b = offsets.Next()) {
    ASSERT_LT(*b, blocks);
    last_write[*b] = static_cast<int64_t>(writes++);
    ASSERT_LT(writes, 2 * blocks) << "never ends";
  }
  EXPECT_TRUE(std::none_of(last_write.begin(), last_write.end(), [](int64_t w) { return w < 0; }));
  const uint64_t region_writes = SprandomOffsets::PhysicalBlocks(blocks, 0.15) / regions;
  EXPECT_GE(writes, blocks);
  EXPECT_LE(writes, SprandomOffsets::PhysicalBlocks(blocks, 0.15) + region_writes);
  std::vector<uint64_t> valid(regions + 2, 0);
  for (const int64_t w : last_write) ++valid[static_cast<uint64_t>(w) / region_writes];
  const std::vector<uint32_t> shares = SprandomOffsets::InvalidShares(regions, 0.15);
  for (uint32_t r = 0; r + 1 < regions; ++r) {
    const double expected = 1.0 - shares[r] / 10000.0;
    EXPECT_NEAR(static_cast<double>(valid[r]) / region_writes, expected, 0.03) << "region " << r;
  }
  // A new pass starts over: the same number of writes, a new order.
  offsets.NewPass();
  uint64_t again = 0;
  while (offsets.Next()) ++again;
  EXPECT_NEAR(static_cast<double>(again), static_cast<double>(writes), 0.02 * writes);
}

TEST(Sprandom, RefusesRegionsWithoutBlocksOrTooMuchToKeep) {
  EXPECT_FALSE(SprandomOffsets::Check(50, 0.15, 100).ok());
  EXPECT_TRUE(SprandomOffsets::Check(1000, 0.15, 100).ok());
  EXPECT_FALSE(SprandomOffsets::Check(uint64_t{1} << 40, 0.15, 100).ok());
}

}  // namespace
}  // namespace iofleet
