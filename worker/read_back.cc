#include "worker/read_back.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace iofleet {

void ReadBack::StartReadBack() {
  queue_.clear();
  next_ = 0;
  pending_ = 0;
  for (size_t f = 0; f < written_.size(); ++f) {
    std::map<uint64_t, Block> latest;
    for (const Block& b : written_[f]) latest[b.offset] = b;
    for (const auto& [offset, block] : latest) queue_.push_back(block);
    written_[f].clear();
  }
}

std::optional<ReadBack::Block> ReadBack::NextBlock() {
  if (next_ >= queue_.size()) return std::nullopt;
  return queue_[next_++];
}

void ReadBack::Failed(const absl::Status& failure) {
  if (failures_++ == 0) first_failure_ = failure;
}

absl::Status ReadBack::Verdict() const {
  if (failures_ == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(failures_, " block(s) failed verification; first: ", first_failure_.message()));
}

}  // namespace iofleet
