// The run as one self-contained HTML page (no scripts, fonts or network: inline SVG charts
// drawn here): cluster IOPS and bandwidth over time, p50/p99/p99.9 latency over time, each
// worker's throughput over time (a straggler stands out), the latency distribution on a log
// scale, and the host facts table.
#ifndef IOFLEET_CONTROLLER_REPORT_HTML_H_
#define IOFLEET_CONTROLLER_REPORT_HTML_H_

#include <string>

#include "proto/report.pb.h"

namespace iofleet {

std::string RenderHtmlReport(const v1::RunReport& report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_REPORT_HTML_H_
