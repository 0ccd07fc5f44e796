// Live telemetry with real workers: the interval logs (NDJSON and CSV) add up to the final
// report exactly, a worker frozen mid-run (SIGSTOP) makes its intervals late — published
// without it, marked incomplete, then amended when it resumes — and the progress line is
// printed unless --quiet.
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
using ::iofleet::testing::Line;
using ::iofleet::testing::ReadNdjson;

// GET http://ADDRESS/metrics over a plain socket (the test talks to 127.0.0.1 only).
std::string Scrape(const std::string& address) {
  const int fd = ::iofleet::testing::ConnectTcp(address);
  if (fd < 0) return "";
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: " + address + "\r\n\r\n";
  if (::write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return "";
  }
  std::string response;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// The value of the sample `name{...direction="DIR"...}`, or -1.
double Sample(const std::string& metrics, const std::string& name, const std::string& direction) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) != 0 || line.find("direction=\"" + direction + "\"") == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

// The address a process printed after `prefix` ("... on http://ADDRESS/metrics").
std::string MetricsAddress(const std::string& output) {
  const std::string prefix = "http://";
  const size_t at = output.find(prefix);
  if (at == std::string::npos) return "";
  const size_t end = output.find("/metrics", at);
  return output.substr(at + prefix.size(), end - at - prefix.size());
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
                   "--interval-log", ndjson, "--interval-csv", csv, "--output-format", "iofleet-json", "--output", json, "--metrics-listen",
                   "127.0.0.1:0"},
                  TempDir() + "/telemetry-run");
  ASSERT_TRUE(run.WaitForOutput("/metrics", std::chrono::seconds(10), /*in_stderr=*/true)) << run.Stderr();
  const std::string metrics_address = MetricsAddress(run.Stderr());
  std::string running;  // both workers answer once the run is under way
  for (int i = 0; i < 30 && running.find("\niofleet_cluster_workers_up 2\n") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    running = Scrape(metrics_address);
  }
  EXPECT_THAT(running, HasSubstr("\niofleet_cluster_workers_up 2\n"));
  // Some intervals from both in the log, then b freezes.
  ASSERT_TRUE(::iofleet::testing::WaitFor(
      [&] { return ::iofleet::testing::CountInFile(ndjson, a.address()) >= 2 && ::iofleet::testing::CountInFile(ndjson, b.address()) >= 2; },
      std::chrono::seconds(10)));
  b.process().Signal(SIGSTOP);  // frozen: its reports stop, well within the 5 s lease
  const auto frozen_at = std::chrono::steady_clock::now();
  // Nothing from it in two probes (one every 2 s with the default 5 s lease): Prometheus sees
  // one worker up within three; the controller gives a silent worker up only after two leases.
  std::string frozen;
  while (std::chrono::steady_clock::now() - frozen_at < std::chrono::milliseconds(7000)) {
    frozen = Scrape(metrics_address);
    if (frozen.find("\niofleet_cluster_workers_up 1\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(frozen, HasSubstr("\niofleet_cluster_workers_up 1\n"));
  EXPECT_THAT(frozen, HasSubstr("\niofleet_cluster_workers_expected 2\n"));
  // Frozen for 4 s at least (it may be seen down sooner, two beats after it stopped), so that
  // its intervals miss their 2 s grace and come as amendments.
  std::this_thread::sleep_until(frozen_at + std::chrono::milliseconds(4000));
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
      if (d.direction() == "write") {
        EXPECT_EQ(worker_ops[w.worker()], d.ops()) << w.worker();
      }
    }
  }
  // The CSV has the same rows (plus a header), with p90 and stddev per interval and scope.
  EXPECT_THAT(ReadFile(csv), ::testing::StartsWith("run,scope,phase,job,host,direction,interval,"));
  EXPECT_THAT(ReadFile(csv), HasSubstr(",lat_max_ns,lat_p90_ns,lat_stddev_ns\n"));
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

// The slowest requests are named — worker, thread, file, offset, time — in the report and in
// the interval log: a worker frozen for 400 ms during a rate-limited job (latency counts from
// each request's due time) has the run's slowest request, equal to the latency maximum.
TEST(Telemetry, SlowestRequestsAreNamed) {
  const std::string data = TempDir() + "/slowest";
  ::mkdir(data.c_str(), 0755);
  TestWorker a("slowest-a", {"--allow-root", data});
  TestWorker b("slowest-b", {"--allow-root", data});
  const std::string job = data + "/s.fio";
  std::ofstream(job) << "[s]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nrate_iops=500\nruntime=4s\ntime_based\ndirectory=" << data << "\n";
  const std::string ndjson = data + "/i.ndjson", json = data + "/r.json";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", absl::StrCat(a.address(), ",", b.address()), "--interval", "500ms",
                   "--interval-log", ndjson, "--output-format", "iofleet-json", "--output", json, "--quiet", "--results-dir", "none"},
                  TempDir() + "/slowest-run");
  // Once b's intervals are in the log, freeze it for 400 ms (the fault: a request that long).
  ASSERT_TRUE(::iofleet::testing::WaitFor([&] { return ::iofleet::testing::CountInFile(ndjson, b.address()) >= 2; }, std::chrono::seconds(10)));
  b.process().Signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  b.process().Signal(SIGCONT);
  ASSERT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 0) << run.Stderr();
  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok());
  const v1::DirectionResult* read = nullptr;
  for (const auto& d : report.jobs(0).directions()) {
    if (d.direction() == "read") read = &d;
  }
  ASSERT_NE(read, nullptr);
  ASSERT_GT(read->slowest_size(), 1);
  const v1::SlowRequest& slowest = read->slowest(0);
  EXPECT_GE(slowest.latency_ns(), 350'000'000u);
  EXPECT_EQ(slowest.latency_ns(), read->latency().max_ns()) << "the slowest request named is the latency maximum";
  EXPECT_EQ(slowest.worker(), b.address());
  EXPECT_EQ(slowest.file(), data + "/s.w1.0.0") << "worker 1's file";
  EXPECT_EQ(slowest.thread(), 0u);
  EXPECT_EQ(slowest.offset() % 4096, 0u);
  EXPECT_LT(slowest.offset(), 1u << 20);
  EXPECT_GT(slowest.complete_unix_ns(), report.start_unix_ns());
  EXPECT_LT(slowest.complete_unix_ns(), report.start_unix_ns() + 6'000'000'000);
  for (int i = 1; i < read->slowest_size(); ++i) EXPECT_LE(read->slowest(i).latency_ns(), read->slowest(i - 1).latency_ns());
  // The interval log names it too, in the interval it completed in.
  bool logged = false;
  std::istringstream in(ReadFile(ndjson));
  for (std::string text; std::getline(in, text);) {
    google::protobuf::Struct line;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &line).ok()) << text;
    const auto& f = line.fields();
    if (f.at("scope").string_value() != "job" || f.at("direction").string_value() != "read") continue;
    for (const auto& entry : f.at("slowest").list_value().values()) {
      const auto& e = entry.struct_value().fields();
      if (static_cast<uint64_t>(e.at("lat_ns").number_value()) == slowest.latency_ns()) {
        logged = true;
        EXPECT_EQ(e.at("host").string_value(), b.address());
        EXPECT_EQ(e.at("file").string_value(), slowest.file());
        EXPECT_GE(static_cast<int64_t>(e.at("at_unix_ns").number_value()) + 1000, static_cast<int64_t>(f.at("start_unix_ns").number_value()));
      }
    }
  }
  EXPECT_TRUE(logged);
}

// A worker that gets a fifth of the CPU time (stopped 40 ms of every 50) is named in the
// progress line as a straggler, with how far below the median it is; the full-speed one is not.
TEST(Telemetry, SlowWorkerIsNamedAsStraggler) {
  const std::string data = TempDir() + "/straggler";
  ::mkdir(data.c_str(), 0755);
  TestWorker fast("straggler-fast", {"--allow-root", data});
  TestWorker slow("straggler-slow", {"--allow-root", data});
  const std::string job = data + "/s.fio";
  std::ofstream(job) << "[s]\nioengine=null\nrw=randread\nbs=4k\nsize=1g\nruntime=7s\ntime_based\ndirectory=" << data << "\n";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", absl::StrCat(fast.address(), ",", slow.address()),
                   "--results-dir", "none"},
                  TempDir() + "/straggler-run");
  std::optional<int> exit_code;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!exit_code && std::chrono::steady_clock::now() < deadline) {
    slow.process().Signal(SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    slow.process().Signal(SIGCONT);
    exit_code = run.Wait(std::chrono::milliseconds(10));
  }
  slow.process().Signal(SIGCONT);
  if (!exit_code) exit_code = run.Wait(std::chrono::seconds(30));
  ASSERT_EQ(exit_code.value_or(-1), 0) << run.Stderr();
  const std::string err = run.Stderr();
  EXPECT_THAT(err, HasSubstr(absl::StrCat("stragglers: ", slow.address(), " (")));
  EXPECT_THAT(err, HasSubstr("% below median)"));
  EXPECT_THAT(err, Not(HasSubstr(absl::StrCat(fast.address(), " ("))));
}


// Prometheus on worker and controller, scraped during a real run: counters grow, end equal
// to the report, and the exposition passes promtool's checks (names with _total, _seconds...).
TEST(Telemetry, PrometheusOnWorkerAndControllerMatchesTheReport) {
  const std::string data = TempDir() + "/prometheus";
  ::mkdir(data.c_str(), 0755);
  TestWorker worker("prom-worker", {"--allow-root", data, "--metrics-listen", "127.0.0.1:0"});
  const std::string worker_metrics = MetricsAddress(worker.process().Stdout());
  ASSERT_FALSE(worker_metrics.empty()) << worker.process().Stdout();
  const std::string job = data + "/p.fio";
  std::ofstream(job) << "[p]\nrw=randrw\nbs=4k\nsize=1m\nruntime=4s\ntime_based\nrate_iops=4000\ndirectory=" << data << "\n";
  const std::string json = data + "/p.json";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", worker.address(), "--metrics-listen", "127.0.0.1:0", "--metrics-hold",
                   "5s", "--quiet", "--output-format", "iofleet-json", "--output", json},
                  TempDir() + "/prometheus-run");
  ASSERT_TRUE(run.WaitForOutput("/metrics", std::chrono::seconds(10), /*in_stderr=*/true)) << run.Stderr();
  const std::string controller_metrics = MetricsAddress(run.Stderr());
  double early = -1, later = -1;
  EXPECT_TRUE(::iofleet::testing::WaitFor(
      [&] { return (early = Sample(Scrape(controller_metrics), "iofleet_cluster_operations_total", "write")) > 0; }, std::chrono::seconds(10)));
  EXPECT_TRUE(::iofleet::testing::WaitFor(
      [&] { return (later = Sample(Scrape(controller_metrics), "iofleet_cluster_operations_total", "write")) > early; },
      std::chrono::seconds(10)))
      << "the counters grow while the run goes on";
  ASSERT_TRUE(run.WaitForOutput("serving the final metrics", std::chrono::seconds(20), /*in_stderr=*/true)) << run.Stderr();

  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok());
  const std::string final_controller = Scrape(controller_metrics), final_worker = Scrape(worker_metrics);
  for (const auto& d : report.jobs(0).directions()) {
    EXPECT_EQ(Sample(final_controller, "iofleet_cluster_operations_total", d.direction()), static_cast<double>(d.ops())) << d.direction();
    EXPECT_EQ(Sample(final_controller, "iofleet_cluster_bytes_total", d.direction()), static_cast<double>(d.bytes())) << d.direction();
    EXPECT_EQ(Sample(final_controller, "iofleet_cluster_latency_seconds_count", d.direction()), static_cast<double>(d.ops()));
    EXPECT_EQ(Sample(final_worker, "iofleet_worker_operations_total", d.direction()), static_cast<double>(d.ops())) << d.direction();
  }
  EXPECT_THAT(final_controller, HasSubstr("iofleet_cluster_workers_expected 1"));
  EXPECT_THAT(final_controller, HasSubstr(absl::StrCat("iofleet_cluster_run_info{job_file=\"", job, "\",run=\"", report.run_id(), "\"} 1")));
  EXPECT_NE(final_controller.find(absl::StrCat("iofleet_cluster_latency_seconds_bucket{direction=\"read\",job=\"p\",run=\"", report.run_id(),
                                               "\",le=\"+Inf\"} ", report.jobs(0).directions(0).ops())),
            std::string::npos)
      << "the histogram holds every operation";

  // Every metric the Grafana dashboard queries is one of these two scrapes (configs/).
  std::set<std::string> exported;
  for (const std::string& metrics : {final_controller, final_worker}) {
    std::istringstream in(metrics);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') exported.insert(line.substr(0, line.find_first_of("{ ")));
    }
  }
  google::protobuf::Struct dashboard;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(Runfile("configs/grafana-iofleet.json")), &dashboard).ok());
  int queries = 0;
  for (const auto& panel : dashboard.fields().at("panels").list_value().values()) {
    for (const auto& target : panel.struct_value().fields().at("targets").list_value().values()) {
      const std::string expr = target.struct_value().fields().at("expr").string_value();
      ++queries;
      const std::regex metric("iofleet_[a-z_]+");
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
        EXPECT_TRUE(exported.count(it->str())) << "the dashboard queries " << it->str() << ", which neither scrape has: " << expr;
      }
    }
  }
  EXPECT_GE(queries, 8);

  // promtool (Debian's prometheus package) checks the exposition format and naming rules.
  ASSERT_EQ(::access("/usr/bin/promtool", X_OK), 0) << "promtool missing (tools/install_deps.sh installs prometheus)";
  for (const std::string& metrics : {final_controller, final_worker}) {
    const std::string file = data + "/scrape.prom";
    std::ofstream(file) << metrics;
    int status = -1;
    const std::string output = Command("/usr/bin/promtool check metrics < " + file, &status);
    EXPECT_EQ(status, 0) << "promtool: " << output;
  }
}

// The sum of the samples `name{...}` whose labels include `label` (e.g. job="File creation").
double SumOf(const std::string& metrics, const std::string& name, const std::string& label) {
  double sum = 0;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) == 0 && line.find(label) != std::string::npos) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// iofleet mdtest has the live telemetry of iofleet run: a progress line naming the phase,
// interval logs whose operations add up to every phase's items, and Prometheus counters per
// phase that end equal to the report and pass promtool.
TEST(Telemetry, MdtestProgressIntervalLogsAndPrometheus) {
  const std::string data = TempDir() + "/md-live";
  ::mkdir(data.c_str(), 0755);
  TestWorker a("md-live-a", {"--allow-root", data});
  TestWorker b("md-live-b", {"--allow-root", data});
  const std::string ndjson = data + "/i.ndjson", csv = data + "/i.csv", json = data + "/r.json";
  TestProcess run({Runfile("controller/iofleet"), "mdtest", "-d", data + "/tree", "-n", "400", "-i", "2", "--tasks-per-worker", "2", "--hosts",
                   absl::StrCat(a.address(), ",", b.address()), "--interval", "200ms", "--interval-log", ndjson, "--interval-csv", csv,
                   "--metrics-listen", "127.0.0.1:0", "--metrics-hold", "4s", "--results-dir", "none", "--output-format", "json", "--output",
                   json},
                  TempDir() + "/md-live-run");
  ASSERT_TRUE(run.WaitForOutput("serving the final metrics", std::chrono::seconds(60), /*in_stderr=*/true)) << run.Stderr();
  const std::string metrics = Scrape(MetricsAddress(run.Stderr()));
  ASSERT_EQ(run.Wait(std::chrono::seconds(30)).value_or(-1), 0) << run.Stderr();

  v1::MdtestReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok()) << ReadFile(json);
  ASSERT_EQ(report.phases_size(), 20) << "10 phases, 2 iterations";
  // The newest publication of each job-scope (phase, interval) counts.
  std::map<std::pair<int, int>, Line> latest;
  std::map<int, std::string> phase_job;
  {
    std::istringstream in(ReadFile(ndjson));
    for (std::string text; std::getline(in, text);) {
      google::protobuf::Struct s;
      ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &s).ok()) << text;
      const auto& f = s.fields();
      if (f.at("scope").string_value() != "job") continue;
      EXPECT_EQ(f.at("direction").string_value(), "meta");
      const int phase = static_cast<int>(f.at("phase").number_value());
      Line line;
      line.ops = static_cast<uint64_t>(f.at("ops").number_value());
      latest[{phase, static_cast<int>(f.at("interval").number_value())}] = line;
      phase_job[phase] = f.at("job").string_value();
    }
  }
  std::map<int, uint64_t> logged;
  for (const auto& [key, line] : latest) logged[key.first] += line.ops;
  std::map<std::string, uint64_t> items_by_operation;
  for (int k = 0; k < report.phases_size(); ++k) {
    const auto& phase = report.phases(k);
    EXPECT_EQ(phase_job[k], phase.operation()) << "phase " << k;
    EXPECT_EQ(logged[k], phase.items() + phase.errors()) << "phase " << k << " (" << phase.operation() << "): the log adds up to the report";
    items_by_operation[phase.operation()] += phase.items() + phase.errors();
  }
  EXPECT_EQ(items_by_operation["File creation"], 2u * 4 * 400);
  for (const auto& [operation, items] : items_by_operation) {
    EXPECT_EQ(SumOf(metrics, "iofleet_cluster_operations_total", absl::StrCat("job=\"", operation, "\"")), static_cast<double>(items))
        << operation;
  }
  EXPECT_FALSE(ReadFile(csv).empty());
  // A line per phase that was the newest when the view ticked (phases of a few milliseconds
  // may pass between two ticks unnamed): each with its % done and its rate.
  EXPECT_THAT(run.Stderr(), ::testing::ContainsRegex("phase [0-9]+/20 \\([A-Z][a-z]+ [a-z]+\\) 100% \\| meta "));
  EXPECT_THAT(run.Stderr(), HasSubstr(" ops/s p99 "));
  EXPECT_THAT(run.Stderr(), HasSubstr("| workers "));
  const std::string file = data + "/scrape.prom";
  std::ofstream(file) << metrics;
  int status = -1;
  const std::string output = Command("/usr/bin/promtool check metrics < " + file, &status);
  EXPECT_EQ(status, 0) << "promtool: " << output;

  TestProcess quiet({Runfile("controller/iofleet"), "mdtest", "-d", data + "/quiet", "-n", "10", "--hosts", a.address(), "--quiet",
                     "--results-dir", "none"},
                    TempDir() + "/md-live-quiet");
  ASSERT_EQ(quiet.Wait(std::chrono::seconds(60)).value_or(-1), 0) << quiet.Stderr();
  EXPECT_THAT(quiet.Stderr(), Not(HasSubstr("| workers ")));
}

}  // namespace
}  // namespace iofleet
