// Renders a RunReport as text in fio's spirit: per job and for the whole cluster, IOPS,
// bandwidth, latency summary and the percentile table, then a per-worker table so a
// straggler stands out. Presentation only: every number comes from the RunReport.
#ifndef IOFLEET_CONTROLLER_REPORT_TEXT_H_
#define IOFLEET_CONTROLLER_REPORT_TEXT_H_

#include <string>

#include "proto/report.pb.h"

namespace iofleet {

std::string RenderTextReport(const v1::RunReport& report);

// --target-metrics: each endpoint's highlights and problems, after `clients` (the clients'
// view in one line; empty: none). Nothing without targets.
void AppendTargetMetricsText(const google::protobuf::RepeatedPtrField<v1::TargetMetricsResult>& targets, const std::string& clients,
                             std::string* out);

// The report as one JSON document (protobuf's JSON mapping; 64-bit integers are strings).
std::string RenderJsonReport(const v1::RunReport& report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_REPORT_TEXT_H_
