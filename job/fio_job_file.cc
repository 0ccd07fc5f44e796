#include "job/fio_job_file.h"

#include <fstream>
#include <functional>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/nearest_name.h"
#include "common/printable.h"
#include "common/nfs_url.h"
#include "common/status_macros.h"
#include "job/block_sizes.h"
#include "job/file_names.h"
#include "job/fio_option_names.h"
#include "job/fio_options.h"
#include "common/units.h"
#include "engines/engine_catalog.h"
#include "job/fio_refusals.h"
#include "job/job_validation.h"

namespace iofleet {

std::vector<std::string> KnownFioOptions() {
  std::vector<std::string> names;
  for (const FioOption& o : FioOptions()) names.push_back(o.name);
  for (const auto& [alias, name] : FioAliases()) names.emplace_back(alias);
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
    case v1::SEQ_TRIM: return "trim";
    case v1::RAND_TRIM: return "randtrim";
    default: return "unset";
  }
}

namespace {

// fio's zone units once the whole job is read: size=128z and the like become bytes (zonesize
// each), and a zonesize without a zonemode is fio's old strided mode.
absl::Status ResolveZoneUnits(JobSpec* job) {
  v1::ZoneSpec& zones = *job->mutable_zones();
  if (zones.mode() == v1::ZoneSpec::NONE && zones.size() > 0) zones.set_mode(v1::ZoneSpec::STRIDED);
  const std::pair<const char*, uint64_t> counted[] = {
      {"size", zones.size_zones()}, {"offset", zones.offset_zones()}, {"io_size", zones.io_size_zones()}, {"zoneskip", zones.skip_zones()}};
  for (const auto& [name, count] : counted) {
    if (count == 0) continue;
    if (zones.size() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(job->location().file(), ":", job->location().line(), ": job '", job->name(), "': ", name, "=",
                                                     count, "z counts zones, but the job sets no zonesize= (iofleet emulates zones: "
                                                     "it cannot ask a zoned device for its zone size)"));
    }
    if (count > UINT64_MAX / zones.size()) {
      return absl::InvalidArgumentError(absl::StrCat(job->location().file(), ":", job->location().line(), ": job '", job->name(), "': ", name, "=",
                                                     count, "z is beyond 2^64 bytes"));
    }
  }
  if (zones.size_zones()) job->set_size(zones.size_zones() * zones.size());
  if (zones.offset_zones()) job->set_offset(zones.offset_zones() * zones.size());
  if (zones.io_size_zones()) job->set_io_size(zones.io_size_zones() * zones.size());
  if (zones.skip_zones()) zones.set_skip(zones.skip_zones() * zones.size());
  zones.clear_size_zones();
  zones.clear_offset_zones();
  zones.clear_io_size_zones();
  zones.clear_skip_zones();
  if (zones.mode() == v1::ZoneSpec::NONE) job->clear_zones();
  return absl::OkStatus();
}

// One line of job text and where it came from (after include expansion).
struct SourceLine {
  std::string file;
  int line = 0;
  std::string text;
};

constexpr char kCommandLine[] = "command line";

std::string FileLine(const SourceLine& l) {
  if (l.file == kCommandLine) return absl::StrCat("command line argument ", l.line);
  return absl::StrCat(l.file, ":", l.line);
}

// Job files are small regular files: `include /dev/zero` or a FIFO must not hang the parser.
constexpr off_t kMaxJobFileBytes = 16 << 20;
// Lines longer than this are refused (fio itself reads lines of up to 8 KiB).
constexpr size_t kMaxLineBytes = 64 << 10;

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat("cannot read job file ", path));
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is not a regular file"));
  if (st.st_size > kMaxJobFileBytes) return absl::InvalidArgumentError(absl::StrCat("job file ", path, " is larger than 16 MiB"));
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read job file ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Splits `text` into lines, replacing each "include FILE" line by FILE's lines (relative to
// the including file's directory, as fio resolves them).
absl::Status AppendLines(const std::string& text, const std::string& file_name, int depth,
                         std::vector<SourceLine>* out) {
  int number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    // A job file is text with lines of sane length; anything else is refused before parsing.
    if (raw.find('\0') != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", number, ": a NUL byte: this is not a text job file"));
    }
    if (raw.size() > kMaxLineBytes) {
      return absl::InvalidArgumentError(absl::StrCat(file_name, ":", number, ": the line is ", raw.size(), " bytes long, above the maximum of ",
                                                     kMaxLineBytes));
    }
    // fio ends a job-file line at its first ';' or '#': `runtime=3600  # an hour`.
    raw = raw.substr(0, raw.find_first_of(";#"));
    absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    if (absl::StartsWith(stripped, "include") && (stripped.size() == 7 || absl::ascii_isspace(stripped[7]))) {
      const std::string where = absl::StrCat(file_name, ":", number);
      const std::string target(absl::StripAsciiWhitespace(stripped.substr(7)));
      if (target.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": include needs a file name"));
      if (depth >= 16) return absl::InvalidArgumentError(absl::StrCat(where, ": includes nested more than 16 deep (a cycle?)"));
      std::string path = target;
      if (path[0] != '/' && file_name.find('/') != std::string::npos) {
        path = absl::StrCat(file_name.substr(0, file_name.rfind('/') + 1), target);
      }
      auto included = ReadWholeFile(path);
      if (!included.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", included.status().message()));
      RETURN_IF_ERROR(AppendLines(*included, path, depth + 1, out));
      continue;
    }
    out->push_back({file_name, number, std::string(raw)});
  }
  return absl::OkStatus();
}

// fio's variables: ${NAME} or $NAME from the environment, and fio's own $ncpus, $pagesize,
// $mb_memory. An undefined variable is an error: running with an empty value would quietly
// run another workload. `literal`: bare $names left as they are, for the option to read
// (filename_format's $jobname...).
absl::StatusOr<std::string> ExpandVariables(absl::string_view text, const std::vector<std::string>& literal = {}) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '$') {
      out.push_back(text[i++]);
      continue;
    }
    std::string name;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      const size_t close = text.find('}', i + 2);
      if (close == absl::string_view::npos) return absl::InvalidArgumentError("unterminated ${...}");
      name = std::string(text.substr(i + 2, close - i - 2));
      i = close + 1;
    } else {
      size_t end = i + 1;
      while (end < text.size() && (absl::ascii_isalnum(text[end]) || text[end] == '_')) ++end;
      name = std::string(text.substr(i + 1, end - i - 1));
      i = end;
    }
    if (name.empty()) return absl::InvalidArgumentError("'$' without a variable name");
    if (text[i - name.size() - 1] == '$' && std::find(literal.begin(), literal.end(), name) != literal.end()) {
      absl::StrAppend(&out, "$", name);
    } else if (name == "ncpus") {
      out += absl::StrCat(::sysconf(_SC_NPROCESSORS_ONLN));
    } else if (name == "pagesize") {
      out += absl::StrCat(::sysconf(_SC_PAGESIZE));
    } else if (name == "mb_memory") {
      out += absl::StrCat(static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) / (1 << 20));
    } else if (const char* value = std::getenv(name.c_str()); value != nullptr) {
      out += value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("environment variable '", name, "' is not set"));
    }
  }
  return out;
}

// A section header's name ("global" included), or nullopt for any other line.
std::optional<std::string> SectionName(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (line.size() < 3 || line.front() != '[' || line.back() != ']') return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(line.substr(1, line.size() - 2)));
}

bool Selected(const std::string& section, const FioParseOptions& options) {
  return section == "global" || options.sections.empty() ||
         std::find(options.sections.begin(), options.sections.end(), section) != options.sections.end();
}

// Before any option is read: a job whose ioengine is one of fio's that iofleet does not have is
// refused at its ioengine= line, naming the engine and what it does — the engine's own options
// further down would otherwise be reported as unknown.
absl::Status CheckEngines(const std::vector<SourceLine>& lines, const FioParseOptions& options) {
  const SourceLine* global_engine = nullptr;
  const SourceLine* job_engine = nullptr;
  std::string section;
  auto check = [&]() -> absl::Status {
    if (section.empty() || section == "global" || !Selected(section, options)) return absl::OkStatus();
    const SourceLine* where = job_engine != nullptr ? job_engine : global_engine;
    if (where == nullptr) return absl::OkStatus();
    const absl::string_view text = where->text;
    std::string engine(absl::StripAsciiWhitespace(text.substr(text.find('=') + 1)));
    if (engine.find('$') != std::string::npos || FindEngine(engine).ok()) return absl::OkStatus();
    if (absl::StartsWith(engine, "external:")) engine = "external";
    const char* why = FioEngineRefusal(engine);
    if (why == nullptr) return absl::OkStatus();  // not fio's either: validation names the nearest engine
    return absl::InvalidArgumentError(absl::StrCat(FileLine(*where), ": job '", Printable(section, 64), "': ioengine=", engine,
                                                   " is one of fio's engines that iofleet does not have: ", why,
                                                   ". iofleet's engines: ", absl::StrJoin(EngineNames(), ", ")));
  };
  for (const SourceLine& l : lines) {
    if (std::optional<std::string> name = SectionName(l.text)) {
      RETURN_IF_ERROR(check());
      section = *name;
      job_engine = nullptr;
      continue;
    }
    const absl::string_view line = absl::StripAsciiWhitespace(l.text);
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos || absl::StripAsciiWhitespace(line.substr(0, eq)) != "ioengine") continue;
    (section == "global" ? global_engine : job_engine) = &l;
  }
  return check();
}

absl::StatusOr<RunSpec> ParseLines(const std::vector<SourceLine>& lines, const std::string& source,
                                   const FioParseOptions& parse_options) {
  RETURN_IF_ERROR(CheckEngines(lines, parse_options));
  for (const std::string& wanted : parse_options.sections) {
    if (!std::any_of(lines.begin(), lines.end(), [&](const SourceLine& l) { return SectionName(l.text) == wanted; })) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": --section ", wanted, ": no job section [", wanted, "]"));
    }
  }
  bool skipping = false;  // inside a section --section did not select
  RunSpec spec;
  spec.set_source(source);
  JobSpec global = DefaultJob();
  JobSpec* current = nullptr;  // nullptr outside any section
  for (const SourceLine& source_line : lines) {
    auto fail = [&](absl::string_view message) {
      return absl::InvalidArgumentError(absl::StrCat(FileLine(source_line), ": ", Printable(message, 400)));
    };
    absl::string_view line = absl::StripAsciiWhitespace(source_line.text);
    if (line.empty()) continue;
    if (line[0] == '[') {
      std::optional<std::string> section = SectionName(line);
      if (!section.has_value()) return fail(absl::StrCat("malformed section header '", line, "' (expected [name])"));
      const std::string& name = *section;
      // fio's --section: the other jobs are not read at all (their options may need
      // variables only the selected run sets).
      skipping = !Selected(name, parse_options);
      if (skipping) continue;
      if (name == "global") {
        current = &global;
        continue;
      }
      for (const JobSpec& existing : spec.jobs()) {
        if (existing.name() == name) return fail(absl::StrCat("job '", name, "' is defined twice"));
      }
      current = spec.add_jobs();
      *current = global;
      current->set_name(name);
      current->mutable_location()->set_file(source_line.file);
      current->mutable_location()->set_line(source_line.line);
      continue;
    }
    if (skipping) continue;
    if (current == nullptr) {
      return fail(absl::StrCat("option '", line, "' outside of a section: start with [global] or [jobname]"));
    }
    absl::string_view key = line, raw_value;
    bool has_value = false;
    if (size_t eq = line.find('='); eq != absl::string_view::npos) {
      key = absl::StripAsciiWhitespace(line.substr(0, eq));
      raw_value = absl::StripAsciiWhitespace(line.substr(eq + 1));
      has_value = true;
    }
    if (key.empty()) return fail(absl::StrCat("malformed line '", line, "' (expected option=value)"));
    const std::string name(CanonicalFioName(key));
    const FioOption* option = nullptr;
    for (const FioOption& o : FioOptions()) {
      if (name == o.name) option = &o;
    }
    // Nothing in a job may run commands on a worker: refused outright, never skipped.
    if (name == "exec_prerun" || name == "exec_postrun" || (name == "ioengine" && absl::StrContains(raw_value, "exec"))) {
      return fail(absl::StrCat("'", line, "' is refused: iofleet never runs commands on workers"));
    }
    if (const char* why = FioHardwareOptionRefusal(name); option == nullptr && why != nullptr) {
      return fail(absl::StrCat("fio option '", key, "' cannot run in iofleet: ", why, " (iofleet does IO through the kernel's file interfaces)"));
    }
    if (option == nullptr) {
      const auto& fio_names = FioOptionNames();
      if (std::find(fio_names.begin(), fio_names.end(), name) != fio_names.end()) {
        if (parse_options.ignore_unsupported) {
          spec.add_ignored_options(absl::StrCat(FileLine(source_line), ": ", line));
          continue;
        }
        return fail(absl::StrCat("fio option '", key, "' is not implemented by iofleet; ",
                                 "--ignore-unsupported runs without it (and says so in the report)"));
      }
      return fail(absl::StrCat("unknown option '", key, "'", DidYouMean(key, KnownFioOptions())));
    }
    auto value = key == "filename_format" ? ExpandVariables(raw_value, FilenameFormatKeywords()) : ExpandVariables(raw_value);
    if (!value.ok()) return fail(absl::StrCat("option '", key, "': ", value.status().message()));
    if (option->needs_value && (!has_value || value->empty())) {
      return fail(absl::StrCat("option '", key, "' needs a value (", key, "=...)"));
    }
    // fio accepts name= in [global] (job files in the wild have it); each section still names its job.
    absl::Status status = option->set(*value, current);
    if (!status.ok()) return fail(absl::StrCat("bad value for ", key, ": ", status.message()));
  }
  if (spec.jobs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": no job sections (add [jobname] after [global])"));
  }
  for (int j = 0; j < spec.jobs_size(); ++j) {
    JobSpec& job = *spec.mutable_jobs(j);
    // wait_for names an earlier job (the controller turns it into phases; workers never see
    // the job it names, so it is checked here).
    if (!job.wait_for().empty() &&
        std::none_of(spec.jobs().begin(), spec.jobs().begin() + j, [&](const JobSpec& earlier) { return earlier.name() == job.wait_for(); })) {
      return absl::InvalidArgumentError(absl::StrCat(job.location().file(), ":", job.location().line(), ": job '", job.name(), "': wait_for=",
                                                     Printable(job.wait_for(), 64), " names no job defined before this one"));
    }
    RETURN_IF_ERROR(ResolveZoneUnits(&job));
    for (std::string* prefix : {job.mutable_write_bw_log(), job.mutable_write_iops_log(), job.mutable_write_lat_log(), job.mutable_write_hist_log()}) {
      if (*prefix == kJobNamePrefix) *prefix = job.name();
    }
    // fio: filename=a:b:c names the job's files; size defaults to nrfiles x filesize.
    if (const size_t names = JobFileNames(job).size(); names > 1) job.set_nrfiles(static_cast<uint32_t>(names));
    if (job.size() == 0 && job.filesize() > 0) job.set_size(job.filesize() * std::max(1u, job.nrfiles()));
    // fio: no size= for named files (filename=/dev/sdb) takes their size, as size=100% does.
    if (job.sprandom()) {  // fio's defaults: spr_op=0.15, spr_num_regions=100
      if (job.spr_over_provisioning() == 0) job.set_spr_over_provisioning(0.15);
      if (job.spr_num_regions() == 0) job.set_spr_num_regions(100);
    }
    if (job.size() == 0 && job.size_percent() == 0 && !job.filename().empty() && !job.has_metadata() && !job.fill_device()) {
      job.set_size_percent(100);
    }
    if (!job.nfs_url().empty()) {
      // fio's nfs engine opens directory/filename inside the export nfs_url names.
      auto url = ParseNfsUrl(job.nfs_url());  // checked where the option was read
      if (!url.ok()) return url.status();
      if (!job.directory().empty() && job.directory()[0] == '/') {
        return absl::InvalidArgumentError(absl::StrCat(source, ": job '", job.name(), "': with nfs_url, directory='", job.directory(),
                                                       "' must be relative (a directory inside the export)"));
      }
      job.set_directory(job.directory().empty() ? url->ToString() : url->Child(job.directory()).ToString());
    }
  }
  return spec;
}

}  // namespace

absl::StatusOr<RunSpec> ParseFioJobText(const std::string& text, const std::string& file_name,
                                        const FioParseOptions& options) {
  std::vector<SourceLine> lines;
  if (!options.global_options.empty()) {
    lines.push_back({kCommandLine, 0, "[global]"});
    int argument = 0;
    for (const std::string& option : options.global_options) {
      ++argument;
      if (!absl::StartsWith(option, "--")) {
        return absl::InvalidArgumentError(absl::StrCat("command line argument ", argument, ": '", option, "' is not a --option"));
      }
      lines.push_back({kCommandLine, argument, option.substr(2)});
    }
  }
  RETURN_IF_ERROR(AppendLines(text, file_name, 0, &lines));
  return ParseLines(lines, file_name, options);
}

absl::StatusOr<RunSpec> ParseFioJobFile(const std::string& path, const FioParseOptions& options) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseFioJobText(*text, path, options);
}

absl::StatusOr<RunSpec> ParseFioCommandLine(const std::vector<std::string>& args, const FioParseOptions& parse_options) {
  const std::vector<std::string>& options = args;
  // fio's rule: options before the first --name are global; each --name starts a job.
  std::vector<SourceLine> lines = {{kCommandLine, 0, "[global]"}};
  int argument = 0;
  for (const std::string& option : options) {
    ++argument;
    if (!absl::StartsWith(option, "--")) {
      return absl::InvalidArgumentError(absl::StrCat("command line argument ", argument, ": '", option, "' is not a --option"));
    }
    const std::string body = option.substr(2);
    if (absl::StartsWith(body, "name=")) {
      lines.push_back({kCommandLine, argument, absl::StrCat("[", body.substr(5), "]")});
    } else {
      lines.push_back({kCommandLine, argument, body});
    }
  }
  if (std::none_of(options.begin(), options.end(), [](const std::string& o) { return absl::StartsWith(o, "--name="); })) {
    return absl::InvalidArgumentError("command line: job options need --name=JOB to start a job (as in fio)");
  }
  return ParseLines(lines, kCommandLine, parse_options);
}

}  // namespace iofleet
