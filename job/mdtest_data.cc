#include "job/mdtest_data.h"

#include <stdlib.h>

#include <cstring>

namespace iofleet {
namespace {

constexpr uint64_t kGoldenRatioPrime = 0x9e37fffffffc0001ULL;  // mdtest's RANDALGO_GOLDEN_RATIO_PRIME

using Packet = v1::MetadataPhase;

uint64_t Load(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // words in host order (little-endian), as mdtest stores them
  return v;
}
void Store(char* p, uint64_t v) { std::memcpy(p, &v, 8); }

}  // namespace

MdtestData::MdtestData(v1::MetadataPhase::DataPacket packet, int32_t seed, uint32_t rank, uint64_t bytes)
    : packet_(packet), seed_(seed), rank_(rank), buffer_(bytes) {
  const size_t words = buffer_.size() / 8;
  for (size_t i = 0; i < words; ++i) Store(buffer_.data() + 8 * i, BaseWord(i));
  for (size_t i = words * 8; i < buffer_.size(); ++i) buffer_[i] = static_cast<char>(i);
}

uint64_t MdtestData::BaseWord(uint64_t i) const {
  switch (packet_) {
    case Packet::PACKET_RANDOM: return 0;  // filled per item
    case Packet::PACKET_INCOMPRESSIBLE: {
      // (Seeded afresh for every word in mdtest, so every word is the same.)
      unsigned seed = static_cast<unsigned>(seed_) + rank_;
      const uint64_t hi = static_cast<uint64_t>(rand_r(&seed)) << 32;
      return hi | static_cast<uint64_t>(rand_r(&seed));
    }
    default:
      // Timestamp and offset packets: the rank above, seed + i below (an int plus a size_t:
      // a negative seed wraps, as in mdtest).
      return (uint64_t{rank_} << 32) | (static_cast<uint64_t>(static_cast<int64_t>(seed_)) + i);
  }
}

const std::vector<char>& MdtestData::ForItem(uint64_t item) {
  const size_t words = buffer_.size() / 8;
  if (packet_ == Packet::PACKET_TIMESTAMP || buffer_.size() < 8) return buffer_;
  if (packet_ == Packet::PACKET_RANDOM) {
    unsigned seed = static_cast<unsigned>(seed_) + rank_ + static_cast<unsigned>(item);
    uint64_t state = static_cast<uint64_t>(rand_r(&seed));
    for (size_t i = 0; i < words; ++i) {
      state *= kGoldenRatioPrime;
      state >>= 3;
      Store(buffer_.data() + 8 * i, state);
    }
    return buffer_;
  }
  // Offset and incompressible packets: every 512th word names the item.
  uint64_t k = 1;
  for (size_t i = 0; i < words; i += 512, ++k) {
    Store(buffer_.data() + 8 * i, static_cast<uint32_t>(item * k) | (uint64_t{rank_} << 32));
  }
  return buffer_;
}

bool MdtestData::Matches(uint64_t item, absl::Span<const char> data) const {
  const size_t words = data.size() / 8;
  unsigned seed = static_cast<unsigned>(seed_) + rank_ + static_cast<unsigned>(item);
  uint64_t state = static_cast<uint64_t>(rand_r(&seed));
  uint64_t k = 1;
  bool same = true;  // every word is looked at, as mdtest does (the read's cost stays the same)
  for (size_t i = 0; i < words; ++i) {
    uint64_t expected;
    if (packet_ == Packet::PACKET_RANDOM) {
      state *= kGoldenRatioPrime;
      state >>= 3;
      expected = state;
    } else {
      expected = BaseWord(i);
    }
    if (i % 512 == 0 && packet_ != Packet::PACKET_TIMESTAMP && packet_ != Packet::PACKET_RANDOM) {
      expected = static_cast<uint32_t>(item * k) | (uint64_t{rank_} << 32);
      ++k;
    }
    same &= Load(data.data() + 8 * i) == expected;
  }
  for (size_t i = words * 8; i < data.size(); ++i) same &= data[i] == static_cast<char>(i);
  return same;
}

}  // namespace iofleet
