#include "controller/results_dir.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/atomic_file.h"

namespace iofleet {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string ResultsFileName(const std::string& name, const std::string& empty) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out.empty() ? empty : out.substr(0, 64);
}

absl::StatusOr<ResultsDirectory> ResultsDirectory::Create(const std::string& base, absl::Time start, const std::string& job_name) {
  std::error_code error;
  std::filesystem::create_directories(base, error);
  if (error) return absl::InvalidArgumentError(absl::StrCat("--results-dir ", base, ": ", error.message()));
  const std::string stem = absl::StrCat(absl::FormatTime("%Y%m%dT%H%M%SZ", start, absl::UTCTimeZone()), "-", ResultsFileName(job_name, "run"));
  for (int n = 1; n < 1000; ++n) {
    const std::string name = n == 1 ? stem : absl::StrCat(stem, "-", n);
    const std::string final_path = absl::StrCat(base, "/", name), working = absl::StrCat(base, "/.", name, ".partial");
    if (Exists(final_path) || Exists(working)) continue;
    if (::mkdir(working.c_str(), 0755) != 0) {
      if (errno == EEXIST) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("results directory ", working));
    }
    return ResultsDirectory(working, final_path);
  }
  return absl::AlreadyExistsError(absl::StrCat("no free results directory name for ", stem, " in ", base));
}

absl::Status ResultsDirectory::Write(const std::string& file, const std::string& text) const {
  return WriteFileAtomically(PathOf(file), text);
}

absl::StatusOr<ResultsDirectory::Saved> ResultsDirectory::Complete(const std::vector<std::pair<std::string, std::string>>& files,
                                                                   std::vector<std::string> problems, int exit_code) {
  for (const auto& [file, text] : files) {
    if (absl::Status written = Write(file, text); !written.ok()) return written;
  }
  if (problems.empty() && exit_code != 0) problems.push_back(absl::StrCat("exit code ", exit_code));
  if (!problems.empty()) {
    absl::Status written = Write("PARTIAL", absl::StrCat("This run did not complete; its results cover what was measured.\n",
                                                         absl::StrJoin(problems, "\n"), "\n"));
    if (!written.ok()) return written;
  }
  if (std::rename(working_.c_str(), final_.c_str()) != 0) return absl::ErrnoToStatus(errno, absl::StrCat("rename ", working_, " to ", final_));
  return Saved{final_, !problems.empty()};
}

void ResultsDirectory::AddIntervalLogs(const std::string& ndjson, const std::string& csv,
                                       std::vector<std::pair<std::string, std::string>>* files) {
  for (const auto& [path, file] : {std::pair{ndjson, "intervals.ndjson"}, std::pair{csv, "intervals.csv"}}) {
    if (path.empty()) continue;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    files->emplace_back(file, text.str());
  }
}

void ResultsDirectory::Discard() {
  std::error_code ignored;
  std::filesystem::remove_all(working_, ignored);
}

}  // namespace iofleet
