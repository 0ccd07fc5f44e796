// fio's do_verify for one job thread: which blocks a pass wrote, the read-back list made from
// them when the pass ends (the last write to each offset is what the file must hold), and the
// blocks that failed their check (a read job's verify= checks count here too). The IO loop
// issues the reads; CheckBlock judges them.
#ifndef IOFLEET_WORKER_READ_BACK_H_
#define IOFLEET_WORKER_READ_BACK_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace iofleet {

class ReadBack {
 public:
  struct Block {
    size_t file_index = 0;
    uint64_t offset = 0, length = 0;
    uint64_t write_number = 0;  // the last write to it, and its pass (its verify header says so)
    uint64_t generation = 0;
  };
  explicit ReadBack(size_t files) : written_(files) {}

  // A write completed in full.
  void Wrote(size_t file_index, uint64_t offset, uint64_t length, uint64_t write_number, uint64_t generation) {
    written_[file_index].push_back(
        Block{.file_index = file_index, .offset = offset, .length = length, .write_number = write_number, .generation = generation});
    ++pending_;
  }
  // Writes since the last StartReadBack (fio verify_backlog counts these).
  uint64_t pending() const { return pending_; }
  // The pass's writes become the list to read back, each offset once, file by file in offset order.
  void StartReadBack();
  // The next block to read back, if any is left.
  std::optional<Block> NextBlock();
  bool AllIssued() const { return next_ >= queue_.size(); }

  // A block failed its check (counts as one failure; the first is kept to report).
  void Failed(const absl::Status& failure);
  uint64_t failures() const { return failures_; }
  // OK without failures; else DATA_LOSS with the count and the first failure.
  absl::Status Verdict() const;

 private:
  std::vector<std::vector<Block>> written_;  // [file] the writes since the last read-back
  std::vector<Block> queue_;
  size_t next_ = 0;
  uint64_t pending_ = 0;
  uint64_t failures_ = 0;
  absl::Status first_failure_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_READ_BACK_H_
