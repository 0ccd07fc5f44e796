#include "worker/write_buffers.h"

#include <algorithm>
#include <cstring>

namespace iofleet {

WriteBufferFiller::WriteBufferFiller(const v1::JobSpec& job, const BlockWriter& writer, uint64_t seed)
    : job_(job), writer_(writer), rng_(seed) {}

void WriteBufferFiller::Fill(char* buffer, uint64_t length) {
  if (job_.zero_buffers()) {
    std::memset(buffer, 0, length);
    return;
  }
  // Random, incompressible data, as fio writes by default; with buffer_compress_percentage,
  // each chunk ends in zeros so that it compresses to about that share.
  const uint64_t chunk = job_.buffer_compress_chunk() ? job_.buffer_compress_chunk() : 512;
  const uint64_t random_part = job_.buffer_compress_percentage() ? chunk * (100 - job_.buffer_compress_percentage()) / 100 : chunk;
  for (uint64_t start = 0; start < length; start += chunk) {
    const uint64_t end = std::min(length, start + chunk);
    const uint64_t random_end = std::min(end, start + random_part);
    for (uint64_t b = start; b < random_end; b += 8) {
      const uint64_t word = rng_();
      std::memcpy(buffer + b, &word, std::min<uint64_t>(8, random_end - b));
    }
    if (random_end < end) std::memset(buffer + random_end, 0, end - random_end);
  }
}

void WriteBufferFiller::Prepare(char* buffer, uint64_t length, uint64_t offset, uint64_t issue_ns, uint64_t generation) {
  if (job_.verify() != v1::JobSpec::VERIFY_NONE && length >= kVerifyHeaderSize) {
    // The header and checksum make every block self-describing; the sector stamps keep blocks
    // distinct when the data pattern repeats and let a torn block be recognised.
    writer_.generation = generation;
    ++writer_.write_number;
    if (!job_.zero_buffers()) StampSectors(buffer, length, offset, writer_);
    SealBlock(job_.verify(), buffer, length, offset, writer_);
    return;
  }
  if (job_.zero_buffers()) return;
  if (job_.refill_buffers()) {
    Fill(buffer, length);
  } else if (job_.scramble_buffers()) {
    // fio's scramble: the offset and a timestamp at the start of every 512-byte sector, so
    // deduplicating storage cannot fold repeated buffers away.
    for (uint64_t b = 0; b + 16 <= length; b += 512) {
      const uint64_t words[2] = {offset + b, issue_ns};
      std::memcpy(buffer + b, words, sizeof(words));
    }
  }
}

}  // namespace iofleet
