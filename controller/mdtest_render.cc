#include "controller/mdtest_render.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/units.h"
#include "controller/direction_summary.h"
#include "google/protobuf/util/json_util.h"

namespace iofleet {

void SummaryRows(const std::vector<std::string>& order, const v1::MdtestReport& report, bool time,
                 google::protobuf::RepeatedPtrField<v1::MdtestSummaryRow>* rows) {
  for (const std::string& operation : order) {
    std::vector<double> values;
    for (const auto& p : report.phases()) {
      if (p.operation() == operation) values.push_back(time ? p.seconds() : p.rate());
    }
    if (values.empty()) continue;
    v1::MdtestSummaryRow* row = rows->Add();
    row->set_operation(operation);
    row->set_max(*std::max_element(values.begin(), values.end()));
    row->set_min(*std::min_element(values.begin(), values.end()));
    double mean = 0, var = 0;
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
    for (double v : values) var += (v - mean) * (v - mean);
    row->set_mean(mean);
    row->set_stddev(std::sqrt(var / static_cast<double>(values.size())));  // mdtest: population
  }
}

std::string RenderText(const v1::MdtestReport& report) {
  std::string out;
  absl::StrAppendFormat(&out, "iofleet mdtest %s: %d tasks on %d workers, %d iteration(s)\n", report.tool_version(), report.tasks(),
                        report.workers_size(), report.iterations());
  absl::StrAppend(&out, "Command line used: ", report.command_line(), "\n");
  absl::StrAppendFormat(&out, "%d tasks, %d items per task\n", report.tasks(), report.items_per_task());
  for (int summary = 0; summary < 2; ++summary) {
    const auto& rows = summary == 0 ? report.summary_rate() : report.summary_time();
    absl::StrAppendFormat(&out, "\nSUMMARY %s: (of %d iterations)\n", summary == 0 ? "rate" : "time", report.iterations());
    absl::StrAppend(&out, "   Operation                      Max            Min           Mean        Std Dev\n");
    absl::StrAppend(&out, "   ---------                      ---            ---           ----        -------\n");
    for (const auto& row : rows) {
      absl::StrAppendFormat(&out, "   %-26s: %14.3f %14.3f %14.3f %14.3f\n", row.operation(), row.max(), row.min(), row.mean(), row.stddev());
    }
  }
  absl::StrAppend(&out, "\nPer phase (iofleet): latency of single operations from merged histograms, items per task\n");
  absl::StrAppendFormat(&out, "   %-4s %-20s %10s %10s %10s %10s %10s %10s  %s\n", "iter", "operation", "items", "p50", "p90", "p99", "p99.9", "max", "items/task min-max");
  auto pct = [](const v1::LatencySummary& lat, double p) {
    const std::optional<uint64_t> value = FindPercentile(lat, p);
    return value ? FormatDurationNs(static_cast<double>(*value)) : std::string("-");
  };
  for (const auto& p : report.phases()) {
    absl::StrAppendFormat(&out, "   %-4d %-20s %10d %10s %10s %10s %10s %10s  %d-%d%s\n", p.iteration(), p.operation(), p.items(),
                          pct(p.latency(), 50), pct(p.latency(), 90), pct(p.latency(), 99), pct(p.latency(), 99.9),
                          FormatDurationNs(static_cast<double>(p.latency().max_ns())), p.task_items_min(), p.task_items_max(),
                          !p.stonewalled()             ? ""
                          : p.wear_out_seconds() > 0 ? absl::StrFormat("  STONEWALLED, then %d more in %.3f s (wear-out, not counted)",
                                                                       p.wear_out_items(), p.wear_out_seconds())
                                                     : "  STONEWALLED");
  }
  absl::StrAppend(&out, "\nSlowest operation per phase (the JSON has up to 10)\n");
  for (const auto& p : report.phases()) {
    if (p.slowest().empty()) continue;
    const v1::SlowRequest& r = p.slowest(0);
    absl::StrAppendFormat(&out, "   %-4d %-20s %10s at %s UTC  %s thread %d  %s\n", p.iteration(), p.operation(),
                          FormatDurationNs(static_cast<double>(r.latency_ns())),
                          absl::FormatTime("%H:%M:%E3S", absl::FromUnixNanos(r.complete_unix_ns()), absl::UTCTimeZone()), r.worker(), r.thread(),
                          r.file());
  }
  absl::StrAppend(&out, "\nPer worker (items/s), a slow client shows here\n");
  for (const auto& p : report.phases()) {
    for (const auto& w : p.workers()) {
      const double seconds = static_cast<double>(w.elapsed_ns()) / 1e9;
      uint64_t items = 0;
      for (const auto& d : w.directions()) items += d.ops();
      absl::StrAppendFormat(&out, "   %-4d %-20s %-28s %14.3f\n", p.iteration(), p.operation(), w.worker(), seconds > 0 ? static_cast<double>(items) / seconds : 0.0);
    }
  }
  if (!report.problems().empty()) {
    absl::StrAppend(&out, "\nPROBLEMS:\n");
    for (const auto& problem : report.problems()) absl::StrAppend(&out, "  - ", problem, "\n");
  }
  return out;
}

std::string MdtestJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string text;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return text;
}

}  // namespace iofleet
