// What the telemetry and report tests share: the interval log read back line by line, and a
// shell command's output.
#ifndef IOFLEET_TESTS_TELEMETRY_HELPERS_H_
#define IOFLEET_TESTS_TELEMETRY_HELPERS_H_

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace testing {

// One line of an NDJSON interval log (--interval-log), checked as it is read.
struct Line {
  std::string scope, job, host, direction;
  int interval = 0;
  uint64_t ops = 0, bytes = 0;
  bool complete = true, amended = false;
  std::vector<std::string> late;
};

inline std::vector<Line> ReadNdjson(const std::string& path) {
  std::vector<Line> lines;
  std::istringstream in(ReadFile(path));
  for (std::string text; std::getline(in, text);) {
    google::protobuf::Struct s;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << "not one JSON value: " << text;
    const auto& f = s.fields();
    Line line;
    line.scope = f.at("scope").string_value();
    if (f.count("job")) line.job = f.at("job").string_value();
    if (f.count("host")) line.host = f.at("host").string_value();
    line.direction = f.at("direction").string_value();
    line.interval = static_cast<int>(f.at("interval").number_value());
    line.ops = static_cast<uint64_t>(f.at("ops").number_value());
    line.bytes = static_cast<uint64_t>(f.at("bytes").number_value());
    line.complete = f.at("complete").bool_value();
    line.amended = f.at("amended").bool_value();
    for (const auto& v : f.at("late_workers").list_value().values()) line.late.push_back(v.string_value());
    EXPECT_GT(f.at("bins").list_value().values_size(), 0) << text;
    const auto& lat = f.at("lat_ns").struct_value().fields();
    EXPECT_LE(lat.at("p50").number_value(), lat.at("p90").number_value()) << text;
    EXPECT_LE(lat.at("p90").number_value(), lat.at("p99").number_value()) << text;
    EXPECT_LE(lat.at("p99").number_value(), lat.at("max").number_value()) << text;
    EXPECT_GE(lat.at("stddev").number_value(), 0) << text;
    lines.push_back(line);
  }
  return lines;
}

// Runs a command, returns its stdout+stderr and sets *status to its exit status.
inline std::string Command(const std::string& command, int* status) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  std::string output;
  if (pipe == nullptr) {
    *status = -1;
    return output;
  }
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  *status = ::pclose(pipe);
  return output;
}

}  // namespace testing
}  // namespace iofleet

#endif  // IOFLEET_TESTS_TELEMETRY_HELPERS_H_
