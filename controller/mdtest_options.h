// mdtest's command line as `iofleet mdtest` reads it: mdtest's single-letter options with their
// meaning and rules, plus iofleet's --long ones. Its own library so it can be fuzzed alone.
#ifndef IOFLEET_CONTROLLER_MDTEST_OPTIONS_H_
#define IOFLEET_CONTROLLER_MDTEST_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "controller/session_flags.h"
#include "proto/job.pb.h"

namespace iofleet {

struct MdtestOptions {
  v1::MetadataPhase phase;  // what every phase shares
  bool files = false, dirs = false;                                 // -F / -D (neither: both)
  // -C -T -E -r -U: the phases to run (none of them: all five, as mdtest).
  bool create = false, stat = false, read = false, remove = false, rename = false;
  bool print_time = false;           // -Z: the SUMMARY table in time instead of rate
  bool print_rate_and_time = false;  // -P: both tables
  std::vector<std::string> given_test_dirs;  // -d as written (phase.test_dirs: made absolute)
  uint32_t iterations = 1;
  // -f/-l/-s: run the test with first, first + stride, ... up to last tasks (mdtest's defaults:
  // all tasks once; 0 here: not given).
  uint32_t first_tasks = 0, last_tasks = 0, tasks_stride = 1;
  uint64_t pre_delay_s = 0;
  bool readdir = false;
  bool stonewall_every_phase = false;
  bool warnings_are_errors = false;   // --warningAsErrors
  bool show_rank_statistics = false;  // --showRankStatistics
  bool print_all_procs = false;       // --print-all-procs
  std::string rank_details_csv;       // --saveRankPerformanceDetails
  std::string stonewall_status_file;  // -x: the evened creation count, written with -W, read without -C  // --stonewall-every-phase: -W on every phase, not creation only
  uint32_t tasks_per_worker = 1;
  std::string output_format = "normal";  // normal | json
  int verbosity = 0;
  SessionFlags session;  // workers, timing, telemetry, outputs: as for iofleet run
};

// iofleet mdtest's --long options: its own, then those every command shares.
const std::vector<OptionSpec>& MdtestLongOptions();

// Parses `args` (after "mdtest"); kCancelled for --help. Errors name the option.
absl::Status ParseMdtestArgs(const std::vector<std::string>& args, MdtestOptions* options);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_MDTEST_OPTIONS_H_
