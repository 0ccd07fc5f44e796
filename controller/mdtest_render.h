// What an mdtest run prints and saves: mdtest's SUMMARY rows (max, min, mean and sample
// standard deviation over iterations, as mdtest 4 computes them), the text report (mdtest 4's
// output line for line, then iofleet's own sections: per-phase latency, slowest operations,
// per-worker rates) and the JSON document.
#ifndef IOFLEET_CONTROLLER_MDTEST_RENDER_H_
#define IOFLEET_CONTROLLER_MDTEST_RENDER_H_

#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "proto/report.pb.h"

namespace iofleet {

// mdtest 4's SUMMARY rows: directory operations (report.dirs()), file operations
// (report.files()), then tree creation and removal, every one whether it ran or not (0 for an
// iteration it did not run in): over the iterations' phase seconds (`time`) or rates.
void SummaryRows(const v1::MdtestReport& report, bool time, google::protobuf::RepeatedPtrField<v1::MdtestSummaryRow>* rows);
std::string RenderText(const v1::MdtestReport& report);
// mdtest's --saveRankPerformanceDetails CSV of the run.
std::string RenderRankDetailsCsv(const v1::MdtestReport& report);
// mdtest's JSON document (the --output-format json output and the results' result.json).
std::string MdtestJson(const google::protobuf::Message& message);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_MDTEST_RENDER_H_
