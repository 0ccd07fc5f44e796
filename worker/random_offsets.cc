#include "worker/random_offsets.h"

#include <algorithm>
#include <cmath>

#include "common/mix.h"

namespace iofleet {

namespace {

// fio caps the zipf normalisation sum at 10M terms; beyond that the tail barely matters.
constexpr uint64_t kZipfMaxTerms = 10'000'000;

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

RandomOffsets::RandomOffsets(const v1::RandomDistribution& distribution, uint64_t units, bool use_map, uint64_t seed, bool sequence_stride)
    : kind_(distribution.kind()), parameter_(distribution.parameter()), units_(std::max<uint64_t>(units, 1)),
      use_map_(use_map && distribution.kind() == v1::RandomDistribution::UNIFORM),
      sequence_(distribution.sequence().begin(), distribution.sequence().end()), sequence_stride_(sequence_stride),
      seed_(seed), spread_offset_(Mix(seed)) {
  if (kind_ == v1::RandomDistribution::ZIPF) {
    zeta2_ = 1.0 + std::pow(0.5, parameter_);
    const uint64_t terms = std::min(units_, kZipfMaxTerms);
    for (uint64_t i = 1; i <= terms; ++i) zetan_ += std::pow(1.0 / static_cast<double>(i), parameter_);
  } else if (kind_ == v1::RandomDistribution::PARETO) {
    pareto_power_ = std::log(parameter_) / std::log(1.0 - parameter_);
  }
}

uint64_t RandomOffsets::Spread(uint64_t value) const { return (Mix(value) + spread_offset_) % units_; }

uint64_t RandomOffsets::Next(std::mt19937_64& rng) {
  switch (kind_) {
    case v1::RandomDistribution::ZIPF: {
      const double n = static_cast<double>(units_);
      const double alpha = 1.0 / (1.0 - parameter_);
      const double eta = (1.0 - std::pow(2.0 / n, 1.0 - parameter_)) / (1.0 - zeta2_ / zetan_);
      const double u = Uniform(rng);
      const double uz = u * zetan_;
      uint64_t rank;
      if (uz < 1.0) rank = 1;
      else if (uz < zeta2_) rank = 2;
      else rank = 1 + static_cast<uint64_t>(n * std::pow(eta * u - eta + 1.0, alpha));
      return Spread(std::min(rank, units_) - 1);
    }
    case v1::RandomDistribution::PARETO: {
      const uint64_t rank = static_cast<uint64_t>(static_cast<double>(units_ - 1) * std::pow(Uniform(rng), pareto_power_));
      return Spread(std::min(rank, units_ - 1));
    }
    case v1::RandomDistribution::NORMAL: {
      std::normal_distribution<double> normal(static_cast<double>(units_) / 2, static_cast<double>(units_) * parameter_ / 100.0);
      const double x = std::clamp(normal(rng), 0.0, static_cast<double>(units_ - 1));
      return Spread(static_cast<uint64_t>(x));
    }
    case v1::RandomDistribution::SEQUENCE: {
      if (sequence_.empty()) return 0;  // validated against
      // fio's sequence:2,0,1 — 2,0,1,2,0,1...; with random_sequence_stride 2,0,1,5,3,4...
      const uint64_t cycle = sequence_position_ / sequence_.size();
      const uint64_t block = sequence_[sequence_position_ % sequence_.size()] + (sequence_stride_ ? cycle * sequence_.size() : 0);
      ++sequence_position_;
      return block % units_;
    }
    case v1::RandomDistribution::UNIFORM:
    default:
      if (!use_map_) return rng() % units_;
      if (!map_ || map_used_ >= units_) {  // a new round of the map (next pass, or io_size > size)
        map_ = std::make_unique<BlockPermutation>(units_, rng());
        map_used_ = 0;
      }
      ++map_used_;
      return map_->Next();
  }
}

}  // namespace iofleet
