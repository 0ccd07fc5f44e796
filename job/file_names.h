// fio's lists inside one option value, read the way fio reads them: `filename=a:b:c` and
// `directory=/x:/y` separate entries with ':', and '\:' is a colon inside an entry
// (`filename=c\:foo` is the one file "c:foo"). The job model keeps the values as written; the
// parser, validation, the controller and the worker all split them here.
#ifndef IOFLEET_JOB_FILE_NAMES_H_
#define IOFLEET_JOB_FILE_NAMES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/job.pb.h"

namespace iofleet {

// Entries of a ':'-separated list with '\:' escapes (empty entries kept, so they can be refused).
std::vector<std::string> SplitFioList(absl::string_view value);

// The job's shared file names (filename=), none when it has none.
std::vector<std::string> JobFileNames(const v1::JobSpec& job);

// The job's directories (directory=), none when it has none. fio spreads generated file names
// over them by thread (thread k uses directory k mod n); named files use the first. An nfs://
// URL is one directory (its own ':' are not separators).
std::vector<std::string> JobDirectories(const v1::JobSpec& job);

}  // namespace iofleet

#endif  // IOFLEET_JOB_FILE_NAMES_H_
