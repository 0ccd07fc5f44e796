// fio's data patterns (buffer_pattern=, verify_pattern=): parsed from fio's syntax on the
// controller, pasted into buffers and checked on the worker.
//
// The syntax (fio's lib/pattern.c): a sequence of hex numbers (0xaa555aa5: bytes in the order
// written, any length), decimal numbers (-12: the int's little-endian bytes up to its highest
// non-zero one), strings in double quotes ("abcd"), a file's bytes in single quotes
// ('pattern.bin', read on the controller) and %o (the 8-byte offset of the block, for
// verify_pattern only). The result repeats over the buffer.
#ifndef IOFLEET_JOB_DATA_PATTERN_H_
#define IOFLEET_JOB_DATA_PATTERN_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/job.pb.h"

namespace iofleet {

// fio's MAX_PATTERN_SIZE: the longest pattern, and what a worker accepts.
inline constexpr size_t kMaxPatternBytes = 512;

// `block_offsets` allows %o (verify_pattern); buffer_pattern has none, as in fio.
absl::StatusOr<v1::DataPattern> ParseDataPattern(absl::string_view text, bool block_offsets);

// Why a pattern from a request cannot be used (empty, too long, %o past its end), or OK.
absl::Status CheckDataPattern(const v1::DataPattern& pattern);

// Fills `length` bytes at `out` with the pattern, repeated from its first byte; %o holds
// `block_offset`.
void FillWithPattern(const v1::DataPattern& pattern, char* out, uint64_t length, uint64_t block_offset);

// The first byte of `data` (`length` bytes that sit `phase` bytes into a buffer filled by
// FillWithPattern with `block_offset`) that differs from the pattern, or nullopt.
std::optional<uint64_t> FirstPatternMismatch(const v1::DataPattern& pattern, const char* data, uint64_t length,
                                             uint64_t phase, uint64_t block_offset);

}  // namespace iofleet

#endif  // IOFLEET_JOB_DATA_PATTERN_H_
