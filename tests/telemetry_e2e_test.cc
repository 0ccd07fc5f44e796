// Live telemetry with real workers: the interval logs (NDJSON and CSV) add up to the final
// report exactly, a worker frozen mid-run (SIGSTOP) makes its intervals late — published
// without it, marked incomplete, then amended when it resumes — and the progress line is
// printed unless --quiet.
#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;
using ::testing::Not;

struct Line {
  std::string scope, job, host, direction;
  int interval = 0;
  uint64_t ops = 0, bytes = 0;
  bool complete = true, amended = false;
  std::vector<std::string> late;
};

std::vector<Line> ReadNdjson(const std::string& path) {
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
    lines.push_back(line);
  }
  return lines;
}

TEST(Telemetry, IntervalLogsAddUpAndLateWorkersAreAmended) {
  const std::string data = TempDir() + "/telemetry";
  ::mkdir(data.c_str(), 0755);
  TestWorker a("tele-a", {"--allow-root", data});
  TestWorker b("tele-b", {"--allow-root", data});
  const std::string job = data + "/t.fio";
  std::ofstream(job) << "[t]\nrw=randwrite\nbs=4k\nsize=1m\nruntime=5s\ntime_based\nrate_iops=2000\ndirectory=" << data << "\n";
  const std::string ndjson = data + "/i.ndjson", csv = data + "/i.csv", json = data + "/r.json";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", absl::StrCat(a.address(), ",", b.address()), "--interval", "500ms",
                   "--interval-log", ndjson, "--interval-csv", csv, "--output-format", "iofleet-json", "--output", json},
                  TempDir() + "/telemetry-run");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  b.process().Signal(SIGSTOP);  // frozen: its reports stop, well within the 5 s lease
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  b.process().Signal(SIGCONT);
  ASSERT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 0) << run.Stderr();

  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok());
  const std::vector<Line> lines = ReadNdjson(ndjson);
  ASSERT_FALSE(lines.empty());
  // The newest publication of each (scope, host, interval) is the one that counts.
  std::map<std::tuple<std::string, std::string, int>, Line> latest;
  bool incomplete = false, amended = false;
  for (const Line& l : lines) {
    if (l.direction != "write") continue;
    latest[{l.scope, l.host, l.interval}] = l;
    if (l.scope == "job" && !l.complete && !l.amended) {
      incomplete = true;
      EXPECT_THAT(l.late, ::testing::Contains(b.address()));
    }
    if (l.scope == "job" && l.amended) amended = true;
  }
  EXPECT_TRUE(incomplete) << "the frozen worker's intervals were waited for";
  EXPECT_TRUE(amended) << "its late reports were not published";
  EXPECT_THAT(run.Stderr(), HasSubstr("amended: a late report arrived"));
  uint64_t job_ops = 0, cluster_ops = 0;
  std::map<std::string, uint64_t> worker_ops;
  for (const auto& [key, l] : latest) {
    if (l.scope == "job") job_ops += l.ops;
    if (l.scope == "cluster") cluster_ops += l.ops;
    if (l.scope == "worker") worker_ops[l.host] += l.ops;
  }
  uint64_t final_ops = 0;
  for (const auto& d : report.jobs(0).directions()) {
    if (d.direction() == "write") final_ops = d.ops();
  }
  EXPECT_GT(final_ops, 1000u);
  EXPECT_EQ(job_ops, final_ops) << "the interval log adds up to the report";
  EXPECT_EQ(cluster_ops, final_ops);
  for (const auto& w : report.jobs(0).workers()) {
    for (const auto& d : w.directions()) {
      if (d.direction() == "write") EXPECT_EQ(worker_ops[w.worker()], d.ops()) << w.worker();
    }
  }
  // The CSV has the same rows (plus a header).
  std::istringstream csv_in(ReadFile(csv));
  int rows = 0;
  for (std::string row; std::getline(csv_in, row);) ++rows;
  EXPECT_EQ(rows, static_cast<int>(lines.size()) + 1);
  // Progress lines on stderr (not a terminal: plain lines).
  EXPECT_THAT(run.Stderr(), HasSubstr("| workers "));
  EXPECT_THAT(run.Stderr(), HasSubstr("write "));

  TestProcess quiet({Runfile("controller/iofleet"), "run", job, "--hosts", a.address(), "--quiet"}, TempDir() + "/telemetry-quiet");
  ASSERT_EQ(quiet.Wait(std::chrono::seconds(60)).value_or(-1), 0) << quiet.Stderr();
  EXPECT_THAT(quiet.Stderr(), Not(HasSubstr("| workers ")));
}

}  // namespace
}  // namespace iofleet
