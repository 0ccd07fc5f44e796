// fio's JSON output layout, rendered from a RunReport, so scripts written for fio
// (`jobs[].read.iops`, `jobs[].write.clat_ns.percentile["99.000000"]`, `bw`, `io_bytes`,
// `runtime`, `lat_ns`, `job options`) read iofleet's cluster results unchanged. Everything
// iofleet knows beyond fio (per-worker results, intervals, raw histograms) is under "iofleet".
#ifndef IOFLEET_CONTROLLER_REPORT_FIO_JSON_H_
#define IOFLEET_CONTROLLER_REPORT_FIO_JSON_H_

#include <string>

#include "proto/report.pb.h"

namespace iofleet {

// `plus`: fio's json+, which adds each job's clat histogram bins.
std::string RenderFioJsonReport(const v1::RunReport& report, bool plus);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_REPORT_FIO_JSON_H_
