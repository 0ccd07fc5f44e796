#include "common/pretty_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"

namespace iofleet {
namespace {

google::protobuf::util::JsonPrintOptions ReportOptions() {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  return options;
}

std::string Reference(const google::protobuf::Message& message, const google::protobuf::util::JsonPrintOptions& options) {
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &json, options).ok());
  return json;
}

void AddDirection(int seed, google::protobuf::RepeatedPtrField<v1::DirectionResult>* directions) {
  v1::DirectionResult* d = directions->Add();
  d->set_direction(seed % 2 ? "write" : "read");
  d->set_ops(1000 + seed);
  d->set_bytes(4096ull * (1000 + seed));
  d->set_iops(1000.25 + seed);
  d->mutable_latency()->set_max_ns(seed * 7);
  d->mutable_latency()->set_mean_ns(seed * 0.5);
  d->mutable_histogram()->add_bucket_index(seed);
  d->mutable_histogram()->add_bucket_count(3);
  d->mutable_histogram()->set_count(3);
}

// A report shaped as a large run's: workers, jobs with a result per worker and intervals with
// a line per worker, a group; strings a printer must escape; fields left empty or unset.
v1::RunReport LargeReport(int workers, int jobs) {
  v1::RunReport report;
  report.set_tool("iofleet");
  report.set_run_id("r-1");
  report.set_job_source("/tmp/a \"quoted\"\nname\\with \x01 control and ünïcode");
  report.set_interval_ns(1000000000);
  for (int w = 0; w < workers; ++w) {
    v1::WorkerInfo* info = report.add_workers();
    info->set_address(absl::StrCat("10.0.0.", w, ":7070"));
    info->set_cores(w % 3);  // some 0: printed all the same
    if (w % 2) info->add_differs(absl::StrCat("scheduler of /dev/vda: kyber, others: \"none\" ", w));
  }
  for (int j = 0; j < jobs; ++j) {
    v1::JobResult* job = report.add_jobs();
    job->set_name(absl::StrCat("job", j));
    job->set_usr_cpu(12.5 + j);
    AddDirection(j, job->mutable_directions());
    for (int w = 0; w < workers; ++w) {
      v1::WorkerResult* result = job->add_workers();
      result->set_worker(absl::StrCat("10.0.0.", w, ":7070"));
      AddDirection(w + j, result->mutable_directions());
      if (w % 5 == 0) result->add_notes("a note");
    }
    for (int i = 0; i < 3; ++i) {
      v1::IntervalResult* interval = job->add_intervals();
      interval->set_interval_index(i);
      for (int w = 0; w < workers; ++w) interval->add_workers()->set_worker(absl::StrCat(w));
    }
  }
  v1::GroupResult* group = report.add_groups();
  for (int w = 0; w < workers; ++w) group->add_workers()->set_worker(absl::StrCat(w));
  report.add_problems("worker 10.0.0.3:7070 was lost");
  return report;
}

TEST(PrettyJsonInPieces, SameTextAsProtobufsPrinterWhateverThePieceSize) {
  const v1::RunReport report = LargeReport(40, 3);
  const std::string reference = Reference(report, ReportOptions());
  // From everything split down to single elements to nothing split at all.
  for (size_t piece : {size_t{0}, size_t{1}, size_t{64}, size_t{1000}, size_t{20000}, size_t{1} << 30}) {
    absl::StatusOr<std::string> json = PrettyJsonInPieces(report, ReportOptions(), piece);
    ASSERT_TRUE(json.ok()) << json.status();
    EXPECT_EQ(*json, reference) << "piece_bytes " << piece;
  }
}

TEST(PrettyJsonInPieces, LargeFieldFirstLastOrAloneAndCamelCaseNames) {
  v1::RunReport only_workers;
  for (int w = 0; w < 50; ++w) only_workers.add_workers()->set_address(absl::StrCat(w));
  google::protobuf::util::JsonPrintOptions camel = ReportOptions();
  camel.preserve_proto_field_names = false;  // workersCompleted, jobSource, ...
  for (const auto& options : {ReportOptions(), camel}) {
    for (const v1::RunReport& report : {only_workers, LargeReport(30, 1), v1::RunReport()}) {
      absl::StatusOr<std::string> json = PrettyJsonInPieces(report, options, 16);
      ASSERT_TRUE(json.ok()) << json.status();
      EXPECT_EQ(*json, Reference(report, options));
    }
  }
}

TEST(PrettyJsonInPieces, OtherOptionsArePrintedAsProtobufDoes) {
  const v1::RunReport report = LargeReport(10, 2);
  google::protobuf::util::JsonPrintOptions compact = ReportOptions();
  compact.add_whitespace = false;
  absl::StatusOr<std::string> json = PrettyJsonInPieces(report, compact, 16);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, Reference(report, compact));
}

}  // namespace
}  // namespace iofleet
