// What the bytes of a job thread's writes hold: fio's random (incompressible) data by default,
// zero_buffers, buffer_compress_percentage/chunk, refill_buffers, scramble_buffers and
// buffer_pattern — or,
// with verify=, self-describing blocks (header, checksum and sector stamps; block_verify.h)
// that a read-back or a later read job can check.
#ifndef IOFLEET_WORKER_WRITE_BUFFERS_H_
#define IOFLEET_WORKER_WRITE_BUFFERS_H_

#include <cstdint>
#include <random>

#include "proto/job.pb.h"
#include "worker/block_verify.h"

namespace iofleet {

class WriteBufferFiller {
 public:
  // `writer` names the thread in verify headers (its generation and write_number are set here).
  WriteBufferFiller(const v1::JobSpec& job, const BlockWriter& writer, uint64_t seed);

  // A buffer's first contents, when it is allocated.
  void Fill(char* buffer, uint64_t length);
  // Makes `buffer` what the write of `length` bytes at `offset`, issued at `issue_ns`, sends;
  // `generation` is the pass (a read-back expects the current one).
  void Prepare(char* buffer, uint64_t length, uint64_t offset, uint64_t issue_ns, uint64_t generation);
  // The write number the last verified Prepare stamped.
  uint64_t last_write_number() const { return writer_.write_number; }
  const BlockWriter& writer() const { return writer_; }

 private:
  // Random (or compressible, buffer_compress_percentage) contents drawn from `rng`.
  void FillWith(std::mt19937_64& rng, char* buffer, uint64_t length) const;
  // dedupe_percentage: the seed of the next write's contents — a new one, or a repeated one.
  uint64_t NextDedupeSeed();

  const v1::JobSpec& job_;
  const VerifyFormat verify_;
  BlockWriter writer_;
  std::mt19937_64 rng_;
  std::mt19937_64 dedupe_rng_;            // draws duplicates and working-set entries
  uint64_t last_unique_seed_ = 0;         // dedupe_mode=repeat
  bool has_unique_ = false;
  uint64_t working_set_blocks_ = 1;       // dedupe_mode=working_set
  uint64_t working_set_seed_ = 0;         // the working set's base (shared with dedupe_global)
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WRITE_BUFFERS_H_
