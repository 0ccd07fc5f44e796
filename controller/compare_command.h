// `iofleet compare`: the same job (or mdtest options) on several targets — a local path vs an
// NFS export, say — with the same workers, in one side-by-side table with each target's ratio
// to the first; or earlier result files compared the same way. With --repeat N the runs are
// interleaved (A B A B ...) and the table gives the median and min-max, flagging differences
// within the spread as not significant.
#ifndef IOFLEET_CONTROLLER_COMPARE_COMMAND_H_
#define IOFLEET_CONTROLLER_COMPARE_COMMAND_H_

#include <string>
#include <vector>

#include "proto/report.pb.h"

namespace iofleet {

int RunCompare(const std::vector<std::string>& args);

// The metrics of one run, by name, for the table (exposed for tests).
std::vector<std::pair<std::string, double>> RunMetrics(const v1::RunReport& report);
std::vector<std::pair<std::string, double>> MdtestMetrics(const v1::MdtestReport& report);
// Fills medians, ranges, ratios and significance from the samples.
void Summarize(v1::CompareReport* report);
// The comparison table as printed.
std::string RenderCompareText(const v1::CompareReport& report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_COMPARE_COMMAND_H_
