// fio's sprandom (SanDisk pseudo-random preconditioning, fio 3.41): random writes that leave a
// flash drive the way a long random workload would, in about one drive write instead of many.
//
// The model (Desnoyers, "Analytic Models of SSD Write Performance", 2012): in steady state a
// drive with over-provisioning OP has write amplification WA ~ 0.5/OP + 0.7, the block garbage
// collection picks holds 1 - 1/WA valid data, and across the drive validity times the space at
// that validity is constant. The physical space (logical size + OP) is cut into regions, each
// given the share of invalid data the model expects. Writes walk a random order over every
// logical block once (fio's LFSR; iofleet's BlockPermutation); while a region is written, each
// write is kept for rewriting with that region's invalid share, and the next region starts by
// rewriting what was kept, which invalidates it in the region before.
#ifndef IOFLEET_WORKER_SPRANDOM_H_
#define IOFLEET_WORKER_SPRANDOM_H_

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "worker/block_permutation.h"

namespace iofleet {

class SprandomOffsets {
 public:
  // Writes kept for rewriting at once, at most (about 8 bytes each).
  static constexpr uint64_t kMaxKeptWrites = uint64_t{1} << 24;

  // The blocks the preconditioning writes for `blocks` logical ones: fio's physical size,
  // blocks + ceil(blocks * over_provisioning).
  static uint64_t PhysicalBlocks(uint64_t blocks, double over_provisioning);
  // Why `blocks` in `regions` cannot be done (a region of no block; too many blocks kept per
  // region), or OK.
  static absl::Status Check(uint64_t blocks, double over_provisioning, uint32_t regions);
  // The share of invalid data (per 10,000) of each region, the emptiest first: the model above.
  static std::vector<uint32_t> InvalidShares(uint32_t regions, double over_provisioning);

  SprandomOffsets(uint64_t blocks, double over_provisioning, uint32_t regions, uint64_t seed);

  // The next block to write; nullopt when the regions are done (or every block was written).
  std::optional<uint64_t> Next();
  // Starts again: a new random order, the first region.
  void NewPass();

 private:
  // Keeps `block` for rewriting in the next region with the current region's invalid share.
  void MaybeKeep(uint64_t block);

  const uint64_t blocks_;
  const uint32_t regions_;
  const uint64_t region_writes_;  // blocks written per region
  const std::vector<uint32_t> invalid_shares_;
  std::mt19937_64 rng_;
  BlockPermutation order_;
  uint64_t new_blocks_ = 0;  // taken from order_ this pass
  std::vector<uint64_t> rewrites_;  // kept in the region before: this region starts with them
  size_t next_rewrite_ = 0;
  std::vector<uint64_t> kept_;  // kept in this region, for the next
  uint32_t region_ = 0;
  uint64_t remaining_;  // new blocks still to write in this region
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_SPRANDOM_H_
