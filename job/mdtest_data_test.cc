#include "job/mdtest_data.h"

#include <stdlib.h>

#include <cstring>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

using Packet = v1::MetadataPhase;

uint64_t Word(const std::vector<char>& data, size_t i) {
  uint64_t w;
  std::memcpy(&w, data.data() + 8 * i, 8);
  return w;
}

// mdtest's default ("timestamp"): 64-bit words (task << 32) | (seed + i), the bytes past the last
// whole word set to their offset; the same for every item.
TEST(MdtestData, TimestampPackets) {
  MdtestData data(Packet::PACKET_TIMESTAMP, 1000, 3, 21);
  const std::vector<char> first = data.ForItem(0);
  ASSERT_EQ(first.size(), 21u);
  EXPECT_EQ(Word(first, 0), (uint64_t{3} << 32) | 1000);
  EXPECT_EQ(Word(first, 1), (uint64_t{3} << 32) | 1001);
  EXPECT_EQ(first[16], 16);
  EXPECT_EQ(first[20], 20);
  EXPECT_EQ(data.ForItem(7), first);
  EXPECT_NE(MdtestData(Packet::PACKET_TIMESTAMP, 1000, 4, 21).ForItem(0), first) << "each task's data differs";
  // A negative seed wraps as mdtest's int + size_t does: the rank is hidden under the ones.
  EXPECT_EQ(Word(MdtestData(Packet::PACKET_TIMESTAMP, -2, 3, 8).ForItem(0), 0), ~uint64_t{1});
}

// Offset packets: every 512th word names the item (k-th such word: item * k) and the task.
TEST(MdtestData, OffsetPacketsNameTheItem) {
  MdtestData data(Packet::PACKET_OFFSET, 5, 2, 8 * 1030);
  const std::vector<char> item9 = data.ForItem(9);
  EXPECT_EQ(Word(item9, 0), (uint64_t{2} << 32) | 9);
  EXPECT_EQ(Word(item9, 1), (uint64_t{2} << 32) | 6);
  EXPECT_EQ(Word(item9, 512), (uint64_t{2} << 32) | 18);
  EXPECT_EQ(Word(item9, 1024), (uint64_t{2} << 32) | 27);
}

// Random packets: per item, rand_r(seed + rank + item), then the golden-ratio generator.
TEST(MdtestData, RandomPackets) {
  MdtestData data(Packet::PACKET_RANDOM, 11, 1, 24);
  const std::vector<char> item4 = data.ForItem(4);
  unsigned seed = 11 + 1 + 4;
  uint64_t state = static_cast<uint64_t>(rand_r(&seed));
  state = (state * 0x9e37fffffffc0001ULL) >> 3;
  EXPECT_EQ(Word(item4, 0), state);
  state = (state * 0x9e37fffffffc0001ULL) >> 3;
  EXPECT_EQ(Word(item4, 1), state);
  EXPECT_NE(data.ForItem(5), item4);
}

// What a task wrote verifies for that task and item, and not for another item or task; a
// shorter read checks the prefix, with mdtest's tail bytes.
TEST(MdtestData, WrittenDataVerifies) {
  for (auto packet : {Packet::PACKET_TIMESTAMP, Packet::PACKET_OFFSET, Packet::PACKET_INCOMPRESSIBLE, Packet::PACKET_RANDOM}) {
    MdtestData writer(packet, 77, 3, 8 * 600);
    const std::vector<char> written = writer.ForItem(12);
    const MdtestData reader(packet, 77, 3, 8 * 600);
    EXPECT_TRUE(reader.Matches(12, written)) << packet;
    EXPECT_TRUE(reader.Matches(12, absl::MakeConstSpan(written).subspan(0, 800))) << packet << ": a prefix of whole words";
    std::vector<char> flipped = written;
    flipped[100] ^= 1;
    EXPECT_FALSE(reader.Matches(12, flipped)) << packet;
    if (packet != Packet::PACKET_TIMESTAMP) {
      EXPECT_FALSE(reader.Matches(13, written)) << packet << ": another item's data";
    }
    EXPECT_FALSE(MdtestData(packet, 77, 4, 8 * 600).Matches(12, written)) << packet << ": another task's data";
  }
}

}  // namespace
}  // namespace iofleet
