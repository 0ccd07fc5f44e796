// fio's job options as iofleet reads them: every option name, whether it needs a value, and
// how its value sets a JobSpec field (with fio's syntax: sizes, durations, per-direction parts,
// lists) — the table the job-file parser (job/fio_job_file.h) consults line by line — and fio's
// defaults for what a job file does not say.
#ifndef IOFLEET_JOB_FIO_OPTIONS_H_
#define IOFLEET_JOB_FIO_OPTIONS_H_

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/job.pb.h"

namespace iofleet {

// Applies one option's value to a job; returns a message (without location) on a bad value.
using OptionSetter = std::function<absl::Status(absl::string_view value, v1::JobSpec* job)>;

struct FioOption {
  const char* name;
  bool needs_value;  // false: a bare "name" is allowed (boolean options)
  OptionSetter set;
};

// What a bare write_bw_log (write_iops_log, ...) stores until the job's name is known: fio's
// default prefix is the job's name.
inline constexpr absl::string_view kJobNamePrefix = "$jobname";

// Every option iofleet implements.
const std::vector<FioOption>& FioOptions();
// fio spells some options two ways (readwrite=rw, blocksize=bs, timeout=runtime...): the
// name the table and fio's option list use.
absl::string_view CanonicalFioName(absl::string_view name);
// Every alias and the option it stands for.
const absl::flat_hash_map<absl::string_view, absl::string_view>& FioAliases();
// fio's defaults for what the job file does not say.
v1::JobSpec DefaultJob();

}  // namespace iofleet

#endif  // IOFLEET_JOB_FIO_OPTIONS_H_
