// The interval-log lines as LiveView writes them: names that come from users (job sections,
// file paths) stay one valid JSON value and one CSV row, and the latency figures are there.
#include "controller/live_view.h"

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

}  // namespace
}  // namespace iofleet
