// fio-style data verification: every verified unit (a block, or each verify_interval bytes of
// it) starts with a header (magic, offset, length, generation, and who wrote it: job, worker,
// thread, seed, write number) and a checksum of the unit (fio's crc7/16/32/32c/64, md5, sha1,
// sha256/512, sha3, xxhash; meta: of the header alone), so a read can tell whether it got the
// right block, a misplaced one, a stale one, a torn one or a corrupted one — and say which.
// With verify_pattern the data is that pattern and is checked byte for byte; fio's
// verify=pattern checks the pattern alone, without a header.
#ifndef IOFLEET_WORKER_BLOCK_VERIFY_H_
#define IOFLEET_WORKER_BLOCK_VERIFY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace iofleet {

// The smallest unit that can carry a header.
inline constexpr uint64_t kVerifyHeaderSize = 80;

// Who wrote a block, and which write it was. Stored in the header so a failed check can name
// the writer; `write_number` is also stamped into every 512-byte sector's second word, which
// is how a torn block (sectors from two different writes) is told apart from corrupted bytes.
struct BlockWriter {
  uint32_t job = 0;      // index of the job in the run
  uint32_t worker = 0;   // worker index
  uint32_t thread = 0;   // thread within the job on that worker
  uint64_t seed = 0;     // the thread's random seed
  uint64_t generation = 0;    // which write pass (verify read-back expects the current one)
  uint64_t write_number = 0;  // unique per write of this thread
};

// How a job's blocks are written and checked.
struct VerifyFormat {
  v1::JobSpec::Verify kind = v1::JobSpec::VERIFY_NONE;
  uint64_t interval = 0;                     // a unit's bytes; 0: the whole block is one unit
  const v1::DataPattern* pattern = nullptr;  // the data, when set (else random, stamped)
  bool stamp_sectors = true;                 // off for zero_buffers, which must stay zeros

  static VerifyFormat Of(const v1::JobSpec& job);
  bool has_header() const { return kind != v1::JobSpec::VERIFY_NONE && kind != v1::JobSpec::VERIFY_PATTERN_NO_HEADER; }
};

// fio's name of a verify kind ("crc32c", "sha256", "meta", "pattern", ...).
const char* VerifyKindName(v1::JobSpec::Verify kind);

uint32_t Crc32c(const void* data, size_t length, uint32_t crc = 0);
// The other checksums fio offers: CRC-64/XZ, CRC-32 (zlib's), CRC-16/ARC, CRC-7/MMC, XXH32.
uint64_t Crc64(const void* data, size_t length);
uint32_t Crc32(const void* data, size_t length);
uint16_t Crc16(const void* data, size_t length);
uint8_t Crc7(const void* data, size_t length);
uint32_t XxHash32(const void* data, size_t length, uint32_t seed = 0);

// Makes a block whose data is in place (random contents) what a verified write sends: per
// unit, the pattern (if any) or sector stamps, then the header and checksum.
void SealBlock(const VerifyFormat& format, char* block, uint64_t length, uint64_t offset, const BlockWriter& writer);

// Checks a block read back from `offset`. `generation` < 0 accepts any generation; `writer`
// (when set) is the thread and write the block must come from (fio's verify_write_sequence: a
// read-back finds the last write of its own thread). The error (kDataLoss) says what was
// expected and what was found, and where.
absl::Status CheckBlock(const VerifyFormat& format, const char* block, uint64_t length, uint64_t offset,
                        int64_t generation, const std::string& path, const BlockWriter* writer = nullptr);

// fio verify_dump's expected bytes, where they are known without the writer's random data
// (verify_pattern set): the pattern, with each unit's header as it was read (so a comparison
// shows the data that differs). Otherwise nullopt.
std::optional<std::string> ExpectedBlock(const VerifyFormat& format, const char* read, uint64_t length, uint64_t offset);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_BLOCK_VERIFY_H_
