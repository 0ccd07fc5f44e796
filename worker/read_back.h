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
  };
  explicit ReadBack(size_t files) : written_(files) {}

  // A write completed in full.
  void Wrote(size_t file_index, uint64_t offset, uint64_t length) { written_[file_index].emplace_back(offset, length); }
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
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> written_;  // [file] (offset, length) this pass
  std::vector<Block> queue_;
  size_t next_ = 0;
  uint64_t failures_ = 0;
  absl::Status first_failure_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_READ_BACK_H_
