// `iofleet mdtest [mdtest options]`: mdtest's metadata test run across the cluster without
// MPI. Tasks = workers x --tasks-per-worker, numbered as MPI ranks would be; every phase
// (tree creation, directory create/stat/rename/remove, file create/stat/read/remove, tree
// removal, and --readdir) starts on every task at one instant and lasts until the last task
// is done; rates are items / phase time. Prints mdtest's SUMMARY tables, then per-phase
// latency percentiles and per-worker rates; --output-format json gives all of it.
#ifndef IOFLEET_CONTROLLER_MDTEST_COMMAND_H_
#define IOFLEET_CONTROLLER_MDTEST_COMMAND_H_

#include <string>
#include <utility>
#include <vector>

#include "controller/mdtest_options.h"
#include "metrics/interval_metrics.h"
#include "proto/job.pb.h"
#include "proto/report.pb.h"

namespace iofleet {

// Exit codes as `iofleet run`: 0 success, 1 failed or incomplete, 2 bad input.
int RunMdtest(const std::vector<std::string>& args);

// The files of an mdtest results directory other than its logs: command.txt (the test as
// given), job-resolved.json (`resolved`: every phase as sent to the workers), result.json,
// report.txt, report.html, hosts.json.
std::vector<std::pair<std::string, std::string>> MdtestResultFiles(const std::string& command_line, const v1::RunSpec& resolved,
                                                                   const v1::MdtestReport& report);

// Runs the test `o` describes (its interval logs where o.session says; Prometheus into
// `metrics` if given) and fills `report` without printing it (errors that stop it early are
// printed; the progress line goes to stderr unless --quiet); *ran says whether workers ran.
// Returns the exit code RunMdtest would. `resolved`, if given, gets the phases as run.
int ExecuteMdtest(MdtestOptions o, const std::string& command_line, v1::MdtestReport* report, bool* ran,
                  IntervalMetrics* metrics = nullptr, v1::RunSpec* resolved = nullptr);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_MDTEST_COMMAND_H_
