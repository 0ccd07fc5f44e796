// splitmix64's finaliser: a bijective, well-spread 64-bit hash. Seeds derived from one another
// with it stay independent (random offsets, write-buffer contents).
#ifndef IOFLEET_COMMON_MIX_H_
#define IOFLEET_COMMON_MIX_H_

#include <cstdint>

namespace iofleet {

inline uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace iofleet

#endif  // IOFLEET_COMMON_MIX_H_
