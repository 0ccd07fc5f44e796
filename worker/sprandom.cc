#include "worker/sprandom.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

constexpr uint32_t kShareScale = 10000;  // invalid shares are per 10,000, as fio's

// Evenly spaced values from `first` to `last` (both included).
std::vector<double> Spaced(double first, double last, uint32_t n) {
  std::vector<double> values(n, first);
  for (uint32_t i = 1; i < n; ++i) values[i] = first + (last - first) * i / (n - 1);
  return values;
}

}  // namespace

uint64_t SprandomOffsets::PhysicalBlocks(uint64_t blocks, double over_provisioning) {
  return blocks + static_cast<uint64_t>(std::ceil(static_cast<double>(blocks) * over_provisioning));
}

absl::Status SprandomOffsets::Check(uint64_t blocks, double over_provisioning, uint32_t regions) {
  const uint64_t physical = PhysicalBlocks(blocks, over_provisioning);
  if (regions == 0 || physical / regions == 0) {
    return absl::InvalidArgumentError(absl::StrCat("sprandom: ", regions, " regions over ", physical, " blocks leave a region with no block: lower spr_num_regions"));
  }
  if (physical / regions > kMaxKeptWrites) {
    return absl::InvalidArgumentError(absl::StrCat("sprandom: regions of ", physical / regions, " blocks would keep more than ", kMaxKeptWrites,
                                                   " writes for rewriting: raise spr_num_regions to at least ", physical / kMaxKeptWrites + 1));
  }
  return absl::OkStatus();
}

std::vector<uint32_t> SprandomOffsets::InvalidShares(uint32_t regions, double over_provisioning) {
  const double write_amplification = 0.5 / over_provisioning + 0.7;
  const double gc_validity = 1.0 - 1.0 / write_amplification;
  // The curve: validity evenly spaced from full to the GC block's, each at x = the space its
  // blocks take so far (space at validity v is proportional to 1/v).
  const std::vector<double> validity = Spaced(1.0, gc_validity, regions);
  std::vector<double> space(regions);
  double total = 0;
  for (uint32_t i = 0; i < regions; ++i) space[i] = total += 1.0 / validity[i];
  // Resampled at evenly spaced x: the validity of equal-sized regions.
  const std::vector<double> x = Spaced(space.front(), space.back(), regions);
  std::vector<uint32_t> shares(regions);
  size_t segment = 0;
  for (uint32_t i = 0; i < regions; ++i) {
    double v = validity.back();
    if (x[i] <= space.front()) {
      v = validity.front();
    } else if (x[i] < space.back()) {
      while (segment + 1 < space.size() && space[segment + 1] < x[i]) ++segment;
      const double width = space[segment + 1] - space[segment];
      v = width < 1e-9 ? validity[segment] : validity[segment] + (validity[segment + 1] - validity[segment]) * (x[i] - space[segment]) / width;
    }
    // Reversed: the first region is the one with the least valid data.
    shares[regions - 1 - i] = static_cast<uint32_t>(std::lround((1.0 - v) * kShareScale));
  }
  return shares;
}

SprandomOffsets::SprandomOffsets(uint64_t blocks, double over_provisioning, uint32_t regions, uint64_t seed)
    : blocks_(blocks),
      regions_(regions),
      region_writes_(PhysicalBlocks(blocks, over_provisioning) / regions),
      invalid_shares_(InvalidShares(regions, over_provisioning)),
      rng_(seed),
      order_(blocks, rng_()),
      remaining_(region_writes_) {}

void SprandomOffsets::NewPass() {
  order_ = BlockPermutation(blocks_, rng_());
  new_blocks_ = 0;
  rewrites_.clear();
  next_rewrite_ = 0;
  kept_.clear();
  region_ = 0;
  remaining_ = region_writes_;
}

void SprandomOffsets::MaybeKeep(uint64_t block) {
  if (region_ >= regions_) return;  // past the last region nothing is rewritten later
  if (rng_() % (kShareScale + 1) <= invalid_shares_[region_] && kept_.size() < region_writes_) kept_.push_back(block);
}

std::optional<uint64_t> SprandomOffsets::Next() {
  // A region starts by rewriting what the one before kept: that invalidates it there.
  if (next_rewrite_ < rewrites_.size()) {
    const uint64_t block = rewrites_[next_rewrite_++];
    MaybeKeep(block);
    return block;
  }
  if (remaining_ == 0) {
    if (region_ >= regions_) return std::nullopt;
    ++region_;
    // The rewrites count against the new region's writes.
    remaining_ = region_writes_ - std::min<uint64_t>(region_writes_, kept_.size());
    rewrites_ = std::move(kept_);
    kept_.clear();
    next_rewrite_ = 0;
    if (next_rewrite_ < rewrites_.size()) {
      const uint64_t block = rewrites_[next_rewrite_++];
      MaybeKeep(block);
      return block;
    }
  }
  if (new_blocks_ >= blocks_) return std::nullopt;  // every logical block written
  ++new_blocks_;
  const uint64_t block = order_.Next();
  if (remaining_ > 0) --remaining_;
  MaybeKeep(block);
  return block;
}

}  // namespace iofleet
