// fio's JSON layout: fio's keys at the top in fio's order, and iofleet's own report under
// "iofleet" exactly as result.json has it.
#include "controller/report_fio_json.h"

#include <string>

#include "controller/report_text.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

v1::RunReport SampleReport(int workers) {
  v1::RunReport report;
  report.set_tool("iofleet");
  report.set_tool_version("0.1.0 \"test\"");
  report.set_run_id("r-1");
  report.set_start_unix_ns(1795843373527000000);
  report.set_interval_ns(1000000000);
  v1::JobResult* job = report.add_jobs();
  job->set_name("seq \"read\"\n\ttab");  // escaped in both parts
  job->set_rw("read");
  job->set_elapsed_ns(2000000000);
  v1::DirectionResult* read = job->add_directions();
  read->set_direction("read");
  read->set_ops(1000);
  read->set_bytes(4096000);
  read->set_iops(500);
  read->mutable_histogram()->add_bucket_index(100);
  read->mutable_histogram()->add_bucket_count(1000);
  read->mutable_histogram()->set_count(1000);
  read->mutable_histogram()->set_sum_ns(100000);
  read->mutable_latency()->set_min_ns(100);
  read->mutable_latency()->set_max_ns(100);
  for (int w = 0; w < workers; ++w) {
    v1::WorkerResult* result = job->add_workers();
    result->set_worker("127.0.0.1:" + std::to_string(7000 + w));
    *result->add_directions() = *read;
    report.add_workers()->set_address(result->worker());
  }
  for (int i = 0; i < 3; ++i) {
    v1::IntervalResult* interval = job->add_intervals();
    interval->set_interval_index(i);
    interval->set_start_unix_ns(report.start_unix_ns() + i * report.interval_ns());
    interval->set_end_unix_ns(interval->start_unix_ns() + report.interval_ns());
    *interval->add_directions() = *read;
  }
  return report;
}

google::protobuf::Struct Parse(const std::string& json) {
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok()) << json.substr(0, 2000);
  return parsed;
}

TEST(FioJsonReport, FioKeysInFioOrderAndIofleetsReportAsResultJsonHasIt) {
  for (bool plus : {false, true}) {
    const v1::RunReport report = SampleReport(3);
    const std::string json = RenderFioJsonReport(report, plus);
    const google::protobuf::Struct parsed = Parse(json);
    size_t last = 0;
    for (const char* key : {"fio version", "timestamp", "timestamp_ms", "time", "jobs", "disk_util", "iofleet"}) {
      const size_t at = json.find(std::string("\n \"") + key + "\": ");
      ASSERT_NE(at, std::string::npos) << key;
      EXPECT_GT(at, last) << key << " out of fio's order";
      last = at;
      EXPECT_TRUE(parsed.fields().contains(key)) << key;
    }
    EXPECT_EQ(parsed.fields().size(), 7u);
    EXPECT_EQ(parsed.fields().at("fio version").string_value(), "iofleet-0.1.0 \"test\"");
    EXPECT_EQ(parsed.fields().at("timestamp_ms").number_value(), 1795843373527.0);
    const auto& jobs = parsed.fields().at("jobs").list_value();
    ASSERT_EQ(jobs.values_size(), 1);
    EXPECT_EQ(jobs.values(0).struct_value().fields().at("jobname").string_value(), "seq \"read\"\n\ttab");
    EXPECT_EQ(jobs.values(0).struct_value().fields().at("read").struct_value().fields().at("total_ios").number_value(), 1000);
    EXPECT_EQ(jobs.values(0).struct_value().fields().at("read").struct_value().fields().contains("clat_ns"), true);

    // "iofleet" is the report itself, every field of it.
    std::string iofleet_json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(parsed.fields().at("iofleet"), &iofleet_json).ok());
    v1::RunReport back;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(iofleet_json, &back).ok());
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, report)) << back.DebugString();
    // Printed as result.json prints it, one level in.
    std::string nested;
    for (char c : RenderJsonReport(report)) {
      nested.push_back(c);
      if (c == '\n') nested.push_back(' ');
    }
    while (!nested.empty() && (nested.back() == ' ' || nested.back() == '\n')) nested.pop_back();
    EXPECT_NE(json.find("\n \"iofleet\": " + nested + "\n}\n"), std::string::npos);
  }
}

TEST(FioJsonReport, TheCallersRenderingOfTheReportIsTheSame) {
  const v1::RunReport report = SampleReport(40);
  const std::string native = RenderJsonReport(report);
  for (bool plus : {false, true}) {
    // (fio's objects are Structs, whose keys print in no fixed order: compared parsed.)
    const std::string given = RenderFioJsonReport(report, plus, native);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(Parse(given), Parse(RenderFioJsonReport(report, plus))));
  }
}

}  // namespace
}  // namespace iofleet
