// What mdtest writes into its files and checks when it reads them back (-w, -X,
// --verify-write, --dataPacketType): its data packets, byte for byte, so compressing and
// deduplicating file systems store the same for iofleet as for mdtest, and a file either tool
// wrote verifies with the other. A pattern belongs to one task (its rank is in every word).
#ifndef IOFLEET_JOB_MDTEST_DATA_H_
#define IOFLEET_JOB_MDTEST_DATA_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "proto/job.pb.h"

namespace iofleet {

class MdtestData {
 public:
  // `bytes` per file, task `rank`'s data; `seed` is mdtest's buffer offset (-G).
  MdtestData(v1::MetadataPhase::DataPacket packet, int32_t seed, uint32_t rank, uint64_t bytes);

  // The bytes of item number `item` (the number in its name): mdtest's write buffer after
  // update_write_memory_pattern. Valid until the next call.
  const std::vector<char>& ForItem(uint64_t item);
  // Whether `data` (the first data.size() bytes read back from item `item`) is what mdtest's
  // verify_memory_pattern expects of this task's item.
  bool Matches(uint64_t item, absl::Span<const char> data) const;

 private:
  // Word i of the pattern before any item's update (generate_memory_pattern).
  uint64_t BaseWord(uint64_t i) const;

  const v1::MetadataPhase::DataPacket packet_;
  const int32_t seed_;
  const uint32_t rank_;
  std::vector<char> buffer_;
};

}  // namespace iofleet

#endif  // IOFLEET_JOB_MDTEST_DATA_H_
