#include "controller/mdtest_render.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/units.h"
#include "controller/block_stages.h"
#include "controller/host_profiles.h"
#include "controller/report_text.h"
#include "controller/direction_summary.h"
#include "job/mdtest_warnings.h"
#include "google/protobuf/util/json_util.h"

namespace iofleet {

namespace {

constexpr const char* kDirectoryRows[] = {"Directory creation", "Directory stat", "Directory rename", "Directory removal"};
constexpr const char* kFileRows[] = {"File creation", "File stat", "File read", "File removal"};
constexpr const char* kTreeRows[] = {"Tree creation", "Tree removal"};

bool IsTreeRow(absl::string_view operation) { return operation == kTreeRows[0] || operation == kTreeRows[1]; }

// The task counts the test ran with (-f/-l/-s), in order; by default the one of all tasks.
std::vector<uint32_t> TaskCounts(const v1::MdtestReport& report) {
  std::vector<uint32_t> counts(report.task_counts().begin(), report.task_counts().end());
  if (counts.empty()) counts.push_back(report.tasks());
  return counts;
}

// Max, min and mean of a table cell's values (not empty).
struct Spread {
  double max, min, mean;
};
Spread SpreadOf(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return {*std::max_element(values.begin(), values.end()), *std::min_element(values.begin(), values.end()),
          sum / static_cast<double>(values.size())};
}

// mdtest's timestamp: "11/24/2026 18:22:40", local time.
std::string Timestamp(int64_t unix_ns) {
  return absl::FormatTime("%m/%d/%Y %H:%M:%S", absl::FromUnixNanos(unix_ns), absl::LocalTimeZone());
}

// mdtest 4's table (summarize_results_rank0): its header, then the rows, numbers ending in
// column 85. Tree rows have a wider name and no gap.
void AppendSummaryTable(const v1::MdtestReport& report, bool time, uint32_t tasks, std::string* out) {
  absl::StrAppendFormat(out, "\nSUMMARY %s: (of %d iterations)\n", time ? "time (in ms/op)" : "rate (in ops/sec)", report.iterations());
  const bool ranks = report.show_rank_statistics();
  absl::StrAppend(out, "   Operation     ", ranks ? "per Rank: Max            Min           Mean      per Iteration:" : "               ",
                  " Max            Min           Mean        Std Dev\n");
  absl::StrAppend(out, "   ---------      ", ranks ? "         ---            ---           ----       " : "",
                  "               ---            ---           ----        -------\n");
  for (const v1::MdtestSummaryRow& row : time ? report.summary_time() : report.summary_rate()) {
    if (row.tasks() != 0 && row.tasks() != tasks) continue;
    const bool tree = IsTreeRow(row.operation());
    absl::StrAppendFormat(out, tree ? "   %-22s " : "   %-18s ", row.operation());
    if (ranks) absl::StrAppendFormat(out, "%14.3f %14.3f %14.3f     ", row.rank_max(), row.rank_min(), row.rank_mean());
    if (!tree) out->append("    ");
    absl::StrAppendFormat(out, "%14.3f %14.3f %14.3f %14.3f\n", row.max(), row.min(), row.mean(), row.stddev());
  }
}

// mdtest 4's --print-all-procs (summarize_results_rank0), before each table: per iteration, every
// operation in mdtest's own numbering with each task's figure ("%e", comma-separated), from the
// file operations on with -F alone. mdtest's "Directory read" is a phase of no calls (it times
// nothing, printing inf or a huge rate) that iofleet does not run: 0 here, as any phase not run.
constexpr const char* kPerProcessOperations[] = {"Directory creation", "Directory stat", "Directory read", "Directory rename",
                                                 "Directory removal",  "File creation",  "File stat",      "File read",
                                                 "File removal",       "Tree creation",  "Tree removal"};
constexpr size_t kFirstFileOperation = 5;
constexpr size_t kFirstTreeOperation = 9;

// The phase `operation` of iteration `iteration` run with `tasks` tasks (null: not run).
const v1::MdtestPhaseResult* PhaseOf(const v1::MdtestReport& report, absl::string_view operation, uint32_t iteration, uint32_t tasks) {
  const v1::MdtestPhaseResult* ran = nullptr;
  for (const auto& p : report.phases()) {
    if (p.operation() == operation && p.iteration() == iteration && (p.tasks() == 0 || p.tasks() == tasks)) ran = &p;
  }
  return ran;
}

// Task `t`'s own rate or time in phase `p` (0 when it did not run).
double TaskFigure(const v1::MdtestPhaseResult* p, uint32_t t, bool time) {
  if (p == nullptr) return 0;
  const auto& figures = time ? p->task_seconds() : p->task_rates();
  return static_cast<int>(t) < figures.size() ? figures[static_cast<int>(t)] : 0;
}

void AppendPerProcess(const v1::MdtestReport& report, bool time, uint32_t tasks, std::string* out) {
  absl::StrAppendFormat(out, "\nPer process result (%s):\n", time ? "time" : "rate");
  for (uint32_t i = 0; i < std::max(1u, report.iterations()); ++i) {
    absl::StrAppendFormat(out, "iteration: %d\n", i);
    for (size_t k = report.dirs() ? 0 : kFirstFileOperation; k < std::size(kPerProcessOperations); ++k) {
      const v1::MdtestPhaseResult* ran = PhaseOf(report, kPerProcessOperations[k], i, tasks);
      absl::StrAppend(out, "Test ", kPerProcessOperations[k]);
      for (uint32_t t = 0; t < tasks; ++t) absl::StrAppendFormat(out, "%c%e", t == 0 ? ' ' : ',', TaskFigure(ran, t, time));
      out->append("\n");
    }
  }
}

// What mdtest prints at its default verbosity while each iteration runs, before the tables,
// phase by phase: a WARNING for each operation on an item that failed (what its tasks named;
// mdtest prints every one as it happens, each task its own, so theirs come interleaved), its
// WARNING when the file phases found no stonewall status file to read (-x without -C), and,
// after a file creation the stonewall (-W) cut short, the items the tasks had done then
// (updateStoneWallIterations: min, max, mean per task, and an empty line).
void AppendIterationLines(const v1::MdtestReport& report, uint32_t tasks, std::string* out) {
  for (uint32_t i = 0; i < std::max(1u, report.iterations()); ++i) {
    bool file_phases = false;
    for (const v1::MdtestPhaseResult& p : report.phases()) {
      if (p.iteration() != i || (p.tasks() != 0 && p.tasks() != tasks)) continue;
      const bool file_phase = std::find(std::begin(kFileRows), std::end(kFileRows), p.operation()) != std::end(kFileRows);
      if (file_phase && !file_phases && report.stonewall_status_unreadable()) out->append("WARNING: Could not read stonewall status file\n");
      file_phases |= file_phase;
      // (One entry a failure, a rename's of two lines. A task names its first few; the rest are
      // counted.)
      for (const std::string& warning : p.item_warnings()) {
        for (absl::string_view line : absl::StrSplit(warning, '\n')) absl::StrAppend(out, "WARNING: ", line, "\n");
      }
      const uint64_t named = static_cast<uint64_t>(p.item_warnings_size());
      if (p.item_failures() > named) {
        absl::StrAppendFormat(out, 
            "WARNING: %d more failed operations of %s not named (iofleet names the first %d of each task, at most %d of a worker's "
            "or relay's tasks)\n",
            p.item_failures() - named, absl::AsciiStrToLower(p.operation()), kMdtestNamedFailuresPerTask, kMdtestNamedFailuresPerWorker);
      }
      for (const std::string& left : p.iteration_directories_left()) absl::StrAppend(out, "WARNING: unable to remove directory ", left, "\n");
      if (p.operation() == kFileRows[0] && p.stonewalled()) {
        absl::StrAppendFormat(out, "Continue stonewall hit min: %d max: %d avg: %.1f \n\n", p.task_items_min(), p.task_items_max(),
                              p.task_items_mean());
      }
    }
  }
}

}  // namespace

void SummaryRows(const v1::MdtestReport& report, bool time, google::protobuf::RepeatedPtrField<v1::MdtestSummaryRow>* rows) {
  std::vector<const char*> order;
  if (report.dirs()) order.insert(order.end(), std::begin(kDirectoryRows), std::end(kDirectoryRows));
  if (report.files()) order.insert(order.end(), std::begin(kFileRows), std::end(kFileRows));
  order.insert(order.end(), std::begin(kTreeRows), std::end(kTreeRows));
  const uint32_t iterations = std::max(1u, report.iterations());
  for (uint32_t tasks : TaskCounts(report)) {
    for (const char* operation : order) {
      const bool tree = IsTreeRow(operation);
      std::vector<double> values(iterations, 0.0);  // one per iteration
      std::vector<double> own;                      // --showRankStatistics: per task and iteration
      for (uint32_t i = 0; i < iterations; ++i) {
        // The phase of the iteration (none: it did not run, and counts 0 as in mdtest's zeroed
        // table).
        const v1::MdtestPhaseResult* p = PhaseOf(report, operation, i, tasks);
        if (p != nullptr) {
          // A creation the stonewall cut short counts as mdtest counts it: every item, the
          // evening out included, over the time both took (the per-phase section has the rate
          // until the stonewall).
          const bool evened = p->wear_out_seconds() > 0 && !tree;
          const double seconds = p->seconds() + (evened ? p->wear_out_seconds() : 0.0);
          values[i] = time ? seconds : evened ? static_cast<double>(p->items() + p->wear_out_items()) / seconds : p->rate();
        }
        // mdtest's per-rank columns: every task's own figure (a phase not run: 0 for each); the
        // tree's are task 0's, which are the iterations' own.
        for (uint32_t t = 0; t < tasks && !tree; ++t) own.push_back(TaskFigure(p, t, time));
      }
      if (tree) own = values;
      v1::MdtestSummaryRow* row = rows->Add();
      row->set_operation(operation);
      row->set_tasks(tasks);
      if (!own.empty()) {
        const Spread ranks = SpreadOf(own);
        row->set_rank_max(ranks.max);
        row->set_rank_min(ranks.min);
        row->set_rank_mean(ranks.mean);
      }
      const Spread spread = SpreadOf(values);
      row->set_max(spread.max);
      row->set_min(spread.min);
      row->set_mean(spread.mean);
      double var = 0;
      for (double v : values) var += (v - spread.mean) * (v - spread.mean);
      // mdtest 4: the sample standard deviation (n - 1), 0 for a single iteration.
      row->set_stddev(values.size() > 1 ? std::sqrt(var / static_cast<double>(values.size() - 1)) : 0.0);
    }
  }
}

std::string RenderRankDetailsCsv(const v1::MdtestReport& report) {
  // mdtest 4's --saveRankPerformanceDetails (its header at the start, then StoreRankInformation
  // after each task count's test): a line "all" of the first iteration's phases (every task's
  // items over the phase's time; its items column is the items per task), then each
  // iteration's line per task of the item phases (its items column empty). A phase not run has
  // two empty cells, as one of no items in mdtest (and "Directory read", a phase of no calls
  // iofleet does not run).
  std::string csv = "rank,items";
  for (const char* operation : kPerProcessOperations) absl::StrAppend(&csv, ",rate-", operation, ",time-", operation);
  csv.append("\n");
  auto cells = [&csv](double rate, double seconds) {
    if (rate > 0) {
      absl::StrAppendFormat(&csv, ",%.10e,%.10e", rate, seconds);
    } else {
      csv.append(",,");
    }
  };
  for (uint32_t tasks : TaskCounts(report)) {
    absl::StrAppend(&csv, "all,", report.items_per_task());
    for (const char* operation : kPerProcessOperations) {
      const v1::MdtestPhaseResult* p = PhaseOf(report, operation, 0, tasks);
      cells(p != nullptr && p->items() > 0 ? p->rate() : 0, p != nullptr ? p->seconds() : 0);
    }
    csv.append("\n");
    for (uint32_t i = 0; i < std::max(1u, report.iterations()); ++i) {
      for (uint32_t t = 0; t < tasks; ++t) {
        absl::StrAppend(&csv, t, ",");
        for (size_t k = 0; k < kFirstTreeOperation; ++k) {
          const v1::MdtestPhaseResult* p = PhaseOf(report, kPerProcessOperations[k], i, tasks);
          cells(TaskFigure(p, t, false), TaskFigure(p, t, true));
        }
        csv.append("\n");
      }
    }
  }
  return csv;
}

std::string RenderText(const v1::MdtestReport& report) {
  // mdtest 4's output, line for line (mdtest.c's mdtest_run), but for the tool's name.
  std::string out;
  // mdtest's DUMMY backend says so as each task (rank) sets it up, and again as it ends.
  const bool dummy = report.api() == "DUMMY";
  if (dummy) {
    for (uint32_t t = 0; t < report.tasks(); ++t) out.append("WARNING: DUMMY initialized\n");
  }
  absl::StrAppend(&out, "-- started at ", Timestamp(report.started_unix_ns()), " --\n\n");
  absl::StrAppendFormat(&out, "iofleet-mdtest-%s was launched with %d total task(s) on %d node(s)\n", report.tool_version(), report.tasks(),
                        report.nodes());
  absl::StrAppend(&out, "Command line used: ", report.command_line(), "\n");
  for (const std::string& warning : report.warnings()) absl::StrAppend(&out, "WARNING: ", warning, "\n");
  if (!report.nodemap().empty()) absl::StrAppend(&out, "Nodemap: ", report.nodemap(), "\n");
  if (!report.test_path().empty()) absl::StrAppendFormat(&out, "%-20s: %s\n", "Path", report.test_path());
  if (const v1::TargetFacts& fs = report.test_target(); fs.fs_bytes() > 0 && fs.fs_inodes() > 0) {
    double size = static_cast<double>(fs.fs_bytes()) / static_cast<double>(1ull << 30);
    const char* unit = "GiB";
    if (size > 1024) {
      size = static_cast<double>(fs.fs_bytes()) / static_cast<double>(1ull << 40);
      unit = "TiB";
    }
    absl::StrAppendFormat(&out, "%-20s: %.1f %s   Used FS: %2.1f%%   ", "FS", size, unit,
                          (1 - static_cast<double>(fs.fs_free_bytes()) / static_cast<double>(fs.fs_bytes())) * 100);
    absl::StrAppendFormat(&out, "Inodes: %.1f Mi   Used Inodes: %2.1f%%\n", static_cast<double>(fs.fs_inodes()) / static_cast<double>(1 << 20),
                          (1 - static_cast<double>(fs.fs_free_inodes()) / static_cast<double>(fs.fs_inodes())) * 100);
  }
  if (report.stride() > 0) {
    // mdtest's own words, with its source line (a number, like the others).
    absl::StrAppendFormat(&out, "V-0: Rank   0 Line  2594 Shifting ranks by %d for each phase.\n", report.stride());
  }
  if (report.random_seed() > 0) absl::StrAppendFormat(&out, "random seed: %d\n", report.random_seed());
  // A line and the tables per task count (-f/-l/-s; by default the one of all tasks).
  for (uint32_t tasks : TaskCounts(report)) {
    if (report.items_kind() == "file") {
      absl::StrAppendFormat(&out, "%d tasks, 1 file\n", tasks);
    } else {
      absl::StrAppendFormat(&out, "%d tasks, %d %s\n", tasks, uint64_t{tasks} * report.items_all_per_task(), report.items_kind());
    }
    AppendIterationLines(report, tasks, &out);
    for (const bool time : {false, true}) {
      if (!(time ? report.print_time() : report.print_rate())) continue;
      if (report.print_all_procs()) AppendPerProcess(report, time, tasks, &out);
      AppendSummaryTable(report, time, tasks, &out);
    }
  }
  if (report.verification_errors() > 0) {
    absl::StrAppendFormat(&out, "\nERROR: verifying the data on read (%d errors)! Take the performance values with care!\n\n",
                          report.verification_errors());
  }
  absl::StrAppend(&out, "-- finished at ", Timestamp(report.finished_unix_ns()), " --\n\n");
  if (dummy) {
    for (uint32_t t = 0; t < report.tasks(); ++t) out.append("WARNING: DUMMY finalized\n");
    out.append("\n");
  }

  // iofleet's own, after mdtest's output.
  absl::StrAppend(&out, "Per phase (iofleet): each iteration's rate (the SUMMARY's figures), latency of single operations from merged\n"
                        "histograms, items per task\n");
  absl::StrAppendFormat(&out, "   %-4s %-20s %10s %10s %14s %10s %10s %10s %10s %10s  %s\n", "iter", "operation", "items", "seconds", "rate", "p50",
                        "p90", "p99", "p99.9", "max", "items/task min-max");
  auto pct = [](const v1::LatencySummary& lat, double p) {
    const std::optional<uint64_t> value = FindPercentile(lat, p);
    return value ? FormatDurationNs(static_cast<double>(*value)) : std::string("-");
  };
  for (const auto& p : report.phases()) {
    absl::StrAppendFormat(&out, "   %-4d %-20s %10d %10.3f %14.3f %10s %10s %10s %10s %10s  %d-%d%s\n", p.iteration(), p.operation(), p.items(),
                          p.seconds(), p.rate(), pct(p.latency(), 50), pct(p.latency(), 90), pct(p.latency(), 99), pct(p.latency(), 99.9),
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
  // The system under test's view: its endpoints beside the phases' rates above.
  AppendTargetMetricsText(report.target_metrics(), "", &out);
  // mdtest's jobs are its phases (spec order); the records name the operations they ran.
  AppendProfilesText(report.profiles(), &out);
  AppendBlockStagesText(report.block_devices(), [](uint32_t) { return std::string(); }, &out);
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
