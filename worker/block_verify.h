// fio-style data verification: every verified block starts with a header (magic, offset,
// length, generation) and a checksum (crc32c or md5) over the rest of the block, so a read
// can tell whether it got the right block, a stale one or a corrupted one — and say which.
#ifndef IOFLEET_WORKER_BLOCK_VERIFY_H_
#define IOFLEET_WORKER_BLOCK_VERIFY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "proto/job.pb.h"

namespace iofleet {

// The smallest block that can carry a header.
inline constexpr uint64_t kVerifyHeaderSize = 48;

uint32_t Crc32c(const void* data, size_t length, uint32_t crc = 0);

// Writes the header and checksum into a block whose data is already in place.
void SealBlock(v1::JobSpec::Verify kind, char* block, uint64_t length, uint64_t offset, uint64_t generation);

// Checks a block read back from `offset`. `generation` < 0 accepts any generation. The error
// (kDataLoss) says what was expected and what was found, and where.
absl::Status CheckBlock(v1::JobSpec::Verify kind, const char* block, uint64_t length, uint64_t offset,
                        int64_t generation, const std::string& path);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_BLOCK_VERIFY_H_
