#include "common/pretty_json.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/wrappers.pb.h"
#include "gtest/gtest.h"
#include "proto/host_facts.pb.h"
#include "proto/job.pb.h"
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

// Where two printings part, with some text around it (the whole of a large one says nothing).
std::string FirstDifference(const std::string& ours, const std::string& protobufs) {
  size_t at = 0;
  while (at < ours.size() && at < protobufs.size() && ours[at] == protobufs[at]) ++at;
  const size_t from = at > 80 ? at - 80 : 0;
  return absl::StrCat("at byte ", at, "\nours:     ", absl::CEscape(ours.substr(from, 160)), "\nprotobuf: ",
                      absl::CEscape(protobufs.substr(from, 160)));
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

// Every field of `message` and of the messages below it (down to `depth` levels) set from
// `random`: numbers at their extremes, doubles that print with 15 and 17 digits or as strings,
// enum numbers the enum does not name, strings with every character protobuf escapes and some
// that are not UTF-8, messages left unset or set but empty.
void FillEveryField(google::protobuf::Message* message, std::mt19937_64& random, int depth) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Descriptor* type = message->GetDescriptor();
  const google::protobuf::Reflection* r = message->GetReflection();
  const auto pick = [&random](auto... values) {
    const std::vector<std::common_type_t<decltype(values)...>> all{values...};
    return all[random() % all.size()];
  };
  const std::vector<std::string> strings = {
      "", "plain", "a \"quoted\"\nname\\with \x01\x1f\x7f control <tags> & ünïcode",
      "\xc2\x80\xc2\xad\xd8\x80\xdb\x9d\xe2\x80\x8b\xe2\x80\xa8\xe2\x81\xa0\xef\xbb\xbf\xef\xbf\xb9\xf0\x9d\x85\xb3\xf3\xa0\x80\x81 \xf0\x9f\x98\x80",
      std::string("nul \0 inside", 12), "not UTF-8: \xff\xfe", "cut \xe2\x80", "overlong \xc0\x80 and surrogate \xed\xa0\x80"};
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* f = type->field(i);
    const int count = f->is_repeated() ? static_cast<int>(random() % 4) : (random() % 4 == 0 ? 0 : 1);
    for (int k = 0; k < count; ++k) {
      const bool add = f->is_repeated();
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32: {
          const int32_t v = pick(0, -1, 7, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
          add ? r->AddInt32(message, f, v) : r->SetInt32(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_UINT32: {
          const uint32_t v = pick(0u, 1u, std::numeric_limits<uint32_t>::max());
          add ? r->AddUInt32(message, f, v) : r->SetUInt32(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_INT64: {
          const int64_t v = pick(int64_t{0}, int64_t{-5}, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
          add ? r->AddInt64(message, f, v) : r->SetInt64(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_UINT64: {
          const uint64_t v = pick(uint64_t{0}, uint64_t{1795917205502842322}, std::numeric_limits<uint64_t>::max());
          add ? r->AddUInt64(message, f, v) : r->SetUInt64(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_DOUBLE: {
          double any_bits;  // any finite double, by its bits
          const uint64_t bits = random();
          std::memcpy(&any_bits, &bits, sizeof any_bits);
          if (!std::isfinite(any_bits)) any_bits = 1.5;
          const double v = pick(0.0, -0.0, 0.1, 1.0 / 3, 4095.545092516539, 1e21, 1e15, 1e16, 2.5e-5, 0.000123, 123456.789, 5e-324,
                                1.7976931348623157e308, std::nan(""), HUGE_VAL, -HUGE_VAL, static_cast<double>(random()) / 3.0, any_bits,
                                any_bits, static_cast<double>(random() % 100000) / 1000.0);
          add ? r->AddDouble(message, f, v) : r->SetDouble(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_BOOL: {
          const bool v = random() % 2;
          add ? r->AddBool(message, f, v) : r->SetBool(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_ENUM: {
          const int v = random() % 3 == 0 ? 77 : f->enum_type()->value(static_cast<int>(random() % f->enum_type()->value_count()))->number();
          add ? r->AddEnumValue(message, f, v) : r->SetEnumValue(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_STRING: {
          const std::string& v = strings[random() % strings.size()];
          add ? r->AddString(message, f, v) : r->SetString(message, f, v);
          break;
        }
        case FieldDescriptor::CPPTYPE_MESSAGE: {
          if (depth <= 0) break;
          google::protobuf::Message* sub = add ? r->AddMessage(message, f) : r->MutableMessage(message, f);
          if (random() % 5 != 0) FillEveryField(sub, random, depth - 1);  // else set but empty
          break;
        }
        default:
          break;
      }
    }
  }
}

TEST(PrintJson, SameTextAsProtobufsPrinterForLargeReports) {
  google::protobuf::util::JsonPrintOptions camel = ReportOptions(), compact = ReportOptions(), sparse = ReportOptions();
  camel.preserve_proto_field_names = false;  // workersCompleted, jobSource, ...
  compact.add_whitespace = false;
  sparse.always_print_primitive_fields = false;
  for (const auto& options : {ReportOptions(), camel, compact, sparse}) {
    for (const v1::RunReport& report : {LargeReport(40, 3), LargeReport(1, 1), v1::RunReport()}) {
      absl::StatusOr<std::string> json = PrintJson(report, options);
      ASSERT_TRUE(json.ok()) << json.status();
      const std::string reference = Reference(report, options);
      EXPECT_TRUE(*json == reference) << FirstDifference(*json, reference);
    }
  }
}

TEST(PrintJson, SameTextAsProtobufsPrinterForEveryFieldAndValue) {
  google::protobuf::util::JsonPrintOptions camel = ReportOptions(), compact = ReportOptions(), sparse = ReportOptions(),
                                           enums = ReportOptions();
  camel.preserve_proto_field_names = false;
  compact.add_whitespace = false;
  sparse.always_print_primitive_fields = false;
  enums.always_print_enums_as_ints = true;
  std::mt19937_64 random(20261129);
  for (int round = 0; round < 40; ++round) {
    v1::RunReport report;
    FillEveryField(&report, random, 4);
    for (const auto& options : {ReportOptions(), camel, compact, sparse, enums}) {
      absl::StatusOr<std::string> json = PrintJson(report, options);
      ASSERT_TRUE(json.ok()) << json.status();
      const std::string reference = Reference(report, options);
      ASSERT_TRUE(*json == reference) << "round " << round << " " << FirstDifference(*json, reference);
    }
  }
}

TEST(PrintJson, EveryCodePointIsWrittenAsProtobufWritesIt) {
  // Each code point as UTF-8, 4,096 to a string: raw, or one of the escapes protobuf uses.
  const auto utf8 = [](uint32_t c, std::string* s) {
    if (c < 0x80) {
      s->push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      s->push_back(static_cast<char>(0xc0 | (c >> 6)));
      s->push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
      s->push_back(static_cast<char>(0xe0 | (c >> 12)));
      s->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      s->push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
      s->push_back(static_cast<char>(0xf0 | (c >> 18)));
      s->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
      s->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
      s->push_back(static_cast<char>(0x80 | (c & 0x3f)));
    }
  };
  for (uint32_t first = 0; first <= 0x10ffff; first += 4096) {
    v1::RunReport report;
    std::string text;
    for (uint32_t c = first; c < first + 4096 && c <= 0x10ffff; ++c) {
      if (c < 0xd800 || c > 0xdfff) utf8(c, &text);
    }
    report.set_job_source(text);
    absl::StatusOr<std::string> json = PrintJson(report, ReportOptions());
    ASSERT_TRUE(json.ok()) << json.status();
    const std::string reference = Reference(report, ReportOptions());
    ASSERT_TRUE(*json == reference) << absl::StrFormat("U+%04X..: ", first) << FirstDifference(*json, reference);
  }
}

TEST(PrintJson, TypesItDoesNotPrintAreProtobufs) {
  // A well-known type (its own JSON form), and a message with a bytes field (base64).
  google::protobuf::StringValue text;
  text.set_value("<a>\n");
  v1::DataPattern pattern;
  pattern.set_bytes("\x01\xff<");
  pattern.add_block_offset_at(8);
  v1::HostFacts facts;  // printable: proto3 without maps
  facts.set_hostname("h\x01");
  for (const google::protobuf::Message* message : std::initializer_list<const google::protobuf::Message*>{&text, &pattern, &facts}) {
    absl::StatusOr<std::string> json = PrintJson(*message, ReportOptions());
    ASSERT_TRUE(json.ok()) << json.status();
    const std::string reference = Reference(*message, ReportOptions());
    EXPECT_TRUE(*json == reference) << FirstDifference(*json, reference);
  }
}

}  // namespace
}  // namespace iofleet
