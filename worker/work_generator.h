// Where each request of a job thread's pass goes: which of its files, which offset, how many
// bytes and which direction — fio's rw (and its ":N" modifier), rwmixread, file_service_type,
// random_distribution/norandommap, sprandom, offset/size/io_size, bs/bsrange/bssplit and zonemode (strided
// zones here; zbd zones through the file's EmulatedZones). It issues nothing itself; the IO loop
// asks it for the next request and says when a pass begins.
#ifndef IOFLEET_WORKER_WORK_GENERATOR_H_
#define IOFLEET_WORKER_WORK_GENERATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "job/rw_mode.h"
#include "proto/job.pb.h"
#include "worker/emulated_zones.h"
#include "worker/random_offsets.h"
#include "worker/sprandom.h"

namespace iofleet {

// One request's place: the thread's file (an index into its paths) and the byte range.
struct IoTarget {
  size_t file_index = 0;
  uint64_t offset = 0;  // from the start of the file (the job's offset= included)
  uint64_t length = 0;
  // zonemode=zbd: zones this request emptied; a trim is only that (fio resets the zone and
  // sends nothing to a file or a device that is not zoned).
  uint32_t zone_resets = 0;
};

class WorkGenerator {
 public:
  // `files`: how many files the thread works on (at least one); `seed` decides every draw.
  WorkGenerator(const v1::JobSpec& job, size_t files, uint64_t seed);

  bool reads() const { return reads_; }
  bool writes() const { return writes_; }
  bool trims() const { return trims_; }
  bool random() const { return random_; }
  // A mix of reads and writes (rw/randrw) with some of each (rwmixread strictly inside 0..100).
  bool mixes_both() const { return mixed_ && job_.rwmix_read() > 0 && job_.rwmix_read() < 100; }

  // The direction of the next request: the job's, or drawn by rwmixread for a mixed job.
  DataDirection DrawDirection() {
    if (trims_) return DataDirection::kTrim;
    if (mixed_) return rng_() % 100 < job_.rwmix_read() ? DataDirection::kRead : DataDirection::kWrite;
    return reads_ ? DataDirection::kRead : DataDirection::kWrite;
  }
  // The next request in that direction, counted against the pass; nullopt when zonemode=zbd
  // has no zone for it (fio ends the pass there).
  std::optional<IoTarget> Next(DataDirection direction);
  // zonemode=zbd: the zones of file `file_index` (set before the first pass).
  void UseZones(size_t file_index, EmulatedZones* zones) { files_[file_index].zones = zones; }
  // Starts a pass over the files: cursors back to the start, a fresh random map round. Returns
  // the zones it emptied (zbd with verify: a writing pass starts on empty zones, as in fio).
  uint32_t NewPass();
  // Whether the pass has issued its bytes (io_size, else size), as in fio (with rw=write:4k too),
  // or zbd found no zone for its next IO.
  bool PassDone() const { return no_zone_ || sprandom_done_ || pass_bytes_ >= pass_budget_; }
  // zbd ended the pass before it issued anything.
  bool ZonesExhausted() const { return no_zone_ && pass_bytes_ == 0; }

 private:
  // What the generator knows of one file during a pass.
  struct File {
    uint64_t cursor = 0;      // where sequential IO continues
    uint64_t pass_bytes = 0;  // issued to this file in the current pass
    uint64_t last_end = 0;    // where the previous IO to this file ended
    uint64_t run_length = 0;  // IOs in a row since the last random offset (rw=randread:N)
    uint64_t zone_start = 0;  // zonemode=strided: where the current zone begins
    std::unique_ptr<RandomOffsets> offsets;
    std::unique_ptr<SprandomOffsets> sprandom;  // fio's sprandom=1: its offsets instead
    EmulatedZones* zones = nullptr;  // zonemode=zbd
  };
  // Picks the file for the next IO (fio's file_service_type); one file needs no choice.
  File& NextFile() { return files_.size() == 1 ? files_[0] : NextOfSeveralFiles(); }
  File& NextOfSeveralFiles();
  // Where sequential IO goes after an IO that ended at `last_end` (fio's rw=...:N modifier).
  uint64_t NextSequentialPosition(uint64_t last_end) const;
  // zonemode=strided (fio's setup_strided_zone_mode): after zonesize bytes the IO moves on by
  // zonerange + zoneskip, wrapping at the end; within a zone, sequential IO stays in its range.
  void StepStridedZone(File& file);
  // The range offsets are drawn from: the file's region, or the current strided zone's range.
  EmulatedZones::Region ZoneRegion() const { return {region_start_, file_size_}; }
  uint64_t OffsetSpan() const { return strided_ ? std::min(job_.zones().range() ? job_.zones().range() : job_.zones().size(), file_size_) : file_size_; }

  // fio's random_distribution=zoned/zoned_abs, in units of the job's offset unit: a draw of
  // 0..99 below `below_percent` picks the zone [first, first + count).
  struct Zone {
    uint32_t below_percent;
    uint64_t first, count;
  };
  static std::vector<Zone> ZonesInUnits(const v1::RandomDistribution& distribution, bool reads, uint64_t units, uint64_t unit);
  uint64_t ZonedUnit(bool is_read);

  const v1::JobSpec& job_;
  std::mt19937_64 rng_;
  std::vector<File> files_;
  const bool reads_, writes_, trims_, random_, mixed_, strided_;
  const uint64_t unit_, min_block_, file_size_, region_start_, pass_budget_;
  std::vector<Zone> read_zones_, write_zones_;  // empty unless zoned
  size_t current_file_ = 0;
  uint64_t ios_on_current_file_ = 0;
  uint64_t pass_bytes_ = 0;
  uint64_t zone_bytes_ = 0;  // zonemode=strided: issued in the current zone
  bool no_zone_ = false;     // zonemode=zbd ended the pass
  bool sprandom_done_ = false;  // sprandom wrote all its regions
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WORK_GENERATOR_H_
