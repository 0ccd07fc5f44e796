#include "job/block_sizes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace iofleet {
namespace {

bool UsesReads(v1::ReadWrite rw) { return rw != v1::SEQ_WRITE && rw != v1::RAND_WRITE; }
bool UsesWrites(v1::ReadWrite rw) { return rw != v1::SEQ_READ && rw != v1::RAND_READ; }

std::string Describe(const v1::BlockSizeRange& r) {
  if (r.min() == r.max()) return FormatBytes(static_cast<double>(r.min()));
  return absl::StrCat(FormatBytes(static_cast<double>(r.min())), "-", FormatBytes(static_cast<double>(r.max())));
}

}  // namespace

uint64_t MaxBlockSize(const v1::JobSpec& job) {
  uint64_t max = 0;
  if (UsesReads(job.rw())) max = std::max(max, job.read_bs().max());
  if (UsesWrites(job.rw())) max = std::max(max, job.write_bs().max());
  return max;
}

uint64_t MinBlockSize(const v1::JobSpec& job) {
  uint64_t min = UINT64_MAX;
  if (UsesReads(job.rw())) min = std::min(min, job.read_bs().min());
  if (UsesWrites(job.rw())) min = std::min(min, job.write_bs().min());
  return min == UINT64_MAX ? 0 : min;
}

std::string DescribeBlockSizes(const v1::JobSpec& job) {
  const std::string read = Describe(job.read_bs()), write = Describe(job.write_bs());
  if (!UsesWrites(job.rw())) return read;
  if (!UsesReads(job.rw())) return write;
  return read == write ? read : absl::StrCat(read, ",", write);
}

}  // namespace iofleet
