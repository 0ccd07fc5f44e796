#include "worker/random_offsets.h"

#include <algorithm>
#include <map>
#include <set>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// Share of all draws that fall on the `top` most frequently drawn units.
double HotShare(v1::RandomDistribution::Kind kind, double parameter, int top) {
  v1::RandomDistribution d;
  d.set_kind(kind);
  d.set_parameter(parameter);
  RandomOffsets offsets(d, 1000, false, 11);
  std::mt19937_64 rng(5);
  std::map<uint64_t, int> counts;
  const int draws = 20000;
  for (int i = 0; i < draws; ++i) {
    const uint64_t unit = offsets.Next(rng);
    EXPECT_LT(unit, 1000u);
    ++counts[unit];
  }
  std::vector<int> sorted;
  for (const auto& [unit, n] : counts) sorted.push_back(n);
  std::sort(sorted.rbegin(), sorted.rend());
  int hot = 0;
  for (int i = 0; i < top && i < static_cast<int>(sorted.size()); ++i) hot += sorted[i];
  return static_cast<double>(hot) / draws;
}

TEST(BlockPermutation, VisitsEveryBlockExactlyOncePerPass) {
  for (uint64_t count : {1ull, 2ull, 7ull, 64ull, 1000ull, 4097ull}) {
    BlockPermutation permutation(count, count * 31);
    std::set<uint64_t> seen;
    for (uint64_t i = 0; i < count; ++i) seen.insert(permutation.Next());
    EXPECT_EQ(seen.size(), count);
    EXPECT_EQ(*seen.rbegin(), count - 1);
  }
  // Not simply sequential.
  BlockPermutation p(1000, 5);
  int in_order = 0;
  uint64_t previous = p.Next();
  for (int i = 0; i < 999; ++i) {
    uint64_t next = p.Next();
    in_order += next == previous + 1;
    previous = next;
  }
  EXPECT_LT(in_order, 100);
}

TEST(RandomOffsets, SkewedDistributionsConcentrateOnHotUnits) {
  const double uniform = HotShare(v1::RandomDistribution::UNIFORM, 0, 10);
  EXPECT_LT(uniform, 0.03);  // 10 of 1000 units: ~1%
  EXPECT_GT(HotShare(v1::RandomDistribution::ZIPF, 1.2, 10), 0.40);
  EXPECT_GT(HotShare(v1::RandomDistribution::PARETO, 0.2, 10), 0.20);
  // normal:5 -> ~68% of draws within +-50 units of the middle: the top 100 units hold most.
  EXPECT_GT(HotShare(v1::RandomDistribution::NORMAL, 5, 100), 0.70);
}

TEST(RandomOffsets, HotUnitsAreSpreadOverTheFile) {
  v1::RandomDistribution d;
  d.set_kind(v1::RandomDistribution::ZIPF);
  d.set_parameter(1.2);
  RandomOffsets offsets(d, 100000, false, 3);
  std::mt19937_64 rng(1);
  std::set<uint64_t> hottest;
  for (int i = 0; i < 200; ++i) hottest.insert(offsets.Next(rng));
  // Not all crowded at the start of the file, as raw zipf ranks would be.
  EXPECT_GT(*hottest.rbegin(), 50000u);
}

TEST(RandomOffsets, TheMapVisitsEveryUnitOncePerPass) {
  RandomOffsets offsets(v1::RandomDistribution(), 777, true, 9);
  std::mt19937_64 rng(2);
  for (int pass = 0; pass < 2; ++pass) {
    offsets.NewPass();
    std::set<uint64_t> seen;
    for (int i = 0; i < 777; ++i) seen.insert(offsets.Next(rng));
    EXPECT_EQ(seen.size(), 777u);
  }
}

}  // namespace
}  // namespace iofleet
