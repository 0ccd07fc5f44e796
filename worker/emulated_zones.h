// fio's zonemode=zbd as fio runs it on a regular file or a block device that is not zoned: the
// file is cut into zones of zonesize (zonecapacity of each writable), every zone with a write
// pointer, all empty at the start. Writes go to a zone's write pointer (a full zone is reset —
// emptied — first), at most max_open_zones zones are written at once, reads stay below the write
// pointers (unless read_beyond_wp), trims reset whole zones, and zone_reset_threshold/frequency
// reset zones while the range holds that much data (fio's zbd.c, zbd_adjust_block and the zone
// choices it makes). Nothing here touches the file: the zones are bookkeeping that moves where
// each IO goes.
//
// One table per file per worker run: the job threads of a phase that name the same file share
// its zones, as fio's jobs share a file's zone info.
#ifndef IOFLEET_WORKER_EMULATED_ZONES_H_
#define IOFLEET_WORKER_EMULATED_ZONES_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "job/rw_mode.h"
#include "proto/job.pb.h"

namespace iofleet {

class EmulatedZones {
 public:
  // `file_bytes`: how much of the file the zones cover (at least one zone; the last may be short).
  EmulatedZones(const v1::ZoneSpec& spec, uint64_t file_bytes);
  // Adds zones until they cover `file_bytes` (another job of the run uses more of the file).
  void Cover(uint64_t file_bytes);

  // A thread's part of the file, in bytes from its start: [start, start + bytes).
  struct Region {
    uint64_t start = 0, bytes = 0;
  };
  // Where an IO goes after the zones had their say.
  struct Placed {
    uint64_t offset = 0, length = 0;
    uint32_t zone_resets = 0;  // zones this IO emptied (a full zone rewritten, a trim, the threshold)
  };
  // Moves an IO the generator drew (offset and length in bytes from the file's start) to where
  // fio's zbd mode sends it; nullopt when no zone can take it (fio's io_u_eof: the pass ends).
  // `min_bs`: the direction's smallest block (lengths stay multiples of it).
  std::optional<Placed> Place(DataDirection direction, uint64_t offset, uint64_t length, uint64_t min_bs, bool random,
                              const Region& region);
  // A writing thread starts a pass (fio's zbd_file_reset): the reset countdown starts over,
  // and with `verify` the region's zones are emptied first, so no reset mid-pass loses data.
  uint32_t StartPass(const Region& region, bool verify);

  uint64_t zone_bytes() const { return zone_size_; }
  size_t zones() const { return zones_.size(); }
  // Test hooks: a zone's write pointer (bytes written into it) and how many zones are open.
  uint64_t written(size_t zone) const;
  size_t open_zones() const;

 private:
  struct Zone {
    uint64_t start = 0, wp = 0;
    bool open = false;
  };
  uint64_t CapacityEnd(const Zone& z) const { return z.start + capacity_; }
  size_t IndexOf(uint64_t offset) const { return std::min<size_t>(offset / zone_size_, zones_.size() - 1); }
  size_t FirstZone(const Region& r) const { return IndexOf(r.start); }
  size_t EndZone(const Region& r) const { return std::min<size_t>((r.start + r.bytes + zone_size_ - 1) / zone_size_, zones_.size()); }
  // The caller holds mu_ for all of these.
  bool TryOpen(size_t zone, uint64_t min_bs);
  void Close(size_t zone);
  uint32_t Reset(size_t zone);
  std::optional<size_t> OpenZoneFor(uint64_t offset, uint64_t min_bs, const Region& region);
  std::optional<size_t> ZoneWithData(size_t from, uint64_t min_bytes, bool both_ways, const Region& region) const;
  std::optional<Placed> PlaceWrite(uint64_t offset, uint64_t length, uint64_t min_bs, const Region& region);
  std::optional<Placed> PlaceRead(uint64_t offset, uint64_t length, uint64_t min_bs, bool random, const Region& region);
  // 1 / zone_reset_frequency, at most 2^32 - 1 as in fio (0 without a frequency).
  uint64_t WritesPerReset() const { return reset_frequency_ > 0 ? static_cast<uint64_t>(std::min(1.0 / reset_frequency_, 4294967295.0)) : 0; }
  std::optional<Placed> PlaceTrim(uint64_t offset, uint64_t length, bool random, const Region& region);

  const uint64_t zone_size_, capacity_;
  const uint32_t max_open_zones_;
  const bool read_beyond_wp_;
  const double reset_threshold_, reset_frequency_;
  mutable std::mutex mu_;
  std::vector<Zone> zones_;
  std::vector<size_t> open_;  // zones being written, when max_open_zones limits them
  uint64_t data_bytes_ = 0;   // bytes below the write pointers, all zones
  uint64_t writes_to_reset_ = 0;
};

// The zone tables of one worker run, by file path: created by the first thread that asks,
// shared by the rest (threads ask while they set up, before IO starts).
class ZoneRegistry {
 public:
  // The table of `path`, covering at least `file_bytes`. Jobs naming one file must agree on its
  // zones (fio: "Different 'max_open_zones' values"; a job that sets none takes the file's).
  absl::StatusOr<EmulatedZones*> Get(const std::string& path, const v1::ZoneSpec& spec, uint64_t file_bytes);

 private:
  std::mutex mu_;
  struct Entry {
    v1::ZoneSpec spec;
    std::unique_ptr<EmulatedZones> zones;
  };
  std::map<std::string, Entry> tables_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_EMULATED_ZONES_H_
