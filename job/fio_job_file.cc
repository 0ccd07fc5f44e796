#include "job/fio_job_file.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/nearest_name.h"
#include "common/units.h"
#include "job/job_validation.h"

namespace iofleet {
namespace {

// Applies one option's value to a job; returns a message (without location) on a bad value.
using OptionSetter = std::function<absl::Status(absl::string_view value, JobSpec* job)>;

struct FioOption {
  const char* name;
  bool needs_value;  // false: a bare "name" is allowed (boolean options)
  OptionSetter set;
};

absl::Status ParseBool(absl::string_view value, bool* out) {
  if (value.empty() || value == "1" || value == "true") *out = true;
  else if (value == "0" || value == "false") *out = false;
  else return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not 0 or 1"));
  return absl::OkStatus();
}

// Setters for the common kinds of option, each writing one JobSpec field.
OptionSetter BoolOption(void (JobSpec::*set)(bool)) {
  return [set](absl::string_view v, JobSpec* j) {
    bool b = false;
    absl::Status s = ParseBool(v, &b);
    if (s.ok()) (j->*set)(b);
    return s;
  };
}

// Takes the field's mutable_*() accessor (protobuf's string setters are templates).
OptionSetter StringOption(std::string* (JobSpec::*field)()) {
  return [field](absl::string_view v, JobSpec* j) {
    *(j->*field)() = std::string(v);
    return absl::OkStatus();
  };
}

// A whole number in [min, max]; `transform` maps it to the stored value (e.g. 100 - x).
OptionSetter UintOption(void (JobSpec::*set)(uint32_t), uint32_t min, uint32_t max,
                        uint32_t (*transform)(uint32_t) = nullptr) {
  return [=](absl::string_view v, JobSpec* j) {
    uint32_t n;
    if (!absl::SimpleAtoi(v, &n) || n < min || n > max) {
      return absl::InvalidArgumentError(absl::StrCat("'", v, "' is not a whole number from ", min, " to ", max));
    }
    (j->*set)(transform ? transform(n) : n);
    return absl::OkStatus();
  };
}

OptionSetter SizeOption(void (JobSpec::*set)(uint64_t), uint64_t max) {
  return [=](absl::string_view v, JobSpec* j) {
    auto size = ParseSize(v);
    if (!size.ok()) return size.status();
    if (*size > max) return absl::InvalidArgumentError(absl::StrCat("'", v, "' is larger than ", max, " bytes"));
    (j->*set)(*size);
    return absl::OkStatus();
  };
}

absl::Status SetReadWrite(absl::string_view v, JobSpec* j) {
  static const std::vector<std::pair<std::string, ReadWrite>> kModes = {
      {"read", v1::SEQ_READ},      {"write", v1::SEQ_WRITE}, {"randread", v1::RAND_READ},
      {"randwrite", v1::RAND_WRITE}, {"rw", v1::SEQ_MIXED},  {"readwrite", v1::SEQ_MIXED},
      {"randrw", v1::RAND_MIXED}};
  std::vector<std::string> names;
  for (const auto& [name, mode] : kModes) {
    if (v == name) {
      j->set_rw(mode);
      return absl::OkStatus();
    }
    names.push_back(name);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown rw mode '", v, "'", DidYouMean(v, names),
                                                 "; use read, write, randread, randwrite, rw or randrw"));
}

absl::Status SetRuntime(absl::string_view v, JobSpec* j) {
  auto ns = ParseDurationNs(v);
  if (ns.ok()) j->set_runtime_ns(*ns);
  return ns.status();
}

const std::vector<FioOption>& Options() {
  static const std::vector<FioOption> kOptions = {
      {"name", true, StringOption(&JobSpec::mutable_name)},
      {"rw", true, &SetReadWrite},
      {"rwmixread", true, UintOption(&JobSpec::set_rwmix_read, 0, 100)},
      {"rwmixwrite", true, UintOption(&JobSpec::set_rwmix_read, 0, 100, [](uint32_t w) { return 100 - w; })},
      {"bs", true, SizeOption(&JobSpec::set_block_size, 1ull << 30)},
      {"size", true, SizeOption(&JobSpec::set_size, UINT64_MAX)},
      {"numjobs", true, UintOption(&JobSpec::set_numjobs, 1, 4096)},
      {"runtime", true, &SetRuntime},
      {"time_based", false, BoolOption(&JobSpec::set_time_based)},
      {"directory", true, StringOption(&JobSpec::mutable_directory)},
      {"filename", true, StringOption(&JobSpec::mutable_filename)},
      // Checked against the engine table in validation, where the worker's engines are known.
      {"ioengine", true, StringOption(&JobSpec::mutable_ioengine)},
      {"fsync", true, UintOption(&JobSpec::set_fsync_every, 0, UINT32_MAX)},
      {"direct", false, BoolOption(&JobSpec::set_direct)},
      {"invalidate", false, BoolOption(&JobSpec::set_invalidate)},
      {"iodepth", true, UintOption(&JobSpec::set_iodepth, 1, 4096)},
      {"hipri", false, BoolOption(&JobSpec::set_hipri)},
      {"fixedbufs", false, BoolOption(&JobSpec::set_fixedbufs)},
      {"registerfiles", false, BoolOption(&JobSpec::set_registerfiles)},
      {"sqthread_poll", false, BoolOption(&JobSpec::set_sqthread_poll)},
  };
  return kOptions;
}

// fio spells some options two ways.
absl::string_view CanonicalName(absl::string_view name) {
  if (name == "readwrite") return "rw";
  if (name == "blocksize") return "bs";
  return name;
}

// fio's defaults for what the file does not say.
JobSpec DefaultJob() {
  JobSpec job;
  job.set_rw(v1::SEQ_READ);
  job.set_rwmix_read(50);
  job.set_block_size(4096);
  job.set_numjobs(1);
  job.set_ioengine("psync");
  job.set_iodepth(1);
  job.set_invalidate(true);
  return job;
}

}  // namespace

std::vector<std::string> KnownFioOptions() {
  std::vector<std::string> names = {"readwrite", "blocksize"};
  for (const FioOption& o : Options()) names.push_back(o.name);
  return names;
}

std::string ReadWriteName(ReadWrite rw) {
  switch (rw) {
    case v1::SEQ_READ: return "read";
    case v1::SEQ_WRITE: return "write";
    case v1::RAND_READ: return "randread";
    case v1::RAND_WRITE: return "randwrite";
    case v1::SEQ_MIXED: return "rw";
    case v1::RAND_MIXED: return "randrw";
    default: return "unset";
  }
}

absl::StatusOr<RunSpec> ParseFioJobText(const std::string& text, const std::string& file_name) {
  RunSpec spec;
  spec.set_source(file_name);
  JobSpec global = DefaultJob();
  JobSpec* current = nullptr;  // nullptr outside any section
  bool in_global = false;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    auto fail = [&](absl::string_view message) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", line_number, ": ", message));
    };
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == ';' || line[0] == '#') continue;
    if (line[0] == '[') {
      if (line.back() != ']' || line.size() < 3) {
        return fail(absl::StrCat("malformed section header '", line, "' (expected [name])"));
      }
      std::string name(absl::StripAsciiWhitespace(line.substr(1, line.size() - 2)));
      if (name == "global") {
        in_global = true;
        current = &global;
        continue;
      }
      for (const JobSpec& existing : spec.jobs()) {
        if (existing.name() == name) return fail(absl::StrCat("job '", name, "' is defined twice"));
      }
      in_global = false;
      current = spec.add_jobs();
      *current = global;
      current->set_name(name);
      current->mutable_location()->set_file(file_name);
      current->mutable_location()->set_line(line_number);
      continue;
    }
    if (current == nullptr) {
      return fail(absl::StrCat("option '", line, "' outside of a section: start with [global] or [jobname]"));
    }
    absl::string_view key = line, value;
    bool has_value = false;
    if (size_t eq = line.find('='); eq != absl::string_view::npos) {
      key = absl::StripAsciiWhitespace(line.substr(0, eq));
      value = absl::StripAsciiWhitespace(line.substr(eq + 1));
      has_value = true;
    }
    if (key.empty()) return fail(absl::StrCat("malformed line '", line, "' (expected option=value)"));
    const std::string name(CanonicalName(key));
    const FioOption* option = nullptr;
    for (const FioOption& o : Options()) {
      if (name == o.name) option = &o;
    }
    if (option == nullptr) {
      return fail(absl::StrCat("unknown option '", key, "'", DidYouMean(key, KnownFioOptions())));
    }
    if (option->needs_value && (!has_value || value.empty())) {
      return fail(absl::StrCat("option '", key, "' needs a value (", key, "=...)"));
    }
    if (in_global && name == "name") return fail("'name' belongs in a job section, not [global]");
    absl::Status status = option->set(value, current);
    if (!status.ok()) return fail(absl::StrCat("bad value for ", key, ": ", status.message()));
  }
  if (spec.jobs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": no job sections (add [jobname] after [global])"));
  }
  return spec;
}

absl::StatusOr<RunSpec> ParseFioJobFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read job file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseFioJobText(buffer.str(), path);
}

}  // namespace iofleet
