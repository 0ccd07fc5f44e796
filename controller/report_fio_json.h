// fio's JSON output layout, rendered from a RunReport, so scripts written for fio
// (`jobs[].read.iops`, `jobs[].write.clat_ns.percentile["99.000000"]`, `bw`, `io_bytes`,
// `runtime`, `lat_ns`, `job options`) read iofleet's cluster results unchanged. Everything
// iofleet knows beyond fio (per-worker results, intervals, raw histograms) is under "iofleet".
#ifndef IOFLEET_CONTROLLER_REPORT_FIO_JSON_H_
#define IOFLEET_CONTROLLER_REPORT_FIO_JSON_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

#include "proto/report.pb.h"

namespace iofleet {

// `plus`: fio's json+, which adds each job's clat histogram bins. `native_json`: the report as
// RenderJsonReport printed it, when the caller has it already (else printed here).
std::string RenderFioJsonReport(const v1::RunReport& report, bool plus, std::optional<absl::string_view> native_json = std::nullopt);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_REPORT_FIO_JSON_H_
