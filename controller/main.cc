// iofleet: the controller CLI.
//   iofleet run JOBFILE [--hosts HOST:PORT,...] [--hostfile FILE] [--interval 1s]
//               [--output-format normal|json] [--output FILE]
#include <fstream>
#include <iostream>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_split.h"
#include "common/command_line.h"
#include "common/nearest_name.h"
#include "common/protocol_version.h"
#include "common/transport_security.h"
#include "common/units.h"
#include "controller/compare_command.h"
#include "controller/mdtest_command.h"
#include "controller/relay_command.h"
#include "controller/run_command.h"
#include "controller/session_flags.h"
#include "job/fio_job_file.h"
#include "job/fio_option_names.h"
#include "job/run_limits.h"

namespace iofleet {
namespace {

// iofleet run's own options, then those every command shares (controller/session_flags.h).
const std::vector<OptionSpec> kRunOptions = WithSessionOptions({
    {"output-format", true, false, "FORMAT", "normal (default); json or json+ (fio's layout, iofleet's data under \"iofleet\"); iofleet-json"},
    {"directory", true, false, "DIR", "where jobs without directory= put their files (a path on the workers)"},
    {"keep-files", false, false, "", "with no hosts: keep the temporary job directory"},
    {"ignore-unsupported", false, false, "", "skip fio options iofleet does not implement (listed in the report)"},
    {"section", true, true, "NAME", "run only job section NAME (and [global]), as fio's --section; repeatable"},
    {"parse-only", false, false, "", "parse, resolve and validate the job, print the resolved jobs and exit (0 valid, 2 not); no worker is contacted"},
    {"help", false, false, "", "show this help"},
});

constexpr char kUsage[] =
    "usage: iofleet run JOBFILE [options]\n"
    "       iofleet run --name=JOB --rw=randread --bs=4k ... [options]   (fio's command-line form)\n"
    "       iofleet mdtest [mdtest options] [--hosts ...]   (iofleet mdtest --help)\n"
    "       iofleet compare JOBFILE --target NAME=PATH --target NAME=PATH ...   (iofleet compare --help)\n"
    "       iofleet relay --listen HOST:PORT --controller HOST:PORT --expect-workers N   (iofleet relay --help)\n"
    "       iofleet version\n"
    "\n"
    "Runs a fio-style job file on every worker at once and reports cluster-wide results.\n"
    "With no --hosts/--hostfile, starts local workers on 127.0.0.1 (jobs without directory=\n"
    "use a temporary directory, removed afterwards).\n\n";

int UsageError(absl::string_view message) {
  std::cerr << "iofleet: " << message << "\n(iofleet run --help shows the options)\n";
  return 2;
}

// Separates iofleet's own options from fio job options (`--rw=randread`), which fio accepts
// on its command line too. A --word that is neither is reported with the nearest of both.
absl::Status SplitArguments(const std::vector<std::string>& args, std::vector<std::string>* ours,
                            std::vector<std::string>* job_options) {
  std::vector<std::string> fio_names = KnownFioOptions();
  fio_names.insert(fio_names.end(), FioOptionNames().begin(), FioOptionNames().end());
  fio_names.push_back("name");
  auto known = [&](const std::string& name) {
    return std::find(fio_names.begin(), fio_names.end(), name) != fio_names.end() ||
           std::any_of(kRunOptions.begin(), kRunOptions.end(), [&](const OptionSpec& s) { return s.name == name; });
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    // fio takes every long option with one dash too (`fio -rw=write -bs=4k -name=x`), and that
    // is how fio lines circulate in runbooks: `-name[=value]` means `--name[=value]`.
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-') {
      const std::string name = arg.substr(1, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 1);
      if (!known(name)) {
        std::vector<std::string> all = fio_names;
        for (const OptionSpec& s : kRunOptions) all.push_back(s.name);
        return absl::InvalidArgumentError(absl::StrCat("unknown option ", arg.substr(0, arg.find('=')), DidYouMean(name, all, "-")));
      }
      arg = "-" + arg;
    }
    if (!absl::StartsWith(arg, "--") || arg == "--") {
      ours->push_back(arg);
      continue;
    }
    const std::string name = arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    const auto spec = std::find_if(kRunOptions.begin(), kRunOptions.end(), [&](const OptionSpec& s) { return s.name == name; });
    if (spec != kRunOptions.end()) {
      ours->push_back(arg);
      if (spec->takes_value && arg.find('=') == std::string::npos && i + 1 < args.size()) ours->push_back(args[++i]);
    } else if (std::find(fio_names.begin(), fio_names.end(), name) != fio_names.end()) {
      job_options->push_back(arg);
    } else {
      std::vector<std::string> all = fio_names;
      for (const OptionSpec& s : kRunOptions) all.push_back(s.name);
      return absl::InvalidArgumentError(absl::StrCat("unknown option --", name, DidYouMean(name, all, "--")));
    }
  }
  return absl::OkStatus();
}

int Run(const std::vector<std::string>& args) {
  std::vector<std::string> own_args;
  RunOptions options;
  if (absl::Status split = SplitArguments(args, &own_args, &options.job_options); !split.ok()) {
    return UsageError(split.message());
  }
  auto cl = ParseCommandLine(own_args, kRunOptions);
  if (!cl.ok()) return UsageError(cl.status().message());
  if (cl->Has("help")) {
    std::cout << kUsage << FormatOptionHelp(kRunOptions);
    return 0;
  }
  if (cl->positional().size() > 1 || (options.job_options.empty() && cl->positional().empty())) {
    return UsageError("iofleet run takes one job file, or fio job options (--name=JOB --rw=...)");
  }
  if (!cl->positional().empty()) {
    options.job_file = cl->positional()[0];
    // fio: options before a job file are global defaults for it (`fio --filename=/dev/sdb job.fio`).
    for (const std::string& option : options.job_options) {
      if (absl::StartsWith(option, "--name=")) {
        return UsageError("with a job file, fio options on the command line are defaults for its jobs: " + option + " cannot start a job of its own");
      }
    }
  }
  if (absl::Status read = ReadSessionFlags(*cl, &options.session); !read.ok()) return UsageError(read.message());
  options.output_format = cl->Get("output-format", "normal");
  options.keep_files = cl->Has("keep-files");
  options.directory = cl->Get("directory");
  options.ignore_unsupported = cl->Has("ignore-unsupported");
  options.sections = cl->GetAll("section");
  if (cl->Has("parse-only")) return ParseJobOnly(options);
  return RunJob(options);
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage << "options of iofleet run:\n" << FormatOptionHelp(kRunOptions);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "run") return Run(args);
  if (command == "mdtest") return RunMdtest(args);
  if (command == "compare") return RunCompare(args);
  if (command == "relay") return RunRelay(args);
  if (command == "version" || command == "--version") {
    std::cout << "iofleet " << kIofleetVersion << " (protocol " << kProtocolVersion << ", accepts workers from protocol "
              << kMinCompatibleProtocolVersion << ")\n";
    return 0;
  }
  return UsageError(absl::StrCat("unknown command '", command, "'", DidYouMean(command, {"run", "mdtest", "compare", "relay", "version", "help"})));
}

}  // namespace
}  // namespace iofleet

int main(int argc, char** argv) {
  // abseil's mutex deadlock detection (on in Debian's build) records every lock order gRPC
  // takes: a few percent of the controller's CPU at a thousand sessions, for a check meant for
  // development.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return iofleet::Main(argc, argv);
}
