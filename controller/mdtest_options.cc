#include "controller/mdtest_options.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/nfs_url.h"
#include "common/command_line.h"
#include "common/units.h"
#include "common/status_macros.h"
#include "job/mdtest_tree.h"
#include "job/run_limits.h"

namespace iofleet {
namespace {

// mdtest's own options (hpc/ior 4.1, mdtest.c's option table) that iofleet mdtest does not
// take, with what they do: a refusal names them as mdtest's, where an option mdtest lacks too is
// unknown. (-g is Lustre's, built into mdtest with lustreapi only.)
struct UnimplementedMdtestOption {
  absl::string_view name;  // a letter, or a --long name without its dashes
  absl::string_view what;
};
constexpr UnimplementedMdtestOption kUnimplementedMdtestOptions[] = {
    {"g", "a global default directory layout for test subdirectories, Lustre's"},
    // (mdtest's every rank runs it, on its own host: a worker runs no command a controller sends.)
    {"run-cmd-before-phase", "an external command every task runs before each phase; iofleet's workers run no command they are sent"},
    {"run-cmd-after-phase", "an external command every task runs after each phase; iofleet's workers run no command they are sent"},
    {"allocateBufferOnGPU", "I/O buffers on a GPU"},
    {"GPUid", "the GPU to use"},
    {"gpuDirect", "GPUDirect storage"},
};

const UnimplementedMdtestOption* FindUnimplemented(absl::string_view name) {
  for (const UnimplementedMdtestOption& option : kUnimplementedMdtestOptions) {
    if (option.name == name) return &option;
  }
  return nullptr;
}

// The error for an option iofleet mdtest does not take: `spelt` as given ("-q", "--foo").
absl::Status RefusedOption(absl::string_view name, absl::string_view spelt) {
  if (const UnimplementedMdtestOption* option = FindUnimplemented(name); option != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("mdtest option ", spelt, " (", option->what, ") is not implemented by iofleet mdtest"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown option ", spelt, ": neither mdtest nor iofleet mdtest has it"));
}

absl::StatusOr<uint64_t> Number(absl::string_view text, char option) {
  uint64_t v;
  if (!absl::SimpleAtoi(text, &v)) return absl::InvalidArgumentError(absl::StrCat("option -", std::string(1, option), ": '", text, "' is not a whole number"));
  return v;
}

}  // namespace

// mdtest's getopt-style options ("-n 10", "-n10", "-R", "-R5", "-Fu") and iofleet's --long ones.
const std::vector<OptionSpec>& MdtestLongOptions() {
  static const std::vector<OptionSpec> kOptions = WithSessionOptions({
      {"tasks-per-worker", true, false, "N", "tasks on each worker (mpirun -np per worker; default 1)"},
      {"readdir", false, false, "", "time a listing of every tree directory"},
      {"stonewall-every-phase", false, false, "", "-W stops every phase, not only creation (each rate until the stonewall)"},
      {"verify-read", false, false, "", "mdtest's -X: check the data each read reads"},
      {"verify-write", false, false, "", "mdtest's: read each file back right after writing it, and check it"},
      {"dataPacketType", true, false, "t|o|i|r", "what -w writes: timestamp (default), offset, incompressible or random packets, as mdtest"},
      {"random-seed", true, false, "N", "the seed of the stats' random order (-R); above 0 it turns that order on, as in mdtest 4"},
      {"posix.odirect", false, false, "", "mdtest's POSIX backend option: files made and read with O_DIRECT"},
      {"posix.rangelocks", false, false, "", "mdtest's POSIX backend option: each file's write and read under a lock on its bytes (fcntl)"},
      {"dummy.delay-create", true, false, "USEC", "-a DUMMY: each file creation waits this long, as mdtest's DUMMY backend"},
      {"dummy.delay-close", true, false, "USEC", "-a DUMMY: each file's close (after its creation, after its read) waits this long"},
      {"dummy.delay-sync", true, false, "USEC", "-a DUMMY: -Y's sync waits this long"},
      {"dummy.delay-xfer", true, false, "USEC", "-a DUMMY: each file's write (-w) and read (-e) waits this long"},
      {"dummy.delay-only-rank0", false, false, "", "-a DUMMY: the delays in task 0 alone"},
      {"warningAsErrors", false, false, "", "a warning (as mdtest's) is an error: the run does not start"},
      {"showRankStatistics", false, false, "", "the SUMMARY tables also have each task's own rate (max, min, mean), as mdtest's"},
      {"print-all-procs", false, false, "", "each task's own rate (time with -Z) in every phase, before the SUMMARY table, as mdtest's"},
      {"saveRankPerformanceDetails", true, false, "FILE", "a CSV file of each phase's rate and time, and each task's own, as mdtest's"},
      {"savePerOpDataCSV", true, false, "PREFIX",
       "each task writes every file operation's start and duration to PREFIX-<phase>-<task>.csv on its worker's host, as mdtest's"},
      {"output-format", true, false, "normal|json", "the report's format (default normal)"},
      {"help", false, false, "", "show the help"},
  });
  return kOptions;
}

absl::Status ParseMdtestArgs(const std::vector<std::string>& args, MdtestOptions* o) {
  bool seeded = false;  // -G given
  static const std::string kTakesValue = "dnIzbweiNWpGaVxfls";
  static const std::string kFlags = "LuFDCTEUrytkvScPZXY";
  std::vector<std::string> long_args;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (absl::StartsWith(arg, "--")) {
      // Gathered with their values and read below through the shared option table.
      long_args.push_back(arg);
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const auto spec = std::find_if(MdtestLongOptions().begin(), MdtestLongOptions().end(), [&](const OptionSpec& s) { return s.name == name; });
      // (An unknown name is left to the option table's error, which suggests the nearest.)
      if (name.size() > 1 && FindUnimplemented(name) != nullptr) return RefusedOption(name, absl::StrCat("--", name));
      if (spec != MdtestLongOptions().end() && spec->takes_value && arg.find('=') == std::string::npos && i + 1 < args.size()) {
        long_args.push_back(args[++i]);
      }
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", arg, "'"));
    for (size_t c = 1; c < arg.size(); ++c) {
      const char letter = arg[c];
      if (letter == 'R') {  // optional attached seed
        o->phase.set_random_order(true);
        o->phase.set_random_seed(0);
        if (c + 1 < arg.size()) {
          auto seed = Number(arg.substr(c + 1), 'R');
          if (!seed.ok()) return seed.status();
          o->phase.set_random_seed(*seed);
        }
        break;
      }
      if (kTakesValue.find(letter) != std::string::npos) {
        std::string value = arg.substr(c + 1);
        if (value.empty()) {
          if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat("option -", std::string(1, letter), " needs a value"));
          value = args[++i];
        }
        if (letter == 'G') {  // mdtest's buffer offset: an int, negative allowed
          int32_t seed;
          if (!absl::SimpleAtoi(value, &seed)) return absl::InvalidArgumentError(absl::StrCat("option -G: '", value, "' is not a whole number (an int)"));
          o->phase.set_buffer_seed(seed);
          seeded = true;
          break;
        }
        if (letter == 'a') {
          // mdtest's I/O API (its backends' names, any case): POSIX calls (NFS calls for an
          // nfs:// -d, through libnfs), or DUMMY's none.
          if (absl::EqualsIgnoreCase(value, "DUMMY")) {
            o->phase.mutable_dummy();
          } else if (absl::EqualsIgnoreCase(value, "POSIX")) {
            o->phase.clear_dummy();
          } else {
            return absl::InvalidArgumentError(absl::StrCat("-a ", value, ": iofleet mdtest has mdtest's POSIX and DUMMY backends (-a POSIX, -a DUMMY); an nfs:// -d goes through libnfs"));
          }
          break;
        }
        if (letter == 'x') {
          o->stonewall_status_file = value;
          break;
        }
        if (letter == 'd') {
          o->phase.clear_test_dirs();
          for (absl::string_view d : absl::StrSplit(value, '@', absl::SkipEmpty())) o->phase.add_test_dirs(std::string(d));
          break;
        }
        auto v = Number(value, letter);
        if (!v.ok()) return v.status();
        switch (letter) {
          case 'n': o->phase.set_items_per_task(*v); break;
          case 'I': o->phase.set_items_per_dir(*v); break;
          case 'z':
            // Every level adds a "mdtest_tree.N/" component: deeper than this cannot fit in a
            // path (PATH_MAX 4096) on any worker.
            if (*v > kMaxTreeDepth) {
              return absl::InvalidArgumentError(absl::StrCat("-z ", value, ": a tree deeper than ", kMaxTreeDepth,
                                                             " levels does not fit in a path (PATH_MAX 4096)"));
            }
            o->phase.set_depth(static_cast<uint32_t>(*v));
            break;
          case 'b':
            if (*v > UINT32_MAX) return absl::InvalidArgumentError(absl::StrCat("-b ", value, ": at most ", UINT32_MAX, " branches"));
            o->phase.set_branch(static_cast<uint32_t>(*v));
            break;
          case 'w': o->phase.set_write_bytes(*v); break;
          case 'e': o->phase.set_read_bytes(*v); break;
          case 'i': o->iterations = static_cast<uint32_t>(std::max<uint64_t>(1, *v)); break;
          case 'N': o->phase.set_stride(static_cast<uint32_t>(*v)); break;
          case 'W': o->phase.set_stonewall_ns(*v * 1'000'000'000ull); break;
          case 'p': o->pre_delay_s = *v; break;
          case 'V': o->verbosity = static_cast<int>(std::min<uint64_t>(*v, 100)); break;
          case 'f': o->first_tasks = static_cast<uint32_t>(std::min<uint64_t>(*v, UINT32_MAX)); break;
          case 'l': o->last_tasks = static_cast<uint32_t>(std::min<uint64_t>(*v, UINT32_MAX)); break;
          case 's': o->tasks_stride = static_cast<uint32_t>(std::min<uint64_t>(*v, UINT32_MAX)); break;
        }
        break;  // the value ended this argument
      }
      if (letter == 'B') {
        // mdtest 4 takes -B (with a value, "-B 1") and then fails every run in its checks; the
        // same refusal here, before anything is made, with the reason.
        return absl::InvalidArgumentError(
            "-B (no barriers between phases): mdtest 4 refuses every run with it (\"stone wall timer does only work with a branch "
            "factor <= 1 and with barriers\"), and iofleet's tasks start every phase together: leave -B out");
      }
      if (letter == 'h') return absl::CancelledError("help");  // mdtest -h: the help, as --help
      if (kFlags.find(letter) == std::string::npos) return RefusedOption(std::string(1, letter), absl::StrCat("-", std::string(1, letter)));
      switch (letter) {
        case 'L': o->phase.set_leaf_only(true); break;
        case 'u': o->phase.set_unique_dir(true); break;
        case 'F': o->files = true; break;
        case 'D': o->dirs = true; break;
        case 'C': o->create = true; break;
        case 'T': o->stat = true; break;
        case 'E': o->read = true; break;
        case 'r': o->remove = true; break;
        case 'U': o->rename = true; break;
        case 'X': o->phase.set_verify_read(true); break;
        case 'Y': o->phase.set_sync_after_phase(true); break;
        case 'P': o->print_rate_and_time = true; break;
        case 'Z': o->print_time = true; break;
        case 'y': o->phase.set_sync_writes(true); break;
        case 'k': o->phase.set_use_mknod(true); break;
        case 'S': o->phase.set_shared_file(true); break;
        case 'c': o->phase.set_collective_creates(true); break;
        // mdtest's "time unique working directory overhead": with -u, whether a phase's clock
        // starts before the task works out its directory's path (a string, no file-system call,
        // in mdtest 4). A worker has its paths before the start instant, so there is nothing to time.
        case 't': break;
        case 'v': ++o->verbosity; break;
      }
    }
  }
  absl::StatusOr<CommandLine> long_options = ParseCommandLine(long_args, MdtestLongOptions());
  if (!long_options.ok()) return long_options.status();
  if (long_options->Has("help")) return absl::CancelledError("help");
  if (!long_options->positional().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", long_options->positional()[0], "'"));
  }
  RETURN_IF_ERROR(ReadSessionFlags(*long_options, &o->session));
  o->readdir = long_options->Has("readdir");
  o->stonewall_every_phase = long_options->Has("stonewall-every-phase");
  if (long_options->Has("verify-read")) o->phase.set_verify_read(true);
  if (long_options->Has("verify-write")) o->phase.set_verify_write(true);
  if (long_options->Has("posix.odirect")) o->phase.set_direct_io(true);
  if (long_options->Has("posix.rangelocks")) o->phase.set_range_locks(true);
  // mdtest's DUMMY backend's options (each only with -a DUMMY, as mdtest reads a backend's
  // options only when it is the one chosen).
  for (const auto& [name, set] : std::initializer_list<std::pair<const char*, void (v1::MetadataPhase::DummyBackend::*)(uint64_t)>>{
           {"dummy.delay-create", &v1::MetadataPhase::DummyBackend::set_delay_create_us},
           {"dummy.delay-close", &v1::MetadataPhase::DummyBackend::set_delay_close_us},
           {"dummy.delay-sync", &v1::MetadataPhase::DummyBackend::set_delay_sync_us},
           {"dummy.delay-xfer", &v1::MetadataPhase::DummyBackend::set_delay_xfer_us}}) {
    if (!long_options->Has(name)) continue;
    if (!o->phase.has_dummy()) return absl::InvalidArgumentError(absl::StrCat("--", name, ": an option of mdtest's DUMMY backend; give -a DUMMY"));
    uint64_t us = 0;
    if (!absl::SimpleAtoi(long_options->Get(name), &us) || us > kMaxDummyDelayUs) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, "=", long_options->Get(name), ": microseconds, a whole number from 0 to ",
                                                     kMaxDummyDelayUs));
    }
    (o->phase.mutable_dummy()->*set)(us);
  }
  if (long_options->Has("dummy.delay-only-rank0")) {
    if (!o->phase.has_dummy()) return absl::InvalidArgumentError("--dummy.delay-only-rank0: an option of mdtest's DUMMY backend; give -a DUMMY");
    o->phase.mutable_dummy()->set_delay_only_rank0(true);
  }
  o->warnings_are_errors = long_options->Has("warningAsErrors");
  // mdtest warns of a failed stat, removal, rename or directory creation and goes on; with
  // --warningAsErrors the first one ends the run.
  o->phase.set_warn_failed_items(!o->warnings_are_errors);
  o->show_rank_statistics = long_options->Has("showRankStatistics");
  o->print_all_procs = long_options->Has("print-all-procs");
  if (long_options->Has("saveRankPerformanceDetails")) {
    // Written when the run ends (atomically); its directory must be there now, as mdtest opens
    // the file before it starts.
    o->rank_details_csv = long_options->Get("saveRankPerformanceDetails");
    const std::filesystem::path parent = std::filesystem::absolute(o->rank_details_csv).parent_path();
    const bool named = !o->rank_details_csv.empty() && o->rank_details_csv.back() != '/';
    std::error_code error;
    if (!named || !std::filesystem::is_directory(parent, error)) {
      return absl::InvalidArgumentError(absl::StrCat("--saveRankPerformanceDetails ", o->rank_details_csv, ": ",
                                                     named ? "no directory " + parent.string() : "not a file name"));
    }
  }
  if (long_options->Has("savePerOpDataCSV")) {
    // Written by each task on its worker's host, as mdtest's ranks write theirs on their nodes;
    // a relative prefix is where mdtest's would be, under the directory mpirun was started from
    // (here the controller's). Its directory must exist there (checked by each worker, and here
    // for local workers, which are given it as an allowed root).
    const std::string given = long_options->Get("savePerOpDataCSV");
    std::error_code error;
    std::filesystem::path prefix = std::filesystem::absolute(given, error);
    if (given.empty() || error) {
      return absl::InvalidArgumentError(absl::StrCat("--savePerOpDataCSV '", given, "': ", given.empty() ? "give a file name prefix" : error.message()));
    }
    std::string normal = prefix.lexically_normal().string();
    if (given.back() == '/' && normal.back() != '/') normal.push_back('/');  // ("dir/": files "dir/-File stat-00000.csv")
    o->phase.set_per_op_csv(normal);
  }
  if (long_options->Has("dataPacketType")) {
    // As mdtest's parsePacketType: the first letter decides.
    const std::string type = long_options->Get("dataPacketType");
    switch (type.empty() ? 't' : type[0]) {
      case 't': o->phase.set_data_packet(v1::MetadataPhase::PACKET_TIMESTAMP); break;
      case 'o': o->phase.set_data_packet(v1::MetadataPhase::PACKET_OFFSET); break;
      case 'i': o->phase.set_data_packet(v1::MetadataPhase::PACKET_INCOMPRESSIBLE); break;
      case 'r': o->phase.set_data_packet(v1::MetadataPhase::PACKET_RANDOM); break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("--dataPacketType ", type, ": use offset, incompressible, timestamp or random (o, i, t, r)"));
    }
  }
  if (long_options->Has("random-seed")) {
    uint64_t seed;
    if (!absl::SimpleAtoi(long_options->Get("random-seed"), &seed)) return absl::InvalidArgumentError("--random-seed must be a whole number");
    o->phase.set_random_seed(seed);
    // As in mdtest 4, whose stats go in random order whenever the seed is above 0, -R or not.
    if (seed > 0) o->phase.set_random_order(true);
  }
  if (long_options->Has("tasks-per-worker")) {
    if (!absl::SimpleAtoi(long_options->Get("tasks-per-worker"), &o->tasks_per_worker) || o->tasks_per_worker < 1 || o->tasks_per_worker > 4096) {
      return absl::InvalidArgumentError("--tasks-per-worker must be from 1 to 4096");
    }
  }
  o->output_format = long_options->Get("output-format", "normal");
  if (o->output_format != "normal" && o->output_format != "json") return absl::InvalidArgumentError("--output-format must be normal or json");
  // Without -G, mdtest seeds the files' data with the time it starts (the same for every task).
  if (!seeded) o->phase.set_buffer_seed(static_cast<int32_t>(::time(nullptr)));
  if (!o->files && !o->dirs) o->files = o->dirs = true;
  // mdtest's rules for -S and -c.
  if (o->phase.shared_file()) {
    if (o->phase.unique_dir()) return absl::InvalidArgumentError("-u is not compatible with -S");
    if (o->phase.collective_creates()) return absl::InvalidArgumentError("-c is not compatible with -S");
    o->dirs = false;  // shared file access: files only
    o->files = true;
  }
  if (o->phase.collective_creates() && !o->phase.per_op_csv().empty()) {
    // mdtest's task 0 makes every file and then each task writes its own (each task's file has
    // those writes); iofleet's task 0 makes and writes them all: no task has mdtest's record.
    return absl::InvalidArgumentError(
        "--savePerOpDataCSV is not supported with -c in iofleet mdtest (mdtest's tasks each write their own files after task 0 made "
        "them all, and record those writes; iofleet's task 0 makes and writes every file)");
  }
  if (o->phase.collective_creates() && o->phase.stonewall_ns() > 0) {
    return absl::InvalidArgumentError("-W is not compatible with -c in iofleet mdtest (task 0's creation of every task's items cannot be evened out after the stonewall)");
  }
  if (o->phase.collective_creates() && o->phase.test_dirs_size() > 1) {
    return absl::InvalidArgumentError("-c is not compatible with multiple test directories");
  }
  // mdtest's rules for several test directories and for -n with -I.
  if (o->phase.test_dirs_size() > 1 && !o->phase.unique_dir()) {
    return absl::InvalidArgumentError("several test directories (-d a@b) need a unique directory per task (-u)");
  }
  if (o->phase.test_dirs_size() > 1 && o->phase.stride() > 0) {
    return absl::InvalidArgumentError("cannot have multiple directory paths with -N strides between neighbor tasks");
  }
  if (o->phase.items_per_task() > 0 && o->phase.items_per_dir() > 0 && o->phase.items_per_task() % o->phase.items_per_dir() != 0) {
    return absl::InvalidArgumentError("-n must be a multiple of -I");
  }
  // -n with -I and no -u: mdtest's directory loops (-n/-I copies of the tree, job/mdtest_tree.h).
  // What mdtest does with these options on top of them is left out rather than guessed: its
  // -R picks among -n item numbers where a copy holds -I per directory, and its stonewall
  // covers one loop only.
  if (MdtestTree::HasDirectoryLoops(o->phase)) {
    const char* other = o->phase.random_order() ? "-R" : o->phase.stonewall_ns() > 0 ? "-W" : o->phase.collective_creates() ? "-c"
                        : !o->stonewall_status_file.empty() ? "-x" : nullptr;
    if (other != nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("-n with -I and without -u makes mdtest's directory loops (-n/-I copies of the tree); ",
                                                     other, " is not supported with them: give -u, or -n or -I alone"));
    }
  }
  if (!o->create && !o->stat && !o->read && !o->remove && !o->rename) o->create = o->stat = o->read = o->remove = o->rename = true;
  if (o->phase.test_dirs().empty()) return absl::InvalidArgumentError("-d DIR is required (where the test tree goes)");
  for (const std::string& d : o->phase.test_dirs()) {
    if (IsNfsUrl(d)) {
      // Metadata through libnfs, no mount: nfs://server/export/dir.
      if (auto url = ParseNfsUrl(d); !url.ok()) return absl::InvalidArgumentError(absl::StrCat("-d ", url.status().message()));
      continue;
    }
    if (d.empty()) return absl::InvalidArgumentError("-d: an empty directory name");
  }
  // A relative -d is where it would be for mdtest's tasks: under the directory mpirun was
  // started from (every rank's working directory), here the controller's.
  o->given_test_dirs.assign(o->phase.test_dirs().begin(), o->phase.test_dirs().end());
  for (std::string& d : *o->phase.mutable_test_dirs()) {
    if (IsNfsUrl(d) || d[0] == '/') continue;
    std::error_code error;
    const std::filesystem::path cwd = std::filesystem::current_path(error);
    if (error) return absl::InvalidArgumentError(absl::StrCat("-d ", d, ": a relative path, and the current directory is unknown: ", error.message()));
    d = (cwd / d).lexically_normal().string();
    if (d.size() > 1 && d.back() == '/') d.pop_back();
  }
  if (o->phase.items_per_task() == 0 && o->phase.items_per_dir() == 0) return absl::InvalidArgumentError("give -n (items per task) or -I (items per directory)");
  if (o->phase.items_per_task() > 0 && o->phase.items_per_dir() > 0 && o->phase.unique_dir()) {
    return absl::InvalidArgumentError("only specify the number of items (-n) or the number of items per directory (-I)");  // mdtest's rule
  }
  if (o->phase.depth() > 0 && o->phase.branch() == 0) return absl::InvalidArgumentError("-z needs -b of at least 1");
  // Refused before the tree's size can overflow (MdtestTree::DirectoryCount saturates).
  constexpr uint64_t kMaxTreeDirectories = uint64_t{1} << 32;
  const uint64_t directories = MdtestTree::DirectoryCount(o->phase.depth(), o->phase.branch());
  if (directories > kMaxTreeDirectories) {
    return absl::InvalidArgumentError(absl::StrCat("-z ", o->phase.depth(), " with -b ", o->phase.branch(), " makes a tree of more than ",
                                                   kMaxTreeDirectories, " directories"));
  }
  if (o->phase.write_bytes() > 0 && o->phase.use_mknod()) return absl::InvalidArgumentError("-k is not compatible with -w");
  // mdtest's rules for verification and sync.
  if (o->phase.verify_read() && !o->read) return absl::InvalidArgumentError("Verify read requires that the read test is used");  // mdtest's words
  if (o->phase.verify_read() && o->phase.read_bytes() == 0) return absl::InvalidArgumentError("Verify read requires that read bytes is > 0");
  if (o->phase.sync_after_phase() && !o->phase.has_dummy()) {
    for (const std::string& d : o->phase.test_dirs()) {
      if (IsNfsUrl(d)) return absl::InvalidArgumentError("-Y: an nfs:// test directory has no sync (libnfs); mount it to use -Y");
    }
  }
  if (o->phase.has_dummy()) {
    for (const auto& [option, given] : {std::pair{"--posix.odirect", o->phase.direct_io()}, std::pair{"--posix.rangelocks", o->phase.range_locks()}}) {
      if (given) return absl::InvalidArgumentError(absl::StrCat(option, ": an option of mdtest's POSIX backend, and -a DUMMY is given"));
    }
    if (o->phase.use_mknod()) return absl::InvalidArgumentError("-k: mdtest's DUMMY backend has no mknod (mdtest's -k with it ends in a segmentation fault)");
  }
  if (o->phase.direct_io()) {
    for (const std::string& d : o->phase.test_dirs()) {
      if (IsNfsUrl(d)) return absl::InvalidArgumentError("--posix.odirect: an nfs:// test directory has no O_DIRECT (libnfs); mount it to use it");
    }
  }
  if (o->phase.range_locks()) {
    for (const std::string& d : o->phase.test_dirs()) {
      if (IsNfsUrl(d)) return absl::InvalidArgumentError("--posix.rangelocks: iofleet's NFS client (an nfs:// test directory) takes no locks; mount it to use them");
    }
  }
  if (o->create && o->read && o->phase.read_bytes() > o->phase.write_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat("-e ", o->phase.read_bytes(), " reads more than -w ", o->phase.write_bytes(),
                                                   " writes (mdtest: when writing and reading files, read bytes must be smaller than write bytes)"));
  }
  return absl::OkStatus();
}

}  // namespace iofleet
