// The fio front end: parses a fio job file (INI syntax, includes, ${VARIABLES}) or fio's
// command-line form into a RunSpec, option by option through the option table
// (job/fio_options.h). An option fio has and iofleet does not is an error naming file:line and
// the nearest known option (or skipped and listed, with --ignore-unsupported) — never silently
// ignored. What it returns still goes through ResolveRunSpec (job/run_resolution.h) before any
// worker sees it.
#ifndef IOFLEET_JOB_FIO_JOB_FILE_H_
#define IOFLEET_JOB_FIO_JOB_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"

namespace iofleet {

using v1::JobSpec;
using v1::ReadWrite;
using v1::RunSpec;

struct FioParseOptions {
  // A fio option iofleet does not implement is skipped and listed in RunSpec.ignored_options
  // instead of being an error. Options fio does not know are errors either way.
  bool ignore_unsupported = false;
  // fio's --section: only these job sections (and [global]) are read; empty reads them all.
  std::vector<std::string> sections;
  // fio options from the command line (`--filename=/dev/sdb`) that come before the job file: a
  // [global] section ahead of the file's, which the file's own [global] overrides (fio's order).
  std::vector<std::string> global_options;
};

// Parses job-file text; `file_name` is used in error messages ("quick.fio:12: ...").
absl::StatusOr<RunSpec> ParseFioJobText(const std::string& text, const std::string& file_name,
                                        const FioParseOptions& options = {});
// Reads and parses a job file.
absl::StatusOr<RunSpec> ParseFioJobFile(const std::string& path, const FioParseOptions& options = {});
// fio's command-line form: `--opt=value ...`, options before the first --name=JOB are global
// and each --name starts a job. Errors say "command line argument N".
absl::StatusOr<RunSpec> ParseFioCommandLine(const std::vector<std::string>& args, const FioParseOptions& options = {});

// The option names the parser knows, for "did you mean" and documentation.
std::vector<std::string> KnownFioOptions();

// fio's name for a ReadWrite ("randread").
std::string ReadWriteName(ReadWrite rw);

}  // namespace iofleet

#endif  // IOFLEET_JOB_FIO_JOB_FILE_H_
