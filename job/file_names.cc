#include "job/file_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/nearest_name.h"

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

std::string JoinFioList(const std::vector<std::string>& entries) {
  std::string joined;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) joined.push_back(':');
    for (const char c : entries[i]) {
      if (c == ':') joined.push_back('\\');
      joined.push_back(c);
    }
  }
  return joined;
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

const std::vector<std::string>& FilenameFormatKeywords() {
  static const auto* const kKeywords = new std::vector<std::string>{"jobname", "jobnum", "filenum", "clientuid"};
  return *kKeywords;
}

absl::StatusOr<std::string> GeneratedFileName(absl::string_view filename_format, const GeneratedFile& file) {
  if (filename_format.empty()) return absl::StrCat(file.job_name, ".w", file.worker, ".", file.jobnum, ".", file.filenum);
  std::string name;
  for (size_t i = 0; i < filename_format.size();) {
    if (filename_format[i] != '$') {
      name.push_back(filename_format[i++]);
      continue;
    }
    // The longest keyword that follows ("$jobnum" is not "$job" + "num").
    const absl::string_view rest = filename_format.substr(i + 1);
    size_t length = 0;
    while (length < rest.size() && absl::ascii_isalnum(static_cast<unsigned char>(rest[length]))) ++length;
    const absl::string_view keyword = rest.substr(0, length);
    if (keyword == "jobname") absl::StrAppend(&name, file.job_name);
    else if (keyword == "jobnum") absl::StrAppend(&name, file.jobnum);
    else if (keyword == "filenum") absl::StrAppend(&name, file.filenum);
    else if (keyword == "clientuid") absl::StrAppend(&name, file.worker);
    else {
      return absl::InvalidArgumentError(absl::StrCat("filename_format '", filename_format, "': unknown keyword '$", keyword, "'",
                                                     DidYouMean(keyword, FilenameFormatKeywords()), "; use $jobname, $jobnum, $filenum or $clientuid"));
    }
    i += 1 + length;
  }
  return name;
}

}  // namespace iofleet
