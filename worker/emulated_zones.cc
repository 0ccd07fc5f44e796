#include "worker/emulated_zones.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace iofleet {

EmulatedZones::EmulatedZones(const v1::ZoneSpec& spec, uint64_t file_bytes)
    : zone_size_(spec.size()),
      capacity_(spec.capacity() ? spec.capacity() : spec.size()),
      max_open_zones_(spec.max_open_zones()),
      read_beyond_wp_(spec.read_beyond_wp()),
      reset_threshold_(spec.reset_threshold()),
      reset_frequency_(spec.reset_frequency()) {
  Cover(file_bytes);
}

void EmulatedZones::Cover(uint64_t file_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t count = std::max<uint64_t>(1, (file_bytes + zone_size_ - 1) / zone_size_);
  while (zones_.size() < count) {
    const uint64_t start = zones_.size() * zone_size_;
    zones_.push_back(Zone{.start = start, .wp = start});
  }
}

uint64_t EmulatedZones::written(size_t zone) const {
  std::lock_guard<std::mutex> lock(mu_);
  return zones_.at(zone).wp - zones_.at(zone).start;
}

size_t EmulatedZones::open_zones() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_.size();
}

// fio's zbd_open_zone: an open zone with room, or a zone opened now if the limit allows.
bool EmulatedZones::TryOpen(size_t zone, uint64_t min_bs) {
  Zone& z = zones_[zone];
  if (max_open_zones_ == 0) return true;  // no limit: open zones are not tracked
  if (z.open) return z.wp + min_bs <= CapacityEnd(z);
  if (open_.size() >= max_open_zones_) return false;
  open_.push_back(zone);
  z.open = true;
  return true;
}

void EmulatedZones::Close(size_t zone) {
  if (!zones_[zone].open) return;
  zones_[zone].open = false;
  open_.erase(std::find(open_.begin(), open_.end(), zone));
}

uint32_t EmulatedZones::Reset(size_t zone) {
  Zone& z = zones_[zone];
  if (z.wp == z.start) return 0;  // empty already: fio resets nothing and counts nothing
  data_bytes_ -= z.wp - z.start;
  z.wp = z.start;
  return 1;
}

// fio's zbd_convert_to_open_zone: a write aimed at a zone it may not write goes to one of the
// open zones (picked by where the write was aimed, as fio does), or a zone opened after it.
std::optional<size_t> EmulatedZones::OpenZoneFor(uint64_t offset, uint64_t min_bs, const Region& region) {
  const size_t first = FirstZone(region), end = EndZone(region);
  auto in_region = [&](size_t zone) { return zone >= first && zone < end; };
  auto has_room = [&](size_t zone) { return zones_[zone].wp + min_bs <= CapacityEnd(zones_[zone]); };
  size_t zone = IndexOf(offset);
  if (!open_.empty()) {
    const size_t pick = static_cast<size_t>((offset - region.start) * open_.size() / std::max<uint64_t>(1, region.bytes));
    for (size_t i = 0; i < open_.size(); ++i) {
      const size_t candidate = open_[(std::min(pick, open_.size() - 1) + i) % open_.size()];
      if (!in_region(candidate)) continue;
      zone = candidate;
      if (has_room(zone)) return zone;
      break;
    }
  }
  // Open another zone after it, wrapping inside the region.
  for (size_t i = first; i < end; ++i) {
    zone = zone + 1 >= end ? first : zone + 1;
    if (zones_[zone].open) continue;
    if (TryOpen(zone, min_bs)) return zone;
  }
  for (size_t open : open_) {
    if (in_region(open) && has_room(open)) return open;
  }
  return std::nullopt;
}

std::optional<size_t> EmulatedZones::ZoneWithData(size_t from, uint64_t min_bytes, bool both_ways, const Region& region) const {
  const size_t first = FirstZone(region), end = EndZone(region);
  auto holds = [&](size_t zone) { return zones_[zone].start + min_bytes <= zones_[zone].wp; };
  // fio's zbd_find_zone: the next zone with data; for random IO the nearest either way.
  for (size_t step = 1;; ++step) {
    const bool ahead = from + step < end, behind = both_ways && from >= first + step;
    if (!ahead && !behind) return std::nullopt;
    if (ahead && holds(from + step)) return from + step;
    if (behind && holds(from - step)) return from - step;
  }
}

std::optional<EmulatedZones::Placed> EmulatedZones::PlaceWrite(uint64_t offset, uint64_t length, uint64_t min_bs, const Region& region) {
  Placed placed;
  size_t zone = IndexOf(offset);
  if (!TryOpen(zone, min_bs)) {
    std::optional<size_t> other = OpenZoneFor(offset, min_bs, region);
    if (!other) return std::nullopt;
    zone = *other;
  }
  Zone& z = zones_[zone];
  // zone_reset_threshold/frequency: while the region holds that share of data, every 1/f-th
  // write resets the zone it goes to (fio's emulation of an application's garbage collection).
  if (reset_frequency_ > 0 && static_cast<double>(data_bytes_) >= static_cast<double>(region.bytes) * reset_threshold_) {
    if (writes_to_reset_ > 0) --writes_to_reset_;
    if (writes_to_reset_ == 0) {
      writes_to_reset_ = WritesPerReset();
      placed.zone_resets += Reset(zone);
    }
  }
  if (z.wp + min_bs > CapacityEnd(z)) placed.zone_resets += Reset(zone);  // full: rewritten from its start
  placed.offset = z.wp;
  placed.length = std::min(length, CapacityEnd(z) - z.wp) / min_bs * min_bs;
  if (placed.length < min_bs || placed.offset < region.start || placed.offset >= region.start + region.bytes) return std::nullopt;
  z.wp += placed.length;
  data_bytes_ += placed.length;
  if (z.wp + min_bs > CapacityEnd(z)) Close(zone);  // full: another zone may open
  return placed;
}

std::optional<EmulatedZones::Placed> EmulatedZones::PlaceRead(uint64_t offset, uint64_t length, uint64_t min_bs, bool random, const Region& region) {
  const size_t aimed = IndexOf(offset);
  size_t zone = aimed;
  uint64_t data = zones_[zone].wp - zones_[zone].start;
  if (data < min_bs || (!random && offset + min_bs > zones_[zone].wp)) {
    std::optional<size_t> other = ZoneWithData(zone, min_bs, random, region);
    if (!other) return std::nullopt;
    zone = *other;
    data = zones_[zone].wp - zones_[zone].start;
    if (!random) offset = zones_[zone].start;
  }
  const Zone& z = zones_[zone];
  Placed placed{.offset = offset};
  // Inside the zone's data, as large as it can be, still random for random IO (fio's formula).
  if (data <= length) {
    placed.offset = z.start;
  } else if (random) {
    placed.offset = z.start + ((offset - zones_[aimed].start) % (data - length)) / min_bs * min_bs;
  }
  placed.length = std::min(length, z.wp - placed.offset) / min_bs * min_bs;
  if (placed.length == 0) return std::nullopt;
  return placed;
}

std::optional<EmulatedZones::Placed> EmulatedZones::PlaceTrim(uint64_t offset, uint64_t length, bool random, const Region& region) {
  size_t zone = IndexOf(offset);
  // A random trim goes to a zone that holds data (fio's zbd_adjust_block for DDIR_TRIM).
  if (random && zones_[zone].wp == zones_[zone].start) {
    std::optional<size_t> other = ZoneWithData(zone, 1, true, region);
    if (!other) return std::nullopt;
    zone = *other;
  }
  Close(zone);
  return Placed{.offset = zones_[zone].start, .length = length, .zone_resets = Reset(zone)};
}

std::optional<EmulatedZones::Placed> EmulatedZones::Place(DataDirection direction, uint64_t offset, uint64_t length, uint64_t min_bs,
                                                           bool random, const Region& region) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (direction) {
    case DataDirection::kWrite: return PlaceWrite(offset, length, min_bs, region);
    case DataDirection::kRead:
      if (read_beyond_wp_) return Placed{.offset = offset, .length = length};
      return PlaceRead(offset, length, min_bs, random, region);
    case DataDirection::kTrim: return PlaceTrim(offset, length, random, region);
  }
  return std::nullopt;
}

uint32_t EmulatedZones::StartPass(const Region& region, bool verify) {
  std::lock_guard<std::mutex> lock(mu_);
  writes_to_reset_ = WritesPerReset();
  uint32_t resets = 0;
  if (!verify) return resets;
  for (size_t zone = FirstZone(region); zone < EndZone(region); ++zone) {
    Close(zone);
    resets += Reset(zone);
  }
  return resets;
}

absl::StatusOr<EmulatedZones*> ZoneRegistry::Get(const std::string& path, const v1::ZoneSpec& spec, uint64_t file_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = tables_[path];
  if (!entry.zones) {
    entry.spec = spec;
    entry.zones = std::make_unique<EmulatedZones>(spec, file_bytes);
    return entry.zones.get();
  }
  const v1::ZoneSpec& was = entry.spec;
  // A job without max_open_zones takes the file's (fio: the device's limit).
  if (was.size() != spec.size() || was.capacity() != spec.capacity() ||
      (spec.max_open_zones() > 0 && was.max_open_zones() != spec.max_open_zones())) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": jobs that share this file give it different zones (zonesize, zonecapacity or "
                                                   "max_open_zones differ); fio refuses that too"));
  }
  entry.zones->Cover(file_bytes);
  return entry.zones.get();
}

}  // namespace iofleet
