// fio's lists inside one option value, read the way fio reads them: `filename=a:b:c` and
// `directory=/x:/y` separate entries with ':', and '\:' is a colon inside an entry
// (`filename=c\:foo` is the one file "c:foo"). The job model keeps the values as written; the
// parser, validation, the controller and the worker all split them here.
#ifndef IOFLEET_JOB_FILE_NAMES_H_
#define IOFLEET_JOB_FILE_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/job.pb.h"

namespace iofleet {

// Entries of a ':'-separated list with '\:' escapes (empty entries kept, so they can be refused).
std::vector<std::string> SplitFioList(absl::string_view value);

// The inverse of SplitFioList: entries joined with ':', their own ':' escaped.
std::string JoinFioList(const std::vector<std::string>& entries);

// The job's shared file names (filename=), none when it has none.
std::vector<std::string> JobFileNames(const v1::JobSpec& job);

// The job's directories (directory=), none when it has none. fio spreads generated file names
// over them by thread (thread k uses directory k mod n); named files use the first. An nfs://
// URL is one directory (its own ':' are not separators).
std::vector<std::string> JobDirectories(const v1::JobSpec& job);

// The name of a generated file (no filename=): fio's filename_format with its keywords
// $jobname, $jobnum (the thread within the job), $filenum and $clientuid (the worker's index in
// the run), or iofleet's default $jobname.w$clientuid.$jobnum.$filenum. An unknown $keyword is
// an error that names the known ones.
// filename_format's keywords, without their '$': the job-file parser leaves these for the worker.
const std::vector<std::string>& FilenameFormatKeywords();

struct GeneratedFile {
  absl::string_view job_name;
  uint32_t worker = 0;
  uint32_t jobnum = 0;
  uint32_t filenum = 0;
};
absl::StatusOr<std::string> GeneratedFileName(absl::string_view filename_format, const GeneratedFile& file);

}  // namespace iofleet

#endif  // IOFLEET_JOB_FILE_NAMES_H_
