// mdtest's command line as `iofleet mdtest` reads it: mdtest's single-letter options with their
// meaning and rules, plus iofleet's --long ones. Its own library so it can be fuzzed alone.
#ifndef IOFLEET_CONTROLLER_MDTEST_OPTIONS_H_
#define IOFLEET_CONTROLLER_MDTEST_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/job.pb.h"

namespace iofleet {

struct MdtestOptions {
  v1::MetadataPhase phase;  // what every phase shares
  bool files = false, dirs = false;                                 // -F / -D (neither: both)
  bool create = false, stat = false, read = false, remove = false;  // -C -T -E -r (none: all)
  uint32_t iterations = 1;
  uint64_t pre_delay_s = 0;
  bool readdir = false;
  uint32_t tasks_per_worker = 1;
  std::vector<std::string> hosts;
  int local_workers = 2;
  std::string worker_binary;
  std::string output_format = "normal";
  std::string output_file;
  std::string html_report;               // --report FILE.html
  std::string results_dir = "results";   // --results-dir DIR|none
  int verbosity = 0;
  // Live telemetry, as for iofleet run.
  bool quiet = false;                    // --quiet: no progress line
  absl::Duration interval = absl::Seconds(1);  // --interval
  std::string interval_log, interval_csv;      // --interval-log / --interval-csv FILE
  std::string metrics_listen;            // --metrics-listen ADDR:PORT
  absl::Duration metrics_hold;           // --metrics-hold DURATION
  double straggler_fraction = 0.5;       // --straggler-threshold
  std::string token_file, tls_cert, tls_key, tls_ca;
};

// Parses `args` (after "mdtest"); kCancelled for --help. Errors name the option.
absl::Status ParseMdtestArgs(const std::vector<std::string>& args, MdtestOptions* options);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_MDTEST_OPTIONS_H_
