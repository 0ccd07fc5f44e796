// Where random IO goes: fio's random map (every unit once per round), uniform draws with
// repeats (norandommap), or the skewed distributions of fio's random_distribution — zipf,
// pareto and normal — whose hot units are spread over the file by a hash, as fio does.
#ifndef IOFLEET_WORKER_RANDOM_OFFSETS_H_
#define IOFLEET_WORKER_RANDOM_OFFSETS_H_

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "proto/job.pb.h"
#include "worker/block_permutation.h"

namespace iofleet {

class RandomOffsets {
 public:
  // `units` offsets of the job's unit size; `use_map` gives fio's random map for uniform draws.
  // `sequence_stride`: fio's random_sequence_stride (SEQUENCE only).
  RandomOffsets(const v1::RandomDistribution& distribution, uint64_t units, bool use_map, uint64_t seed, bool sequence_stride = false);
  // The next unit index in [0, units).
  uint64_t Next(std::mt19937_64& rng);
  // A new pass over the file: the random map starts a fresh round, a sequence from its start.
  void NewPass() {
    map_used_ = units_;
    sequence_position_ = 0;
  }

 private:
  uint64_t Spread(uint64_t value) const;  // hash a rank onto the file

  const v1::RandomDistribution::Kind kind_;
  const double parameter_;
  const uint64_t units_;
  const bool use_map_;
  std::unique_ptr<BlockPermutation> map_;
  std::vector<uint64_t> sequence_;
  const bool sequence_stride_;
  uint64_t sequence_position_ = 0;  // IOs drawn from the sequence this pass
  uint64_t map_used_ = 0;
  uint64_t seed_, spread_offset_;
  // zipf constants (fio lib/zipf.c).
  double zeta2_ = 0, zetan_ = 0, pareto_power_ = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_RANDOM_OFFSETS_H_
