// fio's verify_async=N: N threads check the blocks a job thread reads, so its next IO does not
// wait for a checksum. The IO thread hands over a copy of each block (at most `max_bytes` of
// them queued; when full it checks the block itself, so memory stays bounded); failures come
// back to the IO thread, which records them as it would its own.
#ifndef IOFLEET_WORKER_ASYNC_VERIFIER_H_
#define IOFLEET_WORKER_ASYNC_VERIFIER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "worker/block_verify.h"

namespace iofleet {

class AsyncVerifier {
 public:
  // A block to check, and what the check needs to know.
  struct Block {
    std::string data;
    uint64_t offset = 0;
    size_t file_index = 0;
    int64_t generation = -1;
    std::optional<BlockWriter> writer;  // the write it must be (see CheckBlock)
  };
  // `check` runs on the verifier's threads; its non-OK results are kept for TakeFailures().
  AsyncVerifier(uint32_t threads, uint64_t max_bytes, std::function<absl::Status(const Block&)> check);
  ~AsyncVerifier();
  AsyncVerifier(const AsyncVerifier&) = delete;
  AsyncVerifier& operator=(const AsyncVerifier&) = delete;

  // Queues a copy of `length` bytes at `data`; false (nothing queued) when the queue is full.
  bool Submit(const char* data, uint64_t length, uint64_t offset, size_t file_index, int64_t generation,
              const std::optional<BlockWriter>& writer);
  // Waits until every queued block has been checked.
  void Drain();
  // The failures found since the last call, each with its block.
  std::vector<std::pair<Block, absl::Status>> TakeFailures();

 private:
  void Work();

  const uint64_t max_bytes_;
  const std::function<absl::Status(const Block&)> check_;
  std::mutex mu_;
  std::condition_variable work_ready_, idle_;
  std::deque<Block> queue_;
  uint64_t queued_bytes_ = 0;
  uint32_t busy_ = 0;
  bool stopping_ = false;
  std::vector<std::pair<Block, absl::Status>> failures_;
  std::vector<std::thread> threads_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_ASYNC_VERIFIER_H_
