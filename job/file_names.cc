#include "job/file_names.h"

#include "absl/strings/match.h"

namespace iofleet {

std::vector<std::string> SplitFioList(absl::string_view value) {
  std::vector<std::string> entries(1);
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '\\' && i + 1 < value.size() && value[i + 1] == ':') {
      entries.back().push_back(':');
      ++i;
    } else if (value[i] == ':') {
      entries.emplace_back();
    } else {
      entries.back().push_back(value[i]);
    }
  }
  return entries;
}

std::vector<std::string> JobFileNames(const v1::JobSpec& job) {
  if (job.filename().empty()) return {};
  return SplitFioList(job.filename());
}

std::vector<std::string> JobDirectories(const v1::JobSpec& job) {
  if (job.directory().empty()) return {};
  if (absl::StartsWith(job.directory(), "nfs://")) return {job.directory()};
  return SplitFioList(job.directory());
}

}  // namespace iofleet
