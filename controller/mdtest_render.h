// What an mdtest run prints and saves: mdtest's SUMMARY rows (max, min, mean, population
// stddev over iterations), the text report (mdtest's tables plus iofleet's per-phase latency,
// slowest operations and per-worker rates) and mdtest's JSON document.
#ifndef IOFLEET_CONTROLLER_MDTEST_RENDER_H_
#define IOFLEET_CONTROLLER_MDTEST_RENDER_H_

#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "proto/report.pb.h"

namespace iofleet {

// One row per operation in `order` that ran: over its phases' seconds (`time`) or rates.
void SummaryRows(const std::vector<std::string>& order, const v1::MdtestReport& report, bool time,
                 google::protobuf::RepeatedPtrField<v1::MdtestSummaryRow>* rows);
std::string RenderText(const v1::MdtestReport& report);
// mdtest's JSON document (the --output-format json output and the results' result.json).
std::string MdtestJson(const google::protobuf::Message& message);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_MDTEST_RENDER_H_
