#include "job/block_sizes.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace iofleet {
namespace {

// An rw not (yet) set counts every direction: buffers and memory estimates stay on the safe side.
bool Unset(v1::ReadWrite rw) { return !ReadsData(rw) && !WritesData(rw) && !TrimsData(rw); }
bool UsesReads(v1::ReadWrite rw) { return Unset(rw) || ReadsData(rw); }
bool UsesWrites(v1::ReadWrite rw) { return Unset(rw) || WritesData(rw); }
bool UsesTrims(v1::ReadWrite rw) { return Unset(rw) || TrimsData(rw); }

std::string Describe(const v1::BlockSizeRange& r) {
  if (r.min() == r.max()) return FormatBytes(static_cast<double>(r.min()));
  return absl::StrCat(FormatBytes(static_cast<double>(r.min())), "-", FormatBytes(static_cast<double>(r.max())));
}

// The [min, max] of one direction's sizes, from its split if it has one.
std::pair<uint64_t, uint64_t> Bounds(const v1::BlockSizeRange& range,
                                     const google::protobuf::RepeatedPtrField<v1::BlockSizeSplit>& split) {
  if (split.empty()) return {range.min(), range.max()};
  uint64_t min = UINT64_MAX, max = 0;
  for (const auto& entry : split) {
    min = std::min(min, entry.size());
    max = std::max(max, entry.size());
  }
  return {min, max};
}

}  // namespace

uint64_t MaxBlockSize(const v1::JobSpec& job) {
  uint64_t max = 0;
  if (UsesReads(job.rw())) max = std::max(max, Bounds(job.read_bs(), job.read_bssplit()).second);
  if (UsesWrites(job.rw())) max = std::max(max, Bounds(job.write_bs(), job.write_bssplit()).second);
  if (UsesTrims(job.rw())) max = std::max(max, job.trim_bs().max());
  return max;
}

uint64_t MinBlockSize(const v1::JobSpec& job) {
  uint64_t min = UINT64_MAX;
  if (UsesReads(job.rw())) min = std::min(min, Bounds(job.read_bs(), job.read_bssplit()).first);
  if (UsesWrites(job.rw())) min = std::min(min, Bounds(job.write_bs(), job.write_bssplit()).first);
  if (UsesTrims(job.rw())) min = std::min(min, job.trim_bs().min());
  return min == UINT64_MAX ? 0 : min;
}

void SetFixedBlockSize(v1::JobSpec* job, uint64_t bs) {
  for (v1::BlockSizeRange* r : {job->mutable_read_bs(), job->mutable_write_bs(), job->mutable_trim_bs()}) {
    r->set_min(bs);
    r->set_max(bs);
  }
}

uint64_t FileSize(const v1::JobSpec& job) {
  if (job.filesize() > 0) return job.filesize();
  return job.size() / std::max(1u, job.nrfiles());
}

uint64_t OffsetUnit(const v1::JobSpec& job) { return job.blockalign() ? job.blockalign() : MinBlockSize(job); }

uint64_t PickBlockSize(const v1::JobSpec& job, DataDirection direction, uint64_t random) {
  const bool is_read = direction == DataDirection::kRead;
  const auto& split = is_read ? job.read_bssplit() : job.write_bssplit();
  if (direction != DataDirection::kTrim && !split.empty()) {
    uint32_t point = static_cast<uint32_t>(random % 100), seen = 0;
    for (const auto& entry : split) {
      seen += entry.percent();
      if (point < seen) return entry.size();
    }
    return split.rbegin()->size();
  }
  const v1::BlockSizeRange& bs = direction == DataDirection::kTrim ? job.trim_bs() : is_read ? job.read_bs() : job.write_bs();
  if (bs.max() <= bs.min()) return bs.min();
  if (job.bs_unaligned()) return bs.min() + random % (bs.max() - bs.min() + 1);  // fio's bs_unaligned
  return bs.min() + (random % ((bs.max() - bs.min()) / bs.min() + 1)) * bs.min();
}

std::string DescribeBlockSizes(const v1::JobSpec& job) {
  auto describe = [](const v1::BlockSizeRange& range, const google::protobuf::RepeatedPtrField<v1::BlockSizeSplit>& split) {
    if (split.empty()) return Describe(range);
    std::string out;
    for (const auto& e : split) absl::StrAppend(&out, out.empty() ? "" : ":", FormatBytes(static_cast<double>(e.size())), "/", e.percent());
    return out;
  };
  if (TrimsData(job.rw())) return Describe(job.trim_bs());
  const std::string read = describe(job.read_bs(), job.read_bssplit()), write = describe(job.write_bs(), job.write_bssplit());
  if (!UsesWrites(job.rw())) return read;
  if (!UsesReads(job.rw())) return write;
  return read == write ? read : absl::StrCat(read, ",", write);
}

}  // namespace iofleet
