// The fixture of the end-to-end tests (e2e_test.cc: runs and their options; faults_e2e_test.cc:
// lost, restarted and unreachable workers, escapes, versions, interruption): a data directory
// per test and helpers that run the real controller and read its JSON report.
#ifndef IOFLEET_TESTS_E2E_FIXTURE_H_
#define IOFLEET_TESTS_E2E_FIXTURE_H_

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/test_process.h"

namespace iofleet::testing {

using ::testing::HasSubstr;

inline constexpr auto kRunTimeout = std::chrono::seconds(60);

inline std::string WriteJob(const std::string& name, const std::string& text) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

inline uint64_t P99(const v1::DirectionResult& d) {
  for (const auto& p : d.latency().percentiles()) {
    if (p.percentile() == 99) return p.value_ns();
  }
  ADD_FAILURE() << "no p99";
  return 0;
}

inline const v1::DirectionResult* FindDirection(const google::protobuf::RepeatedPtrField<v1::DirectionResult>& ds, const std::string& name) {
  for (const auto& d : ds) {
    if (d.direction() == name) return &d;
  }
  return nullptr;
}

struct ControllerRun {
  int exit_code = -1;
  std::string out, err;
  v1::RunReport report;          // the "iofleet" section of the JSON output
  google::protobuf::Struct fio;  // the whole JSON output, fio's layout
};

// `--output-format json` is fio's layout with iofleet's own report under "iofleet".
inline bool ParseJsonReport(const std::string& text, google::protobuf::Struct* fio, v1::RunReport* report) {
  if (!google::protobuf::util::JsonStringToMessage(text, fio).ok()) return false;
  auto it = fio->fields().find("iofleet");
  if (it == fio->fields().end()) return false;
  std::string native;
  if (!google::protobuf::util::MessageToJsonString(it->second, &native).ok()) return false;
  google::protobuf::util::JsonParseOptions options;
  return google::protobuf::util::JsonStringToMessage(native, report, options).ok();
}

// fio's jobs[job].<path...> as a number.
inline double FioNumber(const google::protobuf::Struct& fio, int job, const std::vector<std::string>& path) {
  const google::protobuf::Value* v = &fio.fields().at("jobs").list_value().values(job);
  for (const std::string& key : path) v = &v->struct_value().fields().at(key);
  return v->number_value();
}

inline ControllerRun RunController(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> argv = {Runfile("controller/iofleet")};
  argv.insert(argv.end(), args.begin(), args.end());
  TestProcess controller(argv, TempDir() + "/" + name);
  ControllerRun run;
  run.exit_code = controller.Wait(kRunTimeout).value_or(-1);
  run.out = controller.Stdout();
  run.err = controller.Stderr();
  return run;
}

// Runs with --output-format json --output FILE and parses the report back.
inline ControllerRun RunJson(std::vector<std::string> args, const std::string& name) {
  const std::string json_path = TempDir() + "/" + name + ".json";
  args.insert(args.end(), {"--output-format", "json", "--output", json_path});
  ControllerRun run = RunController(args, name);
  EXPECT_TRUE(ParseJsonReport(ReadFile(json_path), &run.fio, &run.report)) << "stderr: " << run.err;
  return run;
}

class EndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = TempDir() + "/data-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(data_.c_str(), 0755);
  }
  std::string data_;
};

}  // namespace iofleet::testing

#endif  // IOFLEET_TESTS_E2E_FIXTURE_H_
