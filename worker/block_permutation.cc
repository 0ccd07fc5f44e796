#include "worker/block_permutation.h"

#include <random>

namespace iofleet {

BlockPermutation::BlockPermutation(uint64_t count, uint64_t seed) : count_(count) {
  uint64_t size = 1;
  while (size < count) size <<= 1;
  mask_ = size - 1;
  std::mt19937_64 rng(seed);
  // Hull-Dobell: modulus 2^k, increment odd, multiplier = 1 (mod 4) => full period.
  multiplier_ = (rng() & ~uint64_t{3}) | 1;
  increment_ = rng() | 1;
  state_ = rng() & mask_;
}

uint64_t BlockPermutation::Next() {
  do {
    state_ = (state_ * multiplier_ + increment_) & mask_;
  } while (state_ >= count_);
  return state_;
}

}  // namespace iofleet
