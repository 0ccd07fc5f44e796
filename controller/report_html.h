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
// An mdtest run: rate per phase, p50/p99 latency of the single operations per phase (log
// scale), rate per worker per phase, and the host facts table.
std::string RenderMdtestHtmlReport(const v1::MdtestReport& report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_REPORT_HTML_H_
