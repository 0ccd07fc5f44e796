#include "worker/emulated_zones.h"

#include <set>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

constexpr uint64_t kZone = 64 * 1024;
constexpr uint64_t kBlock = 4096;

v1::ZoneSpec Zones(uint32_t max_open = 0) {
  v1::ZoneSpec spec;
  spec.set_mode(v1::ZoneSpec::ZBD);
  spec.set_size(kZone);
  spec.set_max_open_zones(max_open);
  return spec;
}

const EmulatedZones::Region kAll{0, 8 * kZone};

TEST(EmulatedZones, WritesGoToTheWritePointerWhereverTheyAreAimed) {
  EmulatedZones zones(Zones(), 8 * kZone);
  // Aimed in the middle of zone 2: it lands at the zone's start, the next one after it.
  auto first = zones.Place(DataDirection::kWrite, 2 * kZone + 5 * kBlock, kBlock, kBlock, true, kAll);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->offset, 2 * kZone);
  auto second = zones.Place(DataDirection::kWrite, 2 * kZone + 9 * kBlock, kBlock, kBlock, true, kAll);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->offset, 2 * kZone + kBlock);
  EXPECT_EQ(zones.written(2), 2 * kBlock);
  EXPECT_EQ(zones.written(3), 0u);
}

TEST(EmulatedZones, AFullZoneIsResetBeforeItIsWrittenAgain) {
  EmulatedZones zones(Zones(), 8 * kZone);
  uint32_t resets = 0;
  for (int i = 0; i < 16; ++i) {
    auto placed = zones.Place(DataDirection::kWrite, 0, 8 * kBlock, kBlock, false, kAll);
    ASSERT_TRUE(placed);
    EXPECT_EQ(placed->offset, static_cast<uint64_t>(i % 2) * 8 * kBlock) << "write " << i;
    resets += placed->zone_resets;
  }
  EXPECT_EQ(resets, 7u);  // 16 half-zone writes: 8 fills of the zone, the first needs no reset
}

TEST(EmulatedZones, NoMoreThanMaxOpenZonesAreWrittenAtOnce) {
  EmulatedZones zones(Zones(/*max_open=*/2), 8 * kZone);
  std::set<uint64_t> zones_written;
  for (uint64_t i = 0; i < 8; ++i) {
    auto placed = zones.Place(DataDirection::kWrite, i * kZone, kBlock, kBlock, true, kAll);
    ASSERT_TRUE(placed);
    zones_written.insert(placed->offset / kZone);
    EXPECT_LE(zones.open_zones(), 2u);
  }
  EXPECT_EQ(zones_written.size(), 2u);  // aimed at eight zones, written in two
}

TEST(EmulatedZones, ReadsStayBelowTheWritePointers) {
  EmulatedZones zones(Zones(), 8 * kZone);
  // Nothing written: nothing to read (fio ends the pass).
  EXPECT_FALSE(zones.Place(DataDirection::kRead, 0, kBlock, kBlock, true, kAll));
  ASSERT_TRUE(zones.Place(DataDirection::kWrite, 5 * kZone, 4 * kBlock, kBlock, false, kAll));
  // A random read aimed at an empty zone goes to the nearest zone with data, inside its data.
  for (uint64_t aimed : {uint64_t{0}, 3 * kZone + kBlock, 7 * kZone}) {
    auto read = zones.Place(DataDirection::kRead, aimed, kBlock, kBlock, true, kAll);
    ASSERT_TRUE(read);
    EXPECT_GE(read->offset, 5 * kZone);
    EXPECT_LE(read->offset + read->length, 5 * kZone + 4 * kBlock);
  }
  // A sequential read past the data of its zone moves on to the next zone with data; after the
  // last there is none.
  auto next = zones.Place(DataDirection::kRead, 2 * kZone, kBlock, kBlock, false, kAll);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->offset, 5 * kZone);
  EXPECT_FALSE(zones.Place(DataDirection::kRead, 5 * kZone + 4 * kBlock, kBlock, kBlock, false, kAll));
  // A read longer than the data is cut to it.
  auto cut = zones.Place(DataDirection::kRead, 5 * kZone, 16 * kBlock, kBlock, false, kAll);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->length, 4 * kBlock);
}

TEST(EmulatedZones, ReadBeyondWritePointerReadsWhereAimed) {
  v1::ZoneSpec spec = Zones();
  spec.set_read_beyond_wp(true);
  EmulatedZones zones(spec, 8 * kZone);
  auto read = zones.Place(DataDirection::kRead, 3 * kZone + kBlock, kBlock, kBlock, true, kAll);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->offset, 3 * kZone + kBlock);
}

TEST(EmulatedZones, TrimsResetZonesThatHoldData) {
  EmulatedZones zones(Zones(), 8 * kZone);
  ASSERT_TRUE(zones.Place(DataDirection::kWrite, 6 * kZone, kBlock, kBlock, false, kAll));
  // A random trim aimed at an empty zone goes to one with data and empties it.
  auto trim = zones.Place(DataDirection::kTrim, 1 * kZone, kZone, kZone, true, kAll);
  ASSERT_TRUE(trim);
  EXPECT_EQ(trim->offset, 6 * kZone);
  EXPECT_EQ(trim->zone_resets, 1u);
  EXPECT_EQ(zones.written(6), 0u);
  // Nothing left to trim.
  EXPECT_FALSE(zones.Place(DataDirection::kTrim, 1 * kZone, kZone, kZone, true, kAll));
}

TEST(EmulatedZones, ResetThresholdAndFrequencyEmptyZonesWhileTheRangeIsFull) {
  v1::ZoneSpec spec = Zones();
  spec.set_reset_threshold(0.5);
  spec.set_reset_frequency(0.25);  // every 4th write once half the range holds data
  EmulatedZones zones(spec, 8 * kZone);
  zones.StartPass(kAll, false);
  uint32_t resets = 0;
  // Fill four zones (half the range) with whole-zone writes: no resets yet.
  for (uint64_t z = 0; z < 4; ++z) {
    auto placed = zones.Place(DataDirection::kWrite, z * kZone, kZone, kBlock, false, kAll);
    ASSERT_TRUE(placed);
    resets += placed->zone_resets;
  }
  EXPECT_EQ(resets, 0u);
  for (int i = 0; i < 8; ++i) {
    auto placed = zones.Place(DataDirection::kWrite, 4 * kZone, kBlock, kBlock, false, kAll);
    ASSERT_TRUE(placed);
    resets += placed->zone_resets;
  }
  EXPECT_EQ(resets, 2u);  // writes 4 and 8 past the threshold
}

TEST(ZoneRegistry, JobsOfOneFileShareItsZonesAndMustAgreeOnThem) {
  ZoneRegistry registry;
  auto a = registry.Get("/f", Zones(4), 4 * kZone);
  auto b = registry.Get("/f", Zones(0), 8 * kZone);  // no limit of its own: takes the file's
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ((*a)->zones(), 8u);  // grown to cover the larger job
  EXPECT_FALSE(registry.Get("/f", Zones(2), 4 * kZone).ok());
  v1::ZoneSpec other = Zones();
  other.set_size(2 * kZone);
  EXPECT_FALSE(registry.Get("/f", other, 4 * kZone).ok());
  auto c = registry.Get("/g", other, 4 * kZone);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(*c, *a);
}

}  // namespace
}  // namespace iofleet
