#include "worker/work_generator.h"

#include <algorithm>

#include "job/block_sizes.h"

namespace iofleet {
namespace {

bool Zbd(const v1::JobSpec& job) { return job.zones().mode() == v1::ZoneSpec::ZBD; }

// fio's zbd_verify_sizes: a job that writes or trims zones works on whole zones (its offset is
// rounded up and its end down to zone boundaries).
bool WholeZones(const v1::JobSpec& job) { return Zbd(job) && job.zones().size() > 0 && (WritesData(job.rw()) || TrimsData(job.rw())); }
uint64_t RegionStart(const v1::JobSpec& job) {
  if (!WholeZones(job)) return job.offset();
  const uint64_t zone = job.zones().size();
  return (job.offset() + zone - 1) / zone * zone;
}
uint64_t RegionBytes(const v1::JobSpec& job) {
  if (!WholeZones(job)) return FileSize(job);
  const uint64_t zone = job.zones().size(), start = RegionStart(job);
  const uint64_t end = (job.offset() + FileSize(job)) / zone * zone;
  return end > start ? end - start : 0;
}

// fio's sprandom: the pass writes the physical size (logical blocks plus over-provisioning).
uint64_t SprandomBudget(const v1::JobSpec& job, size_t files) {
  const uint64_t unit = std::max<uint64_t>(1, OffsetUnit(job));
  return SprandomOffsets::PhysicalBlocks(RegionBytes(job) / unit, job.spr_over_provisioning()) * unit * files;
}

}  // namespace

WorkGenerator::WorkGenerator(const v1::JobSpec& job, size_t files, uint64_t seed)
    : job_(job),
      rng_(seed),
      files_(files),
      reads_(ReadsData(job.rw())),
      writes_(WritesData(job.rw())),
      trims_(TrimsData(job.rw())),
      random_(RandomAccess(job.rw())),
      mixed_(MixesReadsAndWrites(job.rw())),
      strided_(job.zones().mode() == v1::ZoneSpec::STRIDED && job.zones().size() > 0),
      unit_(OffsetUnit(job)),
      min_block_(MinBlockSize(job)),
      file_size_(RegionBytes(job)),
      region_start_(RegionStart(job)),
      pass_budget_(job.sprandom() ? SprandomBudget(job, files) : job.io_size() ? job.io_size() : job.size()) {
  for (File& f : files_) f.offsets = std::make_unique<RandomOffsets>(job_.random_distribution(), std::max<uint64_t>(1, OffsetSpan() / unit_), !job_.norandommap() || job_.random_generator_lfsr(), rng_(),
                                                                  job_.random_sequence_stride());
  if (job_.sprandom()) {
    for (File& f : files_) f.sprandom = std::make_unique<SprandomOffsets>(file_size_ / unit_, job_.spr_over_provisioning(), job_.spr_num_regions(), rng_());
  }
  read_zones_ = ZonesInUnits(job.random_distribution(), true, file_size_ / unit_, unit_);
  write_zones_ = ZonesInUnits(job.random_distribution(), false, file_size_ / unit_, unit_);
}

std::vector<WorkGenerator::Zone> WorkGenerator::ZonesInUnits(const v1::RandomDistribution& distribution, bool reads, uint64_t units,
                                                             uint64_t unit) {
  const bool absolute = distribution.kind() == v1::RandomDistribution::ZONED_ABS;
  if (!absolute && distribution.kind() != v1::RandomDistribution::ZONED) return {};
  std::vector<Zone> zones;
  uint32_t below = 0;
  uint64_t first = 0;
  const auto& spec = reads ? distribution.read_zones() : distribution.write_zones();
  for (int i = 0; i < spec.size(); ++i) {
    const bool last = i + 1 == spec.size();
    // zoned: a share of the range (the last zone ends at the range's end, rounding included);
    // zoned_abs: bytes, cut at the range's end, the last zone without a size taking the rest.
    uint64_t count = absolute ? (spec[i].size_bytes() ? spec[i].size_bytes() / unit : units) : units * spec[i].size_percent() / 100;
    if (last && !absolute) count = units - std::min(first, units);
    count = std::min(count, units - std::min(first, units));
    below += spec[i].access_percent();
    if (spec[i].access_percent() > 0 && count > 0) zones.push_back({below, first, count});
    first += count;
  }
  // Zones that fell beyond a short range: their IOs go to the zones that exist, as fio's draw
  // falls through to the next zone.
  if (!zones.empty()) zones.back().below_percent = 100;
  return zones;
}

uint64_t WorkGenerator::ZonedUnit(bool is_read) {
  const std::vector<Zone>& zones = is_read ? read_zones_ : write_zones_;
  const uint32_t draw = static_cast<uint32_t>(rng_() % 100);
  for (const Zone& zone : zones) {
    if (draw < zone.below_percent) return zone.first + rng_() % zone.count;
  }
  return 0;  // no zone inside the range (validated against; a range of no whole unit)
}

uint32_t WorkGenerator::NewPass() {
  uint32_t zone_resets = 0;
  sprandom_done_ = false;
  for (File& f : files_) {
    f.offsets->NewPass();
    if (f.sprandom) f.sprandom->NewPass();
    f.cursor = 0;
    f.pass_bytes = 0;
    f.last_end = 0;
    f.run_length = 0;
    f.zone_start = 0;
    if (f.zones && writes_) zone_resets += f.zones->StartPass(ZoneRegion(), job_.verify() != v1::JobSpec::VERIFY_NONE);
  }
  current_file_ = 0;
  ios_on_current_file_ = 0;
  pass_bytes_ = 0;
  zone_bytes_ = 0;
  no_zone_ = file_size_ == 0;  // zbd: a region of no whole zone has nothing to do
  return zone_resets;
}

void WorkGenerator::StepStridedZone(File& file) {
  const v1::ZoneSpec& zones = job_.zones();
  const uint64_t range = OffsetSpan();
  if (zone_bytes_ >= zones.size()) {
    zone_bytes_ = 0;
    file.zone_start += range + std::min(zones.skip(), file_size_);  // a skip past the end wraps all the same
    if (file.zone_start >= file_size_) file.zone_start = 0;  // past the end: from the start again
    file.cursor = file.zone_start;
  }
  // A zonesize beyond zonerange: the same range again until zonesize bytes were done.
  if (file.cursor >= file.zone_start + range) file.cursor = file.zone_start;
  if (zone_bytes_ % range == 0) file.offsets->NewPass();  // each range's random map anew, as fio
}

WorkGenerator::File& WorkGenerator::NextOfSeveralFiles() {
  const uint32_t every = job_.file_service_switch();  // 0 (unset) switches every IO, as 1
  switch (job_.file_service()) {
    case v1::JobSpec::SEQUENTIAL:
      // Stay on a file until its share of the pass is issued.
      while (files_[current_file_].pass_bytes >= file_size_ && current_file_ + 1 < files_.size()) ++current_file_;
      break;
    case v1::JobSpec::RANDOM_FILE:
      if (ios_on_current_file_ >= every) {
        current_file_ = rng_() % files_.size();
        ios_on_current_file_ = 0;
      }
      break;
    case v1::JobSpec::ROUNDROBIN:
    default:
      if (ios_on_current_file_ >= every) {
        current_file_ = (current_file_ + 1) % files_.size();
        ios_on_current_file_ = 0;
      }
      break;
  }
  ++ios_on_current_file_;
  return files_[current_file_];
}

// fio's rw=write:4k: a hole of that many bytes after each IO, and past the end the pass goes on
// from the start (fio keeps going until the pass's bytes are done: size=2m bs=4k issues 512
// writes, every other block twice). rw=read:-8k: that many bytes back from the end of each IO;
// below the start it goes on from the end (fio's get_next_seq_offset).
uint64_t WorkGenerator::NextSequentialPosition(uint64_t last_end) const {
  const uint64_t step = job_.rw_modifier();
  if (!job_.rw_modifier_backwards()) return last_end + step;  // >= file_size_ wraps in Next()
  if (last_end >= step) return last_end - step;
  return file_size_ >= step ? file_size_ - step : 0;
}

std::optional<IoTarget> WorkGenerator::Next(DataDirection direction) {
  const uint64_t size = PickBlockSize(job_, direction, rng_());
  File& file = NextFile();
  IoTarget target;
  target.file_index = static_cast<size_t>(&file - files_.data());
  if (strided_) StepStridedZone(file);
  uint64_t position;  // within the file's region
  if (random_) {
    // rw=randread:N: N IOs in a row, then a new random offset.
    if (job_.rw_modifier() > 1 && file.run_length % job_.rw_modifier() != 0 && file.last_end < file_size_) {
      position = file.last_end;
    } else {
      const bool is_read = direction == DataDirection::kRead;
      if (file.sprandom) {
        const std::optional<uint64_t> block = file.sprandom->Next();
        if (!block) {
          sprandom_done_ = true;
          return std::nullopt;
        }
        position = *block * unit_;
      } else {
        position = file.zone_start + (read_zones_.empty() ? file.offsets->Next(rng_) : ZonedUnit(is_read)) * unit_;
      }
      file.run_length = 0;
    }
    ++file.run_length;
  } else {
    if (file.cursor >= file_size_) file.cursor = 0;  // io_size beyond size wraps around
    position = file.cursor;
  }
  // Never past the end of the region, nor past the pass's bytes (fio trims the last IO).
  target.length = std::min({size, file_size_ - position, pass_budget_ - pass_bytes_});
  if (file.zones) {
    // zonemode=zbd: the zones decide where it really goes (a write pointer, data to read).
    const std::optional<EmulatedZones::Placed> placed =
        file.zones->Place(direction, region_start_ + position, target.length, min_block_, random_, ZoneRegion());
    if (!placed) {
      no_zone_ = true;
      return std::nullopt;
    }
    position = placed->offset - region_start_;
    target.length = placed->length;
    target.zone_resets = placed->zone_resets;
  }
  file.last_end = position + target.length;
  if (!random_) file.cursor = NextSequentialPosition(file.last_end);
  target.offset = region_start_ + position;
  file.pass_bytes += target.length;
  pass_bytes_ += target.length;
  zone_bytes_ += target.length;
  return target;
}

}  // namespace iofleet
