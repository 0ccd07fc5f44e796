#include "worker/write_buffers.h"

#include <algorithm>
#include <cstring>

#include "common/mix.h"
#include "job/block_sizes.h"
#include "job/data_pattern.h"

namespace iofleet {

WriteBufferFiller::WriteBufferFiller(const v1::JobSpec& job, const BlockWriter& writer, uint64_t seed)
    : job_(job), verify_(VerifyFormat::Of(job)), writer_(writer), rng_(seed), dedupe_rng_(Mix(seed ^ 0xdedeull)) {
  if (job.dedupe_percentage() > 0 && job.dedupe_mode() == v1::JobSpec::DEDUPE_WORKING_SET) {
    // fio: the working set is dedupe_working_set_percentage (default 5) of the file, in blocks
    // of the smallest write size.
    const uint64_t percent = job.dedupe_working_set_percentage() ? job.dedupe_working_set_percentage() : 5;
    working_set_blocks_ = std::max<uint64_t>(1, FileSize(job) * percent / 100 / std::max<uint64_t>(1, MinBlockSize(job)));
    // dedupe_global: one working set for every thread, job and worker that sets it.
    working_set_seed_ = job.dedupe_global() ? Mix(job.randseed() ^ 0x610ba1ull) : Mix(seed ^ 0x5e7ull);
  }
}

uint64_t WriteBufferFiller::NextDedupeSeed() {
  const bool duplicate = dedupe_rng_() % 100 < job_.dedupe_percentage();
  if (job_.dedupe_mode() == v1::JobSpec::DEDUPE_WORKING_SET) {
    if (duplicate) return Mix(working_set_seed_ + dedupe_rng_() % working_set_blocks_);
    return rng_();
  }
  if (duplicate && has_unique_) return last_unique_seed_;  // fio's repeat: the last new buffer
  last_unique_seed_ = rng_();
  has_unique_ = true;
  return last_unique_seed_;
}

void WriteBufferFiller::Fill(char* buffer, uint64_t length) {
  if (job_.has_buffer_pattern()) {
    FillWithPattern(job_.buffer_pattern(), buffer, length, 0);
    return;
  }
  if (job_.zero_buffers()) {
    std::memset(buffer, 0, length);
    return;
  }
  FillWith(rng_, buffer, length);
}

void WriteBufferFiller::FillWith(std::mt19937_64& rng, char* buffer, uint64_t length) const {
  // Random, incompressible data, as fio writes by default; with buffer_compress_percentage,
  // each chunk ends in zeros so that it compresses to about that share.
  const uint64_t chunk = job_.buffer_compress_chunk() ? job_.buffer_compress_chunk() : 512;
  const uint64_t random_part = job_.buffer_compress_percentage() ? chunk * (100 - job_.buffer_compress_percentage()) / 100 : chunk;
  for (uint64_t start = 0; start < length; start += chunk) {
    const uint64_t end = std::min(length, start + chunk);
    const uint64_t random_end = std::min(end, start + random_part);
    for (uint64_t b = start; b < random_end; b += 8) {
      const uint64_t word = rng();
      std::memcpy(buffer + b, &word, std::min<uint64_t>(8, random_end - b));
    }
    if (random_end < end) std::memset(buffer + random_end, 0, end - random_end);
  }
}

void WriteBufferFiller::Prepare(char* buffer, uint64_t length, uint64_t offset, uint64_t issue_ns, uint64_t generation) {
  if (verify_.kind != v1::JobSpec::VERIFY_NONE) {
    // The header and checksum make every block self-describing; the sector stamps keep blocks
    // distinct when the data pattern repeats and let a torn block be recognised.
    writer_.generation = generation;
    ++writer_.write_number;
    SealBlock(verify_, buffer, length, offset, writer_);
    return;
  }
  // buffer_pattern: the buffers hold it from the start and nothing changes them (fio turns
  // refill, scramble and zero off with it).
  if (job_.zero_buffers() || job_.has_buffer_pattern()) return;
  if (job_.dedupe_percentage() > 0) {
    // Contents are a function of their seed alone, so a repeated seed is a duplicate block
    // (fio's dedupe; no scrambling, which would make every block unique).
    std::mt19937_64 contents(NextDedupeSeed());
    FillWith(contents, buffer, length);
    return;
  }
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
