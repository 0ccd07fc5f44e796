// The interval-log lines as LiveView writes them: names that come from users (job sections,
// file paths) stay one valid JSON value and one CSV row, and the latency figures are there.
#include "controller/live_view.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/direction_summary.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "histogram/latency_histogram.h"

namespace iofleet {
namespace {

PublishedInterval WorkerInterval() {
  PublishedInterval in;
  in.scope = PublishedInterval::Scope::kWorker;
  in.job = 0;
  in.worker = 0;
  in.start_unix_ns = 1'000'000'000;
  in.end_unix_ns = 2'000'000'000;
  in.workers_reporting = in.workers_expected = 1;
  LatencyHistogram latency;
  for (uint64_t ns = 1000; ns <= 100'000; ns += 1000) latency.Record(ns);
  v1::DirectionStats& read = in.directions[0];
  read.set_ops(100);
  read.set_bytes(100 * 4096);
  *read.mutable_latency() = latency.ToProto();
  v1::SlowRequest* slow = read.add_slowest();
  slow->set_latency_ns(100'000);
  slow->set_worker("host:1");
  slow->set_file("/mnt/x/\"odd\",name\\.dat");
  slow->set_offset(4096);
  return in;
}

TEST(LiveView, LogLinesKeepUserNamesIntact) {
  v1::RunSpec spec;
  spec.add_jobs()->set_name("a,b\"c\\d");
  LiveView view(spec, {"host:1"}, "r-1", LiveViewOptions{.progress = false});
  const PublishedInterval in = WorkerInterval();

  google::protobuf::Struct line;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(view.JsonLine(in, 0), &line).ok()) << view.JsonLine(in, 0);
  const auto& f = line.fields();
  EXPECT_EQ(f.at("job").string_value(), "a,b\"c\\d");
  EXPECT_EQ(f.at("host").string_value(), "host:1");
  const auto& slowest = f.at("slowest").list_value().values(0).struct_value().fields();
  EXPECT_EQ(slowest.at("file").string_value(), "/mnt/x/\"odd\",name\\.dat");
  EXPECT_EQ(slowest.at("offset").number_value(), 4096);
  const auto& lat = f.at("lat_ns").struct_value().fields();
  EXPECT_NEAR(lat.at("p90").number_value(), 90'000, 90'000 * 0.008);
  EXPECT_NEAR(lat.at("stddev").number_value(), 29'011, 300);  // sample stddev of 1..100 µs
  EXPECT_EQ(lat.at("mean").number_value(), 50'500);

  // CSV: the job name is one quoted field (quotes doubled), p90 and stddev are the last columns.
  const std::string row = view.CsvRow(in, 0);
  EXPECT_THAT(row, ::testing::StartsWith("r-1,worker,0,\"a,b\"\"c\\d\",host:1,read,"));
  EXPECT_THAT(std::string(LiveView::CsvHeader()), ::testing::EndsWith(",lat_p90_ns,lat_stddev_ns\n"));
}

// Rates and the standard deviation read as printf's %.3f and %.1f write them, whatever the value
// (the logs format them without printf; a reader comparing with fio's logs sees the same digits).
TEST(LiveView, FiguresAsPrintfWritesThem) {
  v1::RunSpec spec;
  spec.add_jobs()->set_name("j");
  LiveView view(spec, {"host:1"}, "r-1", LiveViewOptions{.progress = false});
  for (const auto& [ops, bytes, span_ns] : {std::tuple<uint64_t, uint64_t, int64_t>{2, 8192, 3'000'000'000},
                                            {1, 5, 7'000'000'000},
                                            {123456789, 999'999'999'999'999, 1'000'000'001},
                                            {0, 0, 1'000'000'000},
                                            {7, 1ull << 62, 1}}) {
    PublishedInterval in = WorkerInterval();
    in.end_unix_ns = in.start_unix_ns + span_ns;
    in.directions[0].set_ops(ops);
    in.directions[0].set_bytes(bytes);
    const double seconds = static_cast<double>(span_ns) / 1e9;
    const std::string iops = absl::StrFormat("%.3f", static_cast<double>(ops) / seconds);
    const std::string bw = absl::StrFormat("%.3f", static_cast<double>(bytes) / seconds);
    const std::string stddev = absl::StrFormat("%.1f", StddevNs(in.directions[0].latency().count(), in.directions[0].latency().sum_ns(),
                                                                 in.directions[0].latency().sum_squares_ns2()));
    EXPECT_THAT(view.JsonLine(in, 0), ::testing::HasSubstr(absl::StrCat("\"iops\":", iops, ",\"bw_bytes\":", bw, ",")));
    EXPECT_THAT(view.JsonLine(in, 0), ::testing::HasSubstr(absl::StrCat("\"stddev\":", stddev, ",")));
    EXPECT_THAT(view.CsvRow(in, 0), ::testing::HasSubstr(absl::StrCat(",", iops, ",", bw, ",")));
    EXPECT_THAT(view.CsvRow(in, 0), ::testing::EndsWith(absl::StrCat(",", stddev, "\n")));
  }
}

// What a run of `workers` workers (one job, one interval each) leaves in the NDJSON log: its
// lines counted by scope.
std::map<std::string, int> LoggedScopes(size_t workers, std::optional<bool> worker_lines) {
  v1::RunSpec spec;
  spec.add_jobs()->set_name("j");
  std::vector<std::string> addresses;
  for (size_t w = 0; w < workers; ++w) addresses.push_back(absl::StrCat("127.0.0.1:", 30000 + w));
  const std::string log = absl::StrCat(::testing::TempDir(), "/intervals-", workers, "-", worker_lines.value_or(2), ".ndjson");
  RunAggregator aggregator(spec, addresses);
  LiveView view(spec, addresses, "r-1", LiveViewOptions{.progress = false, .interval_log = log, .worker_lines = worker_lines});
  EXPECT_TRUE(view.Start(&aggregator).ok());
  // An interval ending an hour from now: published whole when the view finishes, not by its
  // loop meanwhile (and then amended) as one already past its grace would be.
  const int64_t start = absl::ToUnixNanos(absl::Now() + absl::Hours(1));
  aggregator.MarkStarted(0, start);
  for (size_t w = 0; w < workers; ++w) {
    v1::IntervalReport report;
    report.set_job_index(0);
    report.set_interval_index(0);
    report.set_start_unix_ns(start);
    report.set_end_unix_ns(start + 1'000'000'000);
    v1::DirectionStats* read = report.add_directions();
    read->set_direction(v1::READ);
    read->set_ops(1);
    read->set_bytes(4096);
    LatencyHistogram latency;
    latency.Record(5000 + w);
    *read->mutable_latency() = latency.ToProto();
    aggregator.Add(w, {report});
  }
  EXPECT_TRUE(view.Finish().ok());
  std::map<std::string, int> scopes;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    google::protobuf::Struct value;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(line, &value).ok()) << line;
    ++scopes[value.fields().at("scope").string_value()];
  }
  std::remove(log.c_str());
  return scopes;
}

// Each worker's own lines are in the log up to kWorkerIntervalLinesAuto workers, not beyond
// (the cluster's and the job's always are), and --worker-intervals decides either way.
TEST(LiveView, WorkerLinesInTheLogByDefaultOnlyForAFewWorkers) {
  using Scopes = std::map<std::string, int>;
  const size_t few = kWorkerIntervalLinesAuto, many = kWorkerIntervalLinesAuto + 1;
  EXPECT_EQ(LoggedScopes(few, std::nullopt), (Scopes{{"cluster", 1}, {"job", 1}, {"worker", static_cast<int>(few)}}));
  EXPECT_EQ(LoggedScopes(many, std::nullopt), (Scopes{{"cluster", 1}, {"job", 1}}));
  EXPECT_EQ(LoggedScopes(many, true), (Scopes{{"cluster", 1}, {"job", 1}, {"worker", static_cast<int>(many)}}));
  EXPECT_EQ(LoggedScopes(2, false), (Scopes{{"cluster", 1}, {"job", 1}}));
}

}  // namespace
}  // namespace iofleet
