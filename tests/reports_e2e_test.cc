// What a run leaves behind: the results directory (job, result, text report, interval logs,
// host facts; PARTIAL when interrupted; nothing for bad input) and the HTML reports of run and
// mdtest, rendered in headless Chromium.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <map>
#include <optional>
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
#include "tests/telemetry_helpers.h"

namespace iofleet {
namespace {


using ::iofleet::testing::DirectoryNames;
using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;
using ::testing::Not;
using ::iofleet::testing::Command;
using ::iofleet::testing::ReadNdjson;

// Every run leaves results/<UTC time>-<job>/ with the job, the result, the text report, the
// interval logs and the host facts; an interrupted run's directory says PARTIAL; bad input
// leaves nothing.
TEST(Telemetry, ResultsDirectoryHoldsTheWholeRunAndMarksPartialOnes) {
  const std::string data = TempDir() + "/results-data", base = TempDir() + "/results";
  ::mkdir(data.c_str(), 0755);
  TestWorker worker("results-worker", {"--allow-root", data});
  const std::string job = data + "/mixed.fio";
  std::ofstream(job) << "[m]\nrw=randrw\nbs=4k\nsize=1m\nruntime=1s\ntime_based\nwrite_iops_log=m\nlog_avg_msec=250\ndirectory=" << data
                      << "\n";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", worker.address(), "--results-dir", base, "--quiet"},
                  TempDir() + "/results-run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 0) << run.Stderr();
  std::vector<std::string> dirs = DirectoryNames(base);
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_THAT(dirs[0], ::testing::MatchesRegex("20[0-9]{6}T[0-9]{6}Z-mixed"));
  const std::string dir = base + "/" + dirs[0];
  EXPECT_THAT(run.Stderr(), HasSubstr("results in " + dir));
  EXPECT_THAT(DirectoryNames(dir), ::testing::ElementsAre("fio-logs", "hosts.json", "intervals.csv", "intervals.ndjson", "job-resolved.json",
                                                  "job.fio", "report.html", "report.txt", "result.json"));
  // fio's logs with a relative prefix land in the results directory.
  EXPECT_THAT(DirectoryNames(dir + "/fio-logs"), ::testing::ElementsAre("m_iops.1.log"));
  EXPECT_THAT(run.Stderr(), HasSubstr("m_iops.1.log in the results directory's fio-logs/"));
  EXPECT_EQ(ReadFile(dir + "/job.fio"), ReadFile(job));
  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(dir + "/result.json"), &report).ok());
  EXPECT_EQ(report.jobs(0).name(), "m");
  EXPECT_THAT(ReadFile(dir + "/hosts.json"), HasSubstr(worker.address()));
  EXPECT_THAT(ReadFile(dir + "/report.txt"), HasSubstr("Cluster"));
  EXPECT_FALSE(ReadNdjson(dir + "/intervals.ndjson").empty());

  // Interrupted: still written, marked partial.
  std::ofstream(job) << "[m]\nrw=randrw\nbs=4k\nsize=1m\nruntime=60s\ntime_based\ndirectory=" << data << "\n";
  TestProcess interrupted({Runfile("controller/iofleet"), "run", job, "--hosts", worker.address(), "--results-dir", base},
                          TempDir() + "/results-interrupted");
  // Once it measures (its progress line), not at the first IO, which may be the file's layout.
  ASSERT_TRUE(interrupted.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << interrupted.Stderr();
  interrupted.Signal(SIGINT);
  ASSERT_EQ(interrupted.Wait(std::chrono::seconds(30)).value_or(-1), 1) << interrupted.Stderr();
  dirs = DirectoryNames(base);
  ASSERT_EQ(dirs.size(), 2u) << "a name already taken gets a suffix";
  const std::string partial = base + "/" + dirs[1];
  EXPECT_THAT(ReadFile(partial + "/PARTIAL"), HasSubstr("interrupted by the user"));
  EXPECT_THAT(interrupted.Stderr(), HasSubstr("(partial)"));
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(partial + "/result.json"), &report).ok());

  // Bad input: nothing measured, no directory left behind.
  std::ofstream(job) << "[m]\nszie=1m\n";
  TestProcess bad({Runfile("controller/iofleet"), "run", job, "--hosts", worker.address(), "--results-dir", base}, TempDir() + "/results-bad");
  ASSERT_EQ(bad.Wait(std::chrono::seconds(30)).value_or(-1), 2);
  EXPECT_EQ(DirectoryNames(base).size(), 2u);
}

// The HTML report renders in headless Chromium without console errors, and its charts carry
// data points; it is self-contained (no scripts, no external resources).
TEST(Telemetry, HtmlReportRendersWithDataInChromium) {
  ASSERT_EQ(::access("/usr/bin/chromium", X_OK), 0) << "chromium missing (tools/install_deps.sh installs it)";
  const std::string data = TempDir() + "/html";
  ::mkdir(data.c_str(), 0755);
  TestWorker a("html-a", {"--allow-root", data});
  TestWorker b("html-b", {"--allow-root", data});
  const std::string job = data + "/h.fio", html = data + "/report.html";
  std::ofstream(job) << "[w]\nrw=randwrite\nbs=4k\nsize=1m\nruntime=3s\ntime_based\ndirectory=" << data << "\n";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", absl::StrCat(a.address(), ",", b.address()), "--interval", "500ms",
                   "--report", html, "--results-dir", "none", "--quiet"},
                  TempDir() + "/html-run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 0) << run.Stderr();
  const std::string page = ReadFile(html);
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  for (const char* external : {"src=", "href=", "url(", "http://", "https://"}) {
    EXPECT_THAT(page, Not(HasSubstr(external))) << "no external resources";
  }
  EXPECT_THAT(page, HasSubstr(a.address()));

  const std::string chromium = "/usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
                               "--enable-logging=stderr --v=0 ";
  int status = 0;
  const std::string shot = data + "/report.png";
  const std::string screenshot_log = Command(chromium + "--user-data-dir=" + data + "/chromium-shot --window-size=1000,3000 --screenshot=" + shot + " file://" + html, &status);
  ASSERT_EQ(status, 0) << screenshot_log;
  struct stat st;
  ASSERT_EQ(::stat(shot.c_str(), &st), 0) << screenshot_log;
  EXPECT_GT(st.st_size, 20000) << "a screenshot of the charts";
  EXPECT_THAT(screenshot_log, Not(HasSubstr("CONSOLE"))) << "console messages while rendering";
  EXPECT_THAT(screenshot_log, Not(HasSubstr("Uncaught")));

  // The rendered DOM: the charts are there and their lines have points.
  const std::string dom = Command("{ " + chromium + "--user-data-dir=" + data + "/chromium-dom --dump-dom file://" + html + " 2>" + data + "/dom.log; }", &status);
  ASSERT_EQ(status, 0) << ReadFile(data + "/dom.log");
  int charts = 0, lines_with_data = 0;
  for (size_t at = dom.find("<svg"); at != std::string::npos; at = dom.find("<svg", at + 1)) ++charts;
  for (size_t at = dom.find("<polyline"); at != std::string::npos; at = dom.find("<polyline", at + 1)) {
    const size_t points = dom.find("points=\"", at);
    const size_t end = dom.find('"', points + 8);
    const std::string list = dom.substr(points + 8, end - points - 8);
    if (std::count(list.begin(), list.end(), ',') >= 3) ++lines_with_data;
  }
  EXPECT_GE(charts, 5) << "IOPS, bandwidth, latency over time, per worker, distribution";
  EXPECT_GE(lines_with_data, 6) << "write IOPS, bandwidth, 3 percentiles, 2 workers, distribution";
  EXPECT_THAT(dom, HasSubstr("Throughput per worker"));
  EXPECT_THAT(dom, HasSubstr("Latency distribution"));
  EXPECT_THAT(dom, HasSubstr("Slowest requests"));
  EXPECT_THAT(dom, ::testing::ContainsRegex("\\.w[01]\\.0\\.0</td>")) << "the slowest requests name their files";
}

// iofleet mdtest: its HTML report (rate and latency per phase, per worker) renders in Chromium
// with data, and the run leaves a results directory.
TEST(Telemetry, MdtestHtmlReportAndResultsDirectory) {
  ASSERT_EQ(::access("/usr/bin/chromium", X_OK), 0) << "chromium missing (tools/install_deps.sh installs it)";
  const std::string data = TempDir() + "/md-html", base = TempDir() + "/md-results";
  ::mkdir(data.c_str(), 0755);
  TestWorker a("md-html-a", {"--allow-root", data});
  TestWorker b("md-html-b", {"--allow-root", data});
  const std::string html = data + "/md.html";
  TestProcess run({Runfile("controller/iofleet"), "mdtest", "-d", data + "/tree", "-n", "100", "-F", "-u", "--hosts",
                   absl::StrCat(a.address(), ",", b.address()), "--report", html, "--results-dir", base},
                  TempDir() + "/md-html-run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 0) << run.Stderr();
  std::vector<std::string> dirs = DirectoryNames(base);
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_THAT(DirectoryNames(base + "/" + dirs[0]), ::testing::ElementsAre("command.txt", "hosts.json", "intervals.csv", "intervals.ndjson", "job-resolved.json",
                                                                      "report.html", "report.txt", "result.json"));
  const std::string page = ReadFile(html);
  for (const char* external : {"<script", "src=", "href=", "http://"}) EXPECT_THAT(page, Not(HasSubstr(external)));
  int status = 0;
  const std::string chromium = "/usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
                               "--enable-logging=stderr --v=0 ";
  const std::string log = Command(chromium + "--user-data-dir=" + data + "/chromium-shot --window-size=1000,2000 --screenshot=" + data + "/md.png file://" + html, &status);
  ASSERT_EQ(status, 0) << log;
  EXPECT_THAT(log, Not(HasSubstr("CONSOLE")));
  const std::string dom = Command("{ " + chromium + "--user-data-dir=" + data + "/chromium-dom --dump-dom file://" + html + " 2>" + data + "/dom.log; }", &status);
  ASSERT_EQ(status, 0) << ReadFile(data + "/dom.log");
  int bars = 0;
  for (size_t at = dom.find("class=\"bar\""); at != std::string::npos; at = dom.find("class=\"bar\"", at + 1)) ++bars;
  // File creation, stat, read, removal (+ tree phases): rate, p50 and p99, and one per worker.
  EXPECT_GE(bars, 4 * (1 + 2 + 2));
  EXPECT_THAT(dom, HasSubstr("File creation"));
  EXPECT_THAT(dom, HasSubstr(a.address()));
  EXPECT_THAT(dom, HasSubstr("Slowest operations (3 per phase)"));
  EXPECT_THAT(dom, HasSubstr("/file.mdtest.")) << "the slowest operations name their paths";
}

}  // namespace
}  // namespace iofleet
