// A random order over `count` items that visits each exactly once, in O(1) memory: fio's
// random map for random IO (worker/random_offsets.h) and mdtest's -R shuffled item order
// (worker/metadata_task.cc) both walk one.
#ifndef IOFLEET_WORKER_BLOCK_PERMUTATION_H_
#define IOFLEET_WORKER_BLOCK_PERMUTATION_H_

#include <cstdint>

namespace iofleet {

// Visits each of `count` blocks exactly once per pass in a pseudo-random order, with O(1)
// memory: a full-period linear congruential sequence over the next power of two, skipping
// values >= count (fio's random map gives the same "every block once" property).
class BlockPermutation {
 public:
  BlockPermutation(uint64_t count, uint64_t seed);
  uint64_t Next();

 private:
  uint64_t count_, mask_, multiplier_, increment_, state_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_BLOCK_PERMUTATION_H_
