// What the bytes of a job thread's writes hold: fio's random (incompressible) data by default,
// zero_buffers, buffer_compress_percentage/chunk, refill_buffers and scramble_buffers — or,
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

 private:
  const v1::JobSpec& job_;
  BlockWriter writer_;
  std::mt19937_64 rng_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_WRITE_BUFFERS_H_
