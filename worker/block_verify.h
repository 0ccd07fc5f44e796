// fio-style data verification: every verified block starts with a header (magic, offset,
// length, generation, and who wrote it: job, worker, thread, seed, write number) and a
// checksum (crc32c or md5) over the rest of the block, so a read can tell whether it got the
// right block, a misplaced one, a stale one, a torn one or a corrupted one — and say which.
#ifndef IOFLEET_WORKER_BLOCK_VERIFY_H_
#define IOFLEET_WORKER_BLOCK_VERIFY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace iofleet {

// The smallest block that can carry a header.
inline constexpr uint64_t kVerifyHeaderSize = 80;

// Who wrote a block, and which write it was. Stored in the header so a failed check can name
// the writer; `write_number` is also stamped into every 512-byte sector's second word (see
// StampSectors), which is how a torn block (sectors from two different writes) is told apart
// from corrupted bytes.
struct BlockWriter {
  uint32_t job = 0;      // index of the job in the run
  uint32_t worker = 0;   // worker index
  uint32_t thread = 0;   // thread within the job on that worker
  uint64_t seed = 0;     // the thread's random seed
  uint64_t generation = 0;    // which write pass (verify read-back expects the current one)
  uint64_t write_number = 0;  // unique per write of this thread
};

uint32_t Crc32c(const void* data, size_t length, uint32_t crc = 0);

// Writes (offset of the sector, the writer's write_number mixed with its seed) into the first 16 bytes of every 512-byte
// sector after the header, so each sector says which write it belongs to.
void StampSectors(char* block, uint64_t length, uint64_t offset, const BlockWriter& writer);

// Writes the header and checksum into a block whose data is already in place.
void SealBlock(v1::JobSpec::Verify kind, char* block, uint64_t length, uint64_t offset, const BlockWriter& writer);

// Checks a block read back from `offset`. `generation` < 0 accepts any generation. The error
// (kDataLoss) says what was expected and what was found, and where.
absl::Status CheckBlock(v1::JobSpec::Verify kind, const char* block, uint64_t length, uint64_t offset,
                        int64_t generation, const std::string& path);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_BLOCK_VERIFY_H_
