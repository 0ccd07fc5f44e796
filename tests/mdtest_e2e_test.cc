// `iofleet mdtest` end to end: real workers, real tasks, a real directory tree.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "common/protocol_version.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/job.pb.h"
#include "proto/report.pb.h"
#include "proto/worker_service.grpc.pb.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::DirectoryEntries;
using ::iofleet::testing::DirectoryNames;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::BytesMovedDuring;
using ::iofleet::testing::CountIn;
using ::iofleet::testing::kIdleBytesPerSecond;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;
using ::testing::Not;

struct Mdtest {
  int exit_code = -1;
  std::string out, err;
  v1::MdtestReport report;
};


const v1::MdtestPhaseResult* Phase(const v1::MdtestReport& report, const std::string& operation) {
  for (const auto& p : report.phases()) {
    if (p.operation() == operation) return &p;
  }
  return nullptr;
}

// Ctrl-C to a run of -F -n 3000000 in `dir` (its report in JSON at `json_path`) in its file
// creation: it says so, its cleanup leaves nothing behind, what ran is reported (some files
// made, not all) and what did not, not. Returns its standard error.
std::string InterruptCreation(TestProcess& process, const std::string& dir, const std::string& json_path) {
  process.Signal(SIGINT);
  EXPECT_EQ(process.Wait(std::chrono::seconds(60)).value_or(-1), 1);
  const std::string err = process.Stderr();
  EXPECT_THAT(err, HasSubstr("interrupted by the user"));
  EXPECT_THAT(err, HasSubstr("cleanup after the interruption removed what the run had created"));
  EXPECT_EQ(DirectoryEntries(dir), 0) << "files or directories were left behind";
  v1::MdtestReport report;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json_path), &report).ok()) << err;
  const v1::MdtestPhaseResult* created = Phase(report, "File creation");
  EXPECT_NE(created, nullptr) << err;
  if (created != nullptr) {
    EXPECT_GT(created->items(), 0u);
    EXPECT_LT(created->items(), 6000000u);
  }
  const v1::MdtestPhaseResult* stat = Phase(report, "File stat");
  EXPECT_TRUE(stat == nullptr || stat->items() == 0) << "a phase after the interrupted one ran";
  return err;
}

class MdtestEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir() + "/md-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(dir_.c_str(), 0755);
    a_ = std::make_unique<TestWorker>("md-worker-a", std::vector<std::string>{"--allow-root", TempDir()});
    b_ = std::make_unique<TestWorker>("md-worker-b", std::vector<std::string>{"--allow-root", TempDir()});
  }

  Mdtest Run(std::vector<std::string> args, const std::string& name, bool json = true) {
    const std::string json_path = TempDir() + "/" + name + ".json";
    std::vector<std::string> argv = {Runfile("controller/iofleet"), "mdtest"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--hosts", absl::StrCat(a_->address(), ",", b_->address()), "--tasks-per-worker", "2"});
    if (json) argv.insert(argv.end(), {"--output-format", "json", "--output", json_path});
    TestProcess process(argv, TempDir() + "/" + name);
    Mdtest run;
    run.exit_code = process.Wait(std::chrono::seconds(60)).value_or(-1);
    run.out = process.Stdout();
    run.err = process.Stderr();
    if (json) {
      EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json_path), &run.report).ok()) << run.err;
    }
    return run;
  }

  std::string dir_;
  std::unique_ptr<TestWorker> a_, b_;
};

TEST_F(MdtestEndToEnd, TreeWithUniqueDirectoriesEveryPhaseAndCount) {
  Mdtest run = Run({"-d", dir_, "-I", "20", "-z", "2", "-b", "3", "-u", "--readdir"}, "tree");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report.tasks(), 4u);
  // 1 + 3 + 9 = 13 tree directories with 20 items each, per task.
  EXPECT_EQ(run.report.items_per_task(), 260u);
  for (const char* op : {"Tree creation", "Directory creation", "Directory stat", "Directory rename", "Directory removal",
                         "File creation", "Directory listing", "File stat", "File read", "File removal", "Tree removal"}) {
    const auto* p = Phase(run.report, op);
    ASSERT_NE(p, nullptr) << op;
    EXPECT_GT(p->rate(), 0) << op;
    EXPECT_FALSE(p->stonewalled()) << op;
    EXPECT_EQ(p->errors(), 0u) << op;
    EXPECT_EQ(p->workers_size(), 2) << op;
    // The slowest operations are named by the path they worked on, slowest first, and are
    // among the phase's slowest (the maximum itself unless it completed at an interval's edge).
    ASSERT_GT(p->slowest_size(), 0) << op;
    const v1::SlowRequest& slowest = p->slowest(0);
    EXPECT_LE(slowest.latency_ns(), p->latency().max_ns()) << op;
    double p90 = 0;
    for (const auto& e : p->latency().percentiles()) {
      if (e.percentile() == 90) p90 = static_cast<double>(e.value_ns());
    }
    EXPECT_GE(static_cast<double>(slowest.latency_ns()), p90) << op;
    EXPECT_THAT(slowest.file(), ::testing::StartsWith(dir_ + "/test-dir.0-0/mdtest_tree.")) << op;
    const std::string name = slowest.file().substr(slowest.file().rfind('/') + 1);
    if (absl::StartsWith(op, "File")) {
      EXPECT_THAT(name, ::testing::StartsWith("file.mdtest.")) << op;
    }
    if (absl::StartsWith(op, "Directory ") && std::string(op) != "Directory listing") {
      EXPECT_THAT(name, ::testing::StartsWith("dir.mdtest.")) << op;
    }
    // mdtest's rename is a rotation: the directories removed have the names they were made with.
    if (std::string(op) == "Directory removal") {
      EXPECT_THAT(name, ::testing::Not(::testing::EndsWith("-XX"))) << op;
    }
    EXPECT_THAT(slowest.worker(), ::testing::AnyOf(a_->address(), b_->address())) << op;
  }
  EXPECT_EQ(Phase(run.report, "Tree creation")->items(), 4u * 13);
  EXPECT_EQ(Phase(run.report, "Directory creation")->items(), 4u * 260);
  EXPECT_EQ(Phase(run.report, "File removal")->items(), 4u * 260);
  EXPECT_EQ(Phase(run.report, "Directory listing")->items(), 4u * 13);
  EXPECT_EQ(Phase(run.report, "File creation")->task_items_min(), 260u);
  EXPECT_GT(Phase(run.report, "File stat")->latency().max_ns(), 0u);
  // mdtest's ten rows (the listing, iofleet's own, is not one of them).
  EXPECT_EQ(run.report.summary_rate_size(), 10);
  ASSERT_EQ(run.report.workers_size(), 2);
  EXPECT_EQ(run.report.workers(0).facts().targets_size(), 1);
  // Everything was removed again.
  EXPECT_EQ(DirectoryEntries(dir_), 0);
}

// --print-all-procs: mdtest's per-process section before the table, a figure per task (two
// workers of two tasks), the same figures the JSON has; from the file operations on with -F.
TEST_F(MdtestEndToEnd, PrintAllProcsGivesEveryTasksOwnRate) {
  Mdtest run = Run({"-d", dir_, "-n", "40", "-F", "-u", "--print-all-procs"}, "all-procs", false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t section = run.out.find("\nPer process result (rate):\niteration: 0\nTest File creation ");
  ASSERT_NE(section, std::string::npos) << run.out;
  EXPECT_LT(section, run.out.find("SUMMARY rate")) << "before the table, as mdtest";
  EXPECT_EQ(run.out.find("Test Directory creation"), std::string::npos) << "-F: mdtest starts at the file operations";
  for (const char* op : {"File creation", "File stat", "File read", "File removal", "Tree creation", "Tree removal"}) {
    const size_t line = run.out.find(absl::StrCat("\nTest ", op, " "));
    ASSERT_NE(line, std::string::npos) << op;
    const size_t begin = line + std::string("\nTest ").size() + std::string(op).size() + 1;
    const std::vector<std::string> figures = absl::StrSplit(run.out.substr(begin, run.out.find('\n', begin) - begin), ',');
    ASSERT_EQ(figures.size(), 4u) << op;
    for (const std::string& figure : figures) {
      double rate = 0;
      EXPECT_TRUE(absl::SimpleAtod(figure, &rate)) << op << ": " << figure;
      EXPECT_GT(rate, 0) << op << ": every task made its own items and tree (-u)";
      EXPECT_THAT(figure, ::testing::MatchesRegex("[0-9]\\.[0-9]{6}e[+-][0-9]{2}")) << "C's %e";
    }
  }
  Mdtest plain = Run({"-d", dir_, "-n", "4", "-F", "-u"}, "no-procs", false);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("Per process result"), std::string::npos);
}

// --saveRankPerformanceDetails: mdtest's CSV, with the figures of the JSON report: the first
// iteration's phases on the "all" line, then each task's own per iteration (item phases only).
TEST_F(MdtestEndToEnd, RankPerformanceDetailsCsvHasEveryTasksFigures) {
  const std::string csv_path = TempDir() + "/ranks.csv";
  Mdtest run = Run({"-d", dir_, "-n", "20", "-u", "-i", "2", "--saveRankPerformanceDetails", csv_path}, "rank-csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = absl::StrSplit(ReadFile(csv_path), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u + 1 + 2 * 4) << "header, all, 2 iterations x 4 tasks";
  std::string header = "rank,items";
  for (const char* op : {"Directory creation", "Directory stat", "Directory read", "Directory rename", "Directory removal", "File creation",
                         "File stat", "File read", "File removal", "Tree creation", "Tree removal"}) {
    absl::StrAppend(&header, ",rate-", op, ",time-", op);
  }
  EXPECT_EQ(lines[0], header);
  const std::vector<std::string> all = absl::StrSplit(lines[1], ',');
  ASSERT_EQ(all.size(), 2u + 2 * 11);
  EXPECT_EQ(all[0], "all");
  EXPECT_EQ(all[1], "20");
  EXPECT_EQ(all[6], "") << "Directory read: not a phase iofleet runs";
  auto number = [](const std::string& cell) {
    double v = -1;
    EXPECT_TRUE(absl::SimpleAtod(cell, &v)) << cell;
    return v;
  };
  const v1::MdtestPhaseResult* creation = nullptr;
  for (const auto& p : run.report.phases()) {
    if (p.operation() == "File creation" && p.iteration() == 0) creation = &p;
  }
  ASSERT_NE(creation, nullptr);
  EXPECT_NEAR(number(all[12]), creation->rate(), creation->rate() * 1e-9) << "rate-File creation of the first iteration";
  EXPECT_NEAR(number(all[13]), creation->seconds(), 1e-12);
  for (size_t line = 2; line < lines.size(); ++line) {
    const std::vector<std::string> cells = absl::StrSplit(lines[line], ',');
    ASSERT_EQ(cells.size(), 2u + 2 * 9) << lines[line];
    const int task = static_cast<int>((line - 2) % 4);
    const uint32_t iteration = static_cast<uint32_t>((line - 2) / 4);
    EXPECT_EQ(cells[0], absl::StrCat(task));
    EXPECT_EQ(cells[1], "");
    const v1::MdtestPhaseResult* stat = nullptr;
    for (const auto& p : run.report.phases()) {
      if (p.operation() == "File stat" && p.iteration() == iteration) stat = &p;
    }
    ASSERT_NE(stat, nullptr);
    ASSERT_GT(stat->task_rates_size(), task);
    EXPECT_NEAR(number(cells[14]), stat->task_rates(task), stat->task_rates(task) * 1e-9) << "rate-File stat, task " << task;
    EXPECT_GT(number(cells[14]), 0);
  }
  // Its directory must be there before the run starts: refused, nothing made.
  Mdtest refused = Run({"-d", dir_ + "/refused", "-n", "4", "--saveRankPerformanceDetails", TempDir() + "/no/such/ranks.csv"}, "rank-csv-bad", false);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("--saveRankPerformanceDetails " + TempDir() + "/no/such/ranks.csv: no directory"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/refused"));
}

// --savePerOpDataCSV: each task writes, on its worker's host, mdtest's file per file phase of
// every operation's start, duration and bytes per second (the last iteration's: each one
// empties the files).
TEST_F(MdtestEndToEnd, PerOpDataCsvHasEveryTasksFileOperations) {
  const std::string prefix = TempDir() + "/perop/ops";
  ::mkdir((TempDir() + "/perop").c_str(), 0755);
  Mdtest run = Run({"-d", dir_, "-n", "20", "-u", "-w", "100", "-e", "100", "-i", "2", "--savePerOpDataCSV", prefix}, "per-op-csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(DirectoryNames(TempDir() + "/perop").size(), 4u * 4) << "a file per task and file phase, none for directories or trees";
  const std::regex line_form(R"(\d\.\d{8}e[-+]\d{2},\d\.\d{8}e[-+]\d{2},\d\.\d{6}e[-+]\d{2})");
  for (const auto& [operation, bytes] : std::vector<std::pair<std::string, double>>{
           {"File creation", 100}, {"File stat", 1}, {"File read", 100}, {"File removal", 100}}) {
    const v1::MdtestPhaseResult* phase = nullptr;
    for (const auto& p : run.report.phases()) {
      if (p.operation() == operation && p.iteration() == 1) phase = &p;
    }
    ASSERT_NE(phase, nullptr) << operation;
    for (int task = 0; task < 4; ++task) {
      const std::string path = absl::StrFormat("%s-%s-%05d.csv", prefix, operation, task);
      const std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty());
      ASSERT_EQ(lines.size(), 1u + 20) << path;
      EXPECT_EQ(lines[0], "time,runtime,tp");
      double last_start = 0;
      for (size_t i = 1; i < lines.size(); ++i) {
        ASSERT_TRUE(std::regex_match(lines[i], line_form)) << path << ": " << lines[i];
        const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
        double start = 0, duration = 0, throughput = 0;
        ASSERT_TRUE(absl::SimpleAtod(cells[0], &start) && absl::SimpleAtod(cells[1], &duration) && absl::SimpleAtod(cells[2], &throughput));
        EXPECT_GE(start, last_start) << path << ": operations out of order";
        EXPECT_GT(duration, 0);
        EXPECT_NEAR(throughput, bytes / duration, bytes / duration * 1e-5) << path;
        // Within the phase's time (taken from the same start, to the last task's end).
        EXPECT_LE(start + duration, phase->seconds() + 1e-6) << path << " line " << i + 1;
        last_start = start;
      }
    }
  }
  // A directory the workers may not write in is refused by each, naming its roots, before any
  // test directory is made.
  Mdtest outside = Run({"-d", dir_ + "/refused", "-n", "4", "--savePerOpDataCSV", "/per-op"}, "per-op-csv-outside", false);
  EXPECT_NE(outside.exit_code, 0);
  EXPECT_THAT(outside.err, HasSubstr("--savePerOpDataCSV /per-op: directory '/' (/) is outside this worker's allowed roots"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/refused"));
}

TEST_F(MdtestEndToEnd, FilesOnlyInASharedDirectoryWithData) {
  Mdtest run = Run({"-d", dir_, "-n", "200", "-F", "-w", "4096", "-e", "4096"}, "files");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(Phase(run.report, "Directory creation"), nullptr);
  ASSERT_NE(Phase(run.report, "File creation"), nullptr);
  EXPECT_EQ(Phase(run.report, "File creation")->items(), 800u);
  EXPECT_EQ(Phase(run.report, "File read")->items(), 800u);
  EXPECT_EQ(DirectoryEntries(dir_), 0);
  // Each worker's tasks say what CPU they used (creating 400 files with data costs some).
  ASSERT_EQ(Phase(run.report, "File creation")->workers_size(), 2);
  for (const auto& w : Phase(run.report, "File creation")->workers()) {
    EXPECT_GT(w.usr_cpu() + w.sys_cpu(), 0.0) << w.worker() << ": mdtest tasks reported no CPU";
  }
  // The text form carries mdtest 4's SUMMARY table: file rows only with -F, then the tree's;
  // times only with -P (both tables) or -Z (times instead).
  Mdtest text = Run({"-d", dir_, "-n", "50", "-F"}, "files-text", false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("\n4 tasks, 200 files\n\nSUMMARY rate (in ops/sec): (of 1 iterations)\n"));
  EXPECT_THAT(text.out, HasSubstr("\n   File creation     "));
  EXPECT_THAT(text.out, HasSubstr("\n   Tree removal           "));
  EXPECT_THAT(text.out, Not(HasSubstr("Directory creation")));
  EXPECT_THAT(text.out, Not(HasSubstr("SUMMARY time")));
  Mdtest both = Run({"-d", dir_, "-n", "50", "-F", "-P"}, "files-text-P", false);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_THAT(both.out, HasSubstr("SUMMARY rate (in ops/sec)"));
  EXPECT_THAT(both.out, HasSubstr("SUMMARY time (in ms/op)"));
}

// -W --stonewall-every-phase stops every phase at the stonewall and reports what the tasks did
// until then. What a cut leaves half-done is completed afterwards, untimed (wear-out): creation
// evens every task out to the largest count (mdtest's "Continue stonewall"), so stat and read
// find every file, and removal finishes, so the tree is empty afterwards.
TEST_F(MdtestEndToEnd, StonewallStopsEveryPhaseAndLeavesNothingBehind) {
  const auto started = std::chrono::steady_clock::now();
  const std::string results = TempDir() + "/stonewall-results";
  const std::string per_op = TempDir() + "/stonewall-ops";
  ::mkdir(per_op.c_str(), 0755);
  Mdtest run = Run({"-d", dir_, "-n", "2000000", "-F", "-W", "1", "--stonewall-every-phase", "--results-dir", results, "--savePerOpDataCSV",
                    per_op + "/ops"},
                   "stonewall");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto* create = Phase(run.report, "File creation");
  ASSERT_NE(create, nullptr);
  EXPECT_TRUE(create->stonewalled());
  EXPECT_GT(create->items(), 0u);
  EXPECT_LT(create->items(), 4u * 2000000);
  EXPECT_GT(create->seconds(), 0.9);
  EXPECT_LT(create->seconds(), 2.5) << "the phase stops at about a second";
  EXPECT_EQ(static_cast<double>(create->items()), create->task_items_mean() * 4) << "items done per task add up";
  // After the wear-out every task has the largest count: stat and read cover all of them.
  const uint64_t evened = 4 * create->task_items_max();
  EXPECT_EQ(create->items() + create->wear_out_items(), evened);
  for (const char* later : {"File stat", "File read", "File removal"}) {
    const auto* p = Phase(run.report, later);
    ASSERT_NE(p, nullptr) << later;
    EXPECT_EQ(p->errors(), 0u) << later;
    EXPECT_LT(p->seconds(), 2.5) << later << ": stops at the stonewall too";
    if (!p->stonewalled()) {
      EXPECT_EQ(p->items(), evened) << later;
    }
  }
  const auto* removal = Phase(run.report, "File removal");
  EXPECT_EQ(removal->items() + removal->wear_out_items(), evened) << "removal finished what the stonewall cut";
  // --savePerOpDataCSV: as in mdtest, whose wear-out is part of the phase, each task's file holds
  // its stonewalled pass and then its wear-out: a line per item it ended up with, one header,
  // the wear-out's times counted on from the pass's start.
  for (const char* phase : {"File creation", "File removal"}) {
    for (int task = 0; task < 4; ++task) {
      const std::string path = absl::StrFormat("%s/ops-%s-%05d.csv", per_op, phase, task);
      const std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty());
      EXPECT_EQ(lines.size(), 1 + create->task_items_max()) << path;
      EXPECT_EQ(std::count(lines.begin(), lines.end(), "time,runtime,tp"), 1) << path;
      double last_start = 0;
      for (size_t i = 1; i < lines.size(); ++i) {
        double start = 0;
        ASSERT_TRUE(absl::SimpleAtod(std::vector<std::string>(absl::StrSplit(lines[i], ','))[0], &start)) << path << ": " << lines[i];
        ASSERT_GE(start, last_start) << path << " line " << i + 1 << ": the wear-out's times start over";
        last_start = start;
      }
    }
  }
  EXPECT_EQ(DirectoryEntries(dir_), 0) << "the test removed every file and its tree";
  // As sent to the workers: the stonewall on every phase, never on a wear-out.
  const std::vector<std::string> saved = DirectoryNames(results);
  ASSERT_EQ(saved.size(), 1u);
  v1::RunSpec resolved;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(results + "/" + saved[0] + "/job-resolved.json"), &resolved).ok());
  std::map<std::string, bool> stonewalled_job;
  for (const auto& job : resolved.jobs()) stonewalled_job[job.name()] = job.metadata().stonewall_ns() == 1'000'000'000;
  EXPECT_EQ(stonewalled_job, (std::map<std::string, bool>{{"File creation", true},
                                                          {"File creation (wear-out)", false},
                                                          {"File stat", true},
                                                          {"File read", true},
                                                          {"File removal", true},
                                                          {"File removal (wear-out)", false},
                                                          {"Tree creation", true},
                                                          {"Tree creation (wear-out)", false},
                                                          {"Tree removal", true},
                                                          {"Tree removal (wear-out)", false}}));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  // mdtest 4's -W (the default): creation stops, the rest does not; the SUMMARY's creation rate
  // counts every item, the evening out included, as mdtest's does.
  const std::string mdtest_results = TempDir() + "/stonewall-mdtest-results";
  Mdtest creation_only = Run({"-d", dir_, "-n", "2000000", "-F", "-W", "1", "-C", "-r", "--results-dir", mdtest_results}, "stonewall-creation");
  ASSERT_EQ(creation_only.exit_code, 0) << creation_only.err;
  const auto* made = Phase(creation_only.report, "File creation");
  ASSERT_NE(made, nullptr);
  EXPECT_TRUE(made->stonewalled());
  const auto* removed = Phase(creation_only.report, "File removal");
  ASSERT_NE(removed, nullptr);
  EXPECT_FALSE(removed->stonewalled()) << "mdtest stops creation only";
  EXPECT_EQ(removed->items(), made->items() + made->wear_out_items()) << "removal removes every file";
  EXPECT_EQ(removed->wear_out_items(), 0u);
  for (const auto& row : creation_only.report.summary_rate()) {
    if (row.operation() != "File creation") continue;
    EXPECT_DOUBLE_EQ(row.mean(), static_cast<double>(made->items() + made->wear_out_items()) / (made->seconds() + made->wear_out_seconds()));
  }
  EXPECT_EQ(DirectoryEntries(dir_), 0);
  // -W cannot be evened out when task 0 creates every task's items (-c).
  Mdtest refused = Run({"-d", dir_, "-n", "10", "-W", "1", "-c"}, "stonewall-c", false);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("-W is not compatible with -c"));
}

// mdtest's data checks: files a run wrote verify on a later read (-X); a file changed since
// fails it, counted and named as mdtest does, and the run goes on.
TEST_F(MdtestEndToEnd, ReadVerificationCountsFilesWithOtherData) {
  Mdtest made = Run({"-d", dir_, "-n", "10", "-F", "-C", "-w", "4096", "-G", "7", "--dataPacketType=o"}, "verify-create", false);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  Mdtest clean = Run({"-d", dir_, "-n", "10", "-F", "-E", "-X", "-e", "4096", "-G", "7", "--dataPacketType=o"}, "verify-clean", false);
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_THAT(clean.out, Not(HasSubstr("ERROR: verifying")));
  {
    std::fstream f(dir_ + "/test-dir.0-0/mdtest_tree.0/file.mdtest.1.3", std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp(100);
    f.put('!');
  }
  Mdtest changed = Run({"-d", dir_, "-n", "10", "-F", "-E", "-X", "-e", "4096", "-G", "7", "--dataPacketType=o"}, "verify-changed", false);
  EXPECT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_THAT(changed.out, HasSubstr("\nERROR: verifying the data on read (1 errors)! Take the performance values with care!\n"));
  Mdtest seed = Run({"-d", dir_, "-n", "10", "-F", "-E", "-X", "-e", "4096", "-G", "8", "--dataPacketType=o"}, "verify-seed", false);
  EXPECT_THAT(seed.out, HasSubstr("ERROR: verifying the data on read (40 errors)")) << "another seed, other data in every file";
  // Each of those reads counts among the phase's items and in its rate, as in mdtest.
  Mdtest counted = Run({"-d", dir_, "-n", "10", "-F", "-E", "-X", "-e", "4096", "-G", "8", "--dataPacketType=o"}, "verify-seed-json");
  ASSERT_EQ(counted.exit_code, 0) << counted.err;
  EXPECT_EQ(counted.report.verification_errors(), 40u);
  const v1::MdtestPhaseResult* read = Phase(counted.report, "File read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->items(), 40u);
  EXPECT_GT(read->rate(), 0);
  Mdtest removed = Run({"-d", dir_, "-n", "10", "-F", "-r"}, "verify-remove", false);
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
}

// -x: a stonewalled creation writes the count every task evened out to; a later run without -C
// reads it and works on that many items.
TEST_F(MdtestEndToEnd, StonewallStatusFileCarriesTheCountToTheNextRun) {
  const std::string status = TempDir() + "/stonewall-status";
  Mdtest made = Run({"-d", dir_, "-n", "2000000", "-F", "-C", "-W", "1", "-x", status}, "status-create");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto* create = Phase(made.report, "File creation");
  ASSERT_NE(create, nullptr);
  ASSERT_TRUE(create->stonewalled());
  EXPECT_EQ(ReadFile(status), std::to_string(create->task_items_max()));
  Mdtest rest = Run({"-d", dir_, "-n", "2000000", "-F", "-T", "-r", "-x", status}, "status-rest");
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  ASSERT_NE(Phase(rest.report, "File stat"), nullptr);
  EXPECT_EQ(Phase(rest.report, "File stat")->items(), 4 * create->task_items_max());
  EXPECT_EQ(Phase(rest.report, "File removal")->items(), 4 * create->task_items_max());
  EXPECT_EQ(DirectoryEntries(dir_), 0);
}

// As mdtest 4: a stat or removal of an item that is not there prints mdtest's WARNING for it,
// counts it among the phase's items, and the run goes on (exit 0); each task names its first
// 100 and counts the rest; --warningAsErrors makes the first one end the run.
TEST_F(MdtestEndToEnd, AMissingItemIsAWarningAndTheRunGoesOn) {
  Mdtest made = Run({"-d", dir_, "-n", "150", "-F", "-u", "-C"}, "warn-made");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string tree = dir_ + "/test-dir.0-0";
  const std::string lost = tree + "/mdtest_tree.0.0/file.mdtest.0.7";
  ASSERT_EQ(::unlink(lost.c_str()), 0) << lost;
  for (int i = 0; i < 150; ++i) {  // every file of task 3 (the second worker's second)
    const std::string file = absl::StrCat(tree, "/mdtest_tree.3.0/file.mdtest.3.", i);
    ASSERT_EQ(::unlink(file.c_str()), 0) << file;
  }
  Mdtest stat = Run({"-d", dir_, "-n", "150", "-F", "-u", "-T"}, "warn-stat", false);
  EXPECT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("WARNING: unable to stat file " + lost + "\n")) << stat.out;
  EXPECT_THAT(stat.out, HasSubstr(absl::StrCat("WARNING: unable to stat file ", tree, "/mdtest_tree.3.0/file.mdtest.3.99\n")));
  EXPECT_THAT(stat.out, Not(HasSubstr("file.mdtest.3.100\n")));  // past the 100 a task names
  EXPECT_EQ(CountIn(stat.out, "WARNING: unable to stat file "), 101u) << stat.out;
  EXPECT_THAT(stat.out, HasSubstr("WARNING: 50 more failed operations of file stat not named"));
  EXPECT_LT(stat.out.find("WARNING: unable to stat file"), stat.out.find("SUMMARY rate")) << "warnings come before the table";
  EXPECT_THAT(stat.out, HasSubstr("File stat"));

  Mdtest strict = Run({"-d", dir_, "-n", "150", "-F", "-u", "-T", "--warningAsErrors"}, "warn-strict", false);
  EXPECT_EQ(strict.exit_code, 1) << strict.err;
  EXPECT_THAT(strict.err, HasSubstr("file stat of ")) << strict.err;
  EXPECT_TRUE(std::filesystem::exists(tree + "/mdtest_tree.0.0/file.mdtest.0.8")) << "a run without -C removed the tree it failed in";

  Mdtest removed = Run({"-d", dir_, "-n", "150", "-F", "-u", "-r"}, "warn-remove");
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  const v1::MdtestPhaseResult* removal = Phase(removed.report, "File removal");
  ASSERT_NE(removal, nullptr) << removed.err;
  EXPECT_EQ(removal->items(), 4u * 150) << "failed removals count among the items, as mdtest counts them";
  EXPECT_EQ(removal->item_failures(), 151u);
  EXPECT_EQ(removal->errors(), 151u);
  EXPECT_EQ(removal->item_warnings_size(), 101);
  EXPECT_THAT(std::vector<std::string>(removal->item_warnings().begin(), removal->item_warnings().end()),
              ::testing::Contains(absl::StrCat("[RANK 000]: unlink() of file \"", lost, "\" failed")));
  EXPECT_EQ(DirectoryEntries(dir_), 0) << "the removal went on past the missing files";
}

// -a DUMMY, mdtest's DUMMY backend: every phase runs and counts every item, nothing is made (not
// even -d), the output says so as mdtest's does, and its delays are waited for.
TEST_F(MdtestEndToEnd, DummyBackendMakesNothing) {
  const std::string absent = dir_ + "/not-there";
  Mdtest text = Run({"-d", absent, "-n", "200", "-u", "-a", "DUMMY"}, "dummy-text", false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(CountIn(text.out, "WARNING: DUMMY initialized\n"), 4u) << text.out;
  EXPECT_EQ(CountIn(text.out, "WARNING: DUMMY finalized\n"), 4u) << text.out;
  EXPECT_EQ(text.out.find("WARNING: DUMMY initialized\n"), 0u) << "mdtest's tasks say it before the start";
  EXPECT_THAT(text.out, HasSubstr("FS                  : 0.0 GiB   Used FS: 0.0%   Inodes: 0.0 Mi   Used Inodes: 0.0%\n"));
  EXPECT_FALSE(std::filesystem::exists(absent)) << "-a DUMMY made the test directory";
  EXPECT_EQ(DirectoryEntries(dir_), 0);

  Mdtest delayed = Run({"-d", absent, "-n", "10", "-F", "-C", "-w", "4", "-a", "dummy", "--dummy.delay-create=20000", "--dummy.delay-xfer=5000",
                        "--dummy.delay-close=5000"},
                       "dummy-delayed");
  ASSERT_EQ(delayed.exit_code, 0) << delayed.err;
  EXPECT_EQ(delayed.report.api(), "DUMMY");
  const v1::MdtestPhaseResult* created = Phase(delayed.report, "File creation");
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(created->items(), 40u);
  // Each task's 10 creations wait 30 ms each: 300 ms at least, 40 items in all.
  EXPECT_GE(created->seconds(), 0.3);
  EXPECT_LE(created->rate(), 40 / 0.3);
  EXPECT_FALSE(std::filesystem::exists(absent));

  Mdtest refused = Run({"-d", absent, "-n", "10", "-a", "DUMMY", "-k"}, "dummy-k", false);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("-k: mdtest's DUMMY backend has no mknod"));
}

// -d on workers the controller did not start (each its own host) as mdtest's ranks treat it: a
// missing test directory is made, not its parents, and removed again at the end of a run that
// removes what it made; one that existed stays, as does the one a run with -C alone made.
TEST_F(MdtestEndToEnd, TestDirectoryMadeAndRemovedAsMdtest) {
  namespace fs = std::filesystem;
  const std::string made = dir_ + "/made";
  Mdtest full = Run({"-d", made, "-n", "8", "-u"}, "made-full", false);
  EXPECT_EQ(full.exit_code, 0) << full.err;
  EXPECT_FALSE(fs::exists(made)) << "the test directory the run made is left behind";

  Mdtest parents = Run({"-d", dir_ + "/no/such/md", "-n", "8"}, "made-parents", false);
  EXPECT_EQ(parents.exit_code, 1);
  EXPECT_THAT(parents.err, HasSubstr("/no does not exist (as mdtest, only the test directory itself is made, not its parents)"));
  EXPECT_FALSE(fs::exists(dir_ + "/no")) << "a parent of the test directory was made";

  Mdtest create = Run({"-d", made, "-n", "8", "-u", "-C"}, "made-create", false);
  EXPECT_EQ(create.exit_code, 0) << create.err;
  EXPECT_TRUE(fs::exists(made + "/test-dir.0-0")) << "-C alone leaves the tree, as mdtest";
  Mdtest remove = Run({"-d", made, "-n", "8", "-u", "-r"}, "made-remove", false);
  EXPECT_EQ(remove.exit_code, 0) << remove.err;
  EXPECT_FALSE(fs::exists(made + "/test-dir.0-0"));
  EXPECT_TRUE(fs::is_directory(made)) << "a test directory this run did not make was removed";

  // Two test directories, one there already: only the one the run made goes.
  const std::string other = dir_ + "/other";
  Mdtest two = Run({"-d", made + "@" + other, "-n", "8", "-u", "-F"}, "made-two", false);
  EXPECT_EQ(two.exit_code, 0) << two.err;
  EXPECT_TRUE(fs::is_directory(made));
  EXPECT_TRUE(fs::is_empty(made));
  EXPECT_FALSE(fs::exists(other));
}

TEST_F(MdtestEndToEnd, BadTargetsAndOptionsAreClearErrors) {
  const std::string file = dir_ + "/not-a-directory";
  std::ofstream(file) << "x";
  Mdtest run = Run({"-d", file, "-n", "10"}, "bad-dir", false);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("not-a-directory"));
  Mdtest option = Run({"-d", dir_, "-n", "10", "-B", "1"}, "bad-option", false);
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_THAT(option.err, HasSubstr("-B (no barriers between phases): mdtest 4 refuses every run with it"));
  Mdtest unknown = Run({"-d", dir_, "-n", "10", "-q"}, "unknown-option", false);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown option -q: neither mdtest nor iofleet mdtest has it"));
  Mdtest lustre = Run({"-d", dir_, "-n", "10", "-g"}, "unimplemented-option", false);
  EXPECT_EQ(lustre.exit_code, 2);
  EXPECT_THAT(lustre.err, HasSubstr("mdtest option -g (a global default directory layout for test subdirectories, Lustre's) is not implemented"));
  // mdtest's directory loops with an option they are not supported with: refused by name.
  Mdtest loops = Run({"-d", dir_, "-n", "10", "-I", "5", "-R"}, "loops-random", false);
  EXPECT_EQ(loops.exit_code, 2);
  EXPECT_THAT(loops.err, HasSubstr("-R is not supported with them"));
  Mdtest api = Run({"-d", dir_, "-n", "10", "-a", "MPIIO"}, "bad-api", false);
  EXPECT_EQ(api.exit_code, 2);
  EXPECT_THAT(api.err, HasSubstr("-a MPIIO: iofleet mdtest has mdtest's POSIX and DUMMY backends (-a POSIX, -a DUMMY)"));
  Mdtest verify = Run({"-d", dir_, "-n", "10", "-X", "-C"}, "bad-verify", false);
  EXPECT_EQ(verify.exit_code, 2);
  EXPECT_THAT(verify.err, HasSubstr("Verify read requires that the read test is used"));
  // mdtest's warning, an error when asked: nothing runs.
  Mdtest warned = Run({"-d", dir_ + "/warned", "-n", "10", "-E", "--warningAsErrors"}, "warning-as-error", false);
  EXPECT_EQ(warned.exit_code, 1);
  EXPECT_THAT(warned.err, HasSubstr("WARNING: Read bytes is 0, thus, a read test will actually just open/close"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/warned")) << "a refused run leaves nothing";
  Mdtest missing = Run({"-n", "10"}, "no-dir", false);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("-d DIR is required"));
  // Found by the fuzzer: a tree this deep overflowed the directory count.
  Mdtest deep = Run({"-d", dir_, "-n", "5", "-z", "225", "-b", "10"}, "too-deep", false);
  EXPECT_EQ(deep.exit_code, 2);
  EXPECT_THAT(deep.err, HasSubstr("-z 225 with -b 10 makes a tree of more than 4294967296 directories"));
  Mdtest deeper = Run({"-d", dir_, "-n", "5", "-z", "3200000000", "-b", "1"}, "too-deep-path", false);
  EXPECT_EQ(deeper.exit_code, 2);
  EXPECT_THAT(deeper.err, HasSubstr("-z 3200000000: a tree deeper than 256 levels does not fit in a path"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST_F(MdtestEndToEnd, InterruptedRunCleansUpAfterItself) {
  std::vector<std::string> argv = {Runfile("controller/iofleet"), "mdtest", "-d", dir_, "-n", "3000000", "-F", "-u",
                                   "--hosts", absl::StrCat(a_->address(), ",", b_->address()), "--tasks-per-worker", "2"};
  TestProcess process(argv, TempDir() + "/md-interrupt");
  // Once the file creation phase is under way (its progress line), Ctrl-C.
  ASSERT_TRUE(process.WaitForOutput("(File creation)", std::chrono::seconds(30), /*in_stderr=*/true)) << process.Stderr();
  process.Signal(SIGINT);
  const auto exit_code = process.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, 1);
  EXPECT_THAT(process.Stderr(), HasSubstr("interrupted by the user"));
  EXPECT_THAT(process.Stderr(), HasSubstr("cleanup after the interruption removed what the run had created"));
  EXPECT_EQ(DirectoryEntries(dir_), 0) << "files or directories were left behind";
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// One worker runs every task (mpirun on one node): its phases follow each other on the worker
// (RunSpec.jobs_in_sequence). The progress lines follow the phase that runs — not the last one
// of the sequence, idle, at 0% — and Ctrl-C in the middle of one stops it and the rest, reports
// what ran and cleans up.
TEST_F(MdtestEndToEnd, PhasesInSequenceShowTheirProgressAndStopOnCtrlC) {
  const std::string json_path = TempDir() + "/md-sequence.json";
  TestProcess process({Runfile("controller/iofleet"), "mdtest", "-d", dir_, "-n", "3000000", "-F", "-u", "--hosts", a_->address(),
                       "--tasks-per-worker", "2", "--output-format", "json", "--output", json_path},
                      TempDir() + "/md-sequence");
  // Two progress lines of the file creation (a second apart): it runs in the sequence.
  ASSERT_TRUE(process.WaitForOutput("(File creation)", std::chrono::seconds(30), /*in_stderr=*/true)) << process.Stderr();
  const std::string first_line = process.Stderr();
  ASSERT_TRUE(process.WaitForOutput("(File creation)", std::chrono::seconds(30), /*in_stderr=*/true, first_line.size())) << process.Stderr();
  const std::string err = InterruptCreation(process, dir_, json_path);
  int progress_lines = 0, last_phase = 0;
  for (absl::string_view line : absl::StrSplit(err, absl::ByAnyChar("\r\n"))) {
    const size_t at = line.find(" phase ");
    if (!absl::StartsWith(line, "iofleet: ") || at == absl::string_view::npos) continue;
    ++progress_lines;
    int phase = 0;
    ASSERT_TRUE(absl::SimpleAtoi(line.substr(at + 7, line.find('/', at) - at - 7), &phase)) << line;
    EXPECT_GE(phase, last_phase) << "progress went back a phase: " << line;
    last_phase = phase;
    EXPECT_THAT(std::string(line), HasSubstr("| meta ")) << "a progress line of a phase doing nothing";
    EXPECT_THAT(std::string(line), Not(HasSubstr("Tree removal"))) << "the last phase, never begun";
  }
  EXPECT_GE(progress_lines, 2) << err;
}

// Several workers run mdtest's phases as one sequence (RunSpec.jobs_released): each says when
// its tasks have ended a phase, and the controller releases the next on all of them at one
// instant — one prepare for the phases after the first (whose test directory the workers make),
// not one per phase; every phase still finds what the one before made, on both workers.
TEST_F(MdtestEndToEnd, PhasesAcrossWorkersFollowOnTheControllersRelease) {
  Mdtest run = Run({"-d", dir_, "-n", "40", "-z", "1", "-b", "2", "-u", "-w", "10", "-e", "10", "-i", "2"}, "released");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.report.phases_size(), 20);
  for (const auto& p : run.report.phases()) {
    SCOPED_TRACE(absl::StrCat("iteration ", p.iteration(), " ", p.operation()));
    EXPECT_EQ(p.errors(), 0u);
    EXPECT_EQ(p.workers_size(), 2);
    EXPECT_GT(p.rate(), 0);
    if (!absl::StartsWith(p.operation(), "Tree")) {
      EXPECT_EQ(p.items(), 4u * run.report.items_per_task());
    }
  }
  EXPECT_EQ(DirectoryEntries(dir_), 0) << "the last tree removal ran after everything else";
  for (TestWorker* worker : {a_.get(), b_.get()}) {
    const std::string log = worker->process().Stderr();
    EXPECT_EQ(CountIn(log, ": prepared "), 2u) << "the first phase, then the other nineteen as one sequence:\n" << log;
  }
}

// Ctrl-C in the middle of a phase of a sequence across workers stops it on both, and the rest;
// what ran is reported and the cleanup removes what the run made.
TEST_F(MdtestEndToEnd, CtrlCInASequenceAcrossWorkersStopsEveryWorker) {
  const std::string json_path = TempDir() + "/md-released-ctrl-c.json";
  TestProcess process({Runfile("controller/iofleet"), "mdtest", "-d", dir_, "-n", "3000000", "-F", "-u", "--hosts",
                       absl::StrCat(a_->address(), ",", b_->address()), "--tasks-per-worker", "1", "--output-format", "json", "--output", json_path},
                      TempDir() + "/md-released-ctrl-c");
  ASSERT_TRUE(process.WaitForOutput("(File creation)", std::chrono::seconds(30), /*in_stderr=*/true)) << process.Stderr();
  InterruptCreation(process, dir_, json_path);
  EXPECT_LT(BytesMovedDuring(a_->process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
  EXPECT_LT(BytesMovedDuring(b_->process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
}

// As mdtest stops at its first failure: a phase that fails on one worker (a read of a file that
// is a directory there) ends everywhere, and the phases after it run on no worker (the removal
// among them: what is left is the failure's cleanup's to remove).
TEST_F(MdtestEndToEnd, APhaseThatFailsOnOneWorkerStopsTheRestOnEvery) {
  Mdtest made = Run({"-d", dir_, "-n", "10", "-F", "-u", "-C", "-w", "10"}, "fails-made");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // Task 3 (the second worker's second) finds a directory where its file 7 was.
  const std::string file = dir_ + "/test-dir.0-0/mdtest_tree.3.0/file.mdtest.3.7";
  ASSERT_EQ(::unlink(file.c_str()), 0) << file;
  ASSERT_EQ(::mkdir(file.c_str(), 0755), 0);
  Mdtest run = Run({"-d", dir_, "-n", "10", "-F", "-u", "-T", "-E", "-e", "10", "-r"}, "fails");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("a phase failed on worker ", b_->address(), ": the phases after it are not run"))) << run.err;
  const v1::MdtestPhaseResult* read = Phase(run.report, "File read");
  ASSERT_NE(read, nullptr) << run.err;
  EXPECT_GT(read->errors(), 0u);
  const v1::MdtestPhaseResult* removal = Phase(run.report, "File removal");
  EXPECT_TRUE(removal == nullptr || removal->items() == 0) << "the removal ran after the failed read";
}

// A worker lost in the middle of a sequence across workers: the other ends the phase under way
// (as after a loss between phases), and the phases after it run nowhere, as mdtest's ranks do
// not go on without one of them; the run ends, names the lost worker, and reports what it
// measured. (Ten iterations of phases of 20,000 items a task: the loss, in the second phase,
// comes within the first sequence, which runs 63 of the 100 phases.)
TEST_F(MdtestEndToEnd, AWorkerLostInASequenceEndsItOnTheOthers) {
  const std::string json_path = TempDir() + "/md-released-lost.json";
  const std::string lost = b_->address();
  TestProcess process({Runfile("controller/iofleet"), "mdtest", "-d", dir_, "-n", "20000", "-u", "-i", "10", "--hosts",
                       absl::StrCat(a_->address(), ",", lost), "--tasks-per-worker", "1", "--output-format", "json", "--output", json_path},
                      TempDir() + "/md-released-lost");
  ASSERT_TRUE(process.WaitForOutput("(Directory creation)", std::chrono::seconds(30), /*in_stderr=*/true)) << process.Stderr();
  b_.reset();  // SIGKILL: the worker vanishes mid-sequence
  const std::optional<int> exit_code = process.Wait(std::chrono::seconds(60));
  ASSERT_TRUE(exit_code.has_value()) << "the other worker waits for the lost one: " << process.Stderr();
  EXPECT_EQ(*exit_code, 1);
  const std::string err = process.Stderr();
  EXPECT_THAT(err, HasSubstr(absl::StrCat("worker ", lost, " was lost: the phases after it are not run"))) << err;
  v1::MdtestReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json_path), &report).ok()) << err;
  ASSERT_GT(report.phases_size(), 0) << err;
  EXPECT_LT(report.phases_size(), 100 * 10) << "every phase ran";
  EXPECT_GT(report.phases(0).items(), 0u) << "what ran before the loss is reported";
  EXPECT_LT(BytesMovedDuring(a_->process().pid(), std::chrono::seconds(1)), kIdleBytesPerSecond) << "orphan load";
}

TEST_F(MdtestEndToEnd, SharedFilesAndCollectiveCreates) {
  Mdtest shared = Run({"-d", dir_, "-n", "50", "-S"}, "shared");
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_EQ(Phase(shared.report, "Directory creation"), nullptr);  // -S: files only
  EXPECT_EQ(Phase(shared.report, "File creation")->items(), 4u * 50);  // every task opens the same 50
  EXPECT_EQ(Phase(shared.report, "File removal")->items(), 50u);       // task 0 removes them
  EXPECT_EQ(DirectoryEntries(dir_), 0);
  Mdtest collective = Run({"-d", dir_, "-n", "30", "-c", "-u"}, "collective");
  ASSERT_EQ(collective.exit_code, 0) << collective.err;
  const auto* create = Phase(collective.report, "File creation");
  EXPECT_EQ(create->items(), 4u * 30);
  EXPECT_EQ(create->task_items_max(), 4u * 30);  // all by task 0
  EXPECT_EQ(create->task_items_min(), 0u);
  EXPECT_EQ(Phase(collective.report, "File removal")->items(), 4u * 30);
  EXPECT_EQ(DirectoryEntries(dir_), 0);
  Mdtest bad = Run({"-d", dir_, "-n", "10", "-S", "-u"}, "shared-unique", false);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("-u is not compatible with -S"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST_F(MdtestEndToEnd, ReadOnlyTargetIsAClearError) {
  const std::string ro = dir_ + "/ro";
  ASSERT_EQ(::mkdir(ro.c_str(), 0755), 0);
  if (std::system(("mount -t tmpfs -o ro,size=1m tmpfs " + ro + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a read-only tmpfs here";
  }
  struct Unmount {
    std::string dir;
    ~Unmount() {
      if (std::system(("umount " + dir + " 2>/dev/null").c_str()) != 0) {
      }  // not mounted (the test failed before): nothing to undo
    }
  } unmount{ro};
  Mdtest run = Run({"-d", ro, "-n", "10", "-v"}, "read-only", false);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("Read-only file system"));
  EXPECT_THAT(run.err, HasSubstr(ro));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// A worker that accepts a run and then refuses to start it: the one way a phase's own
// problem (not a worker's error) arises, as a worker whose clock is far off would.
class RefusingWorker final : public v1::WorkerService::Service {
 public:
  grpc::Status Hello(grpc::ServerContext*, const v1::HelloRequest*, v1::HelloResponse* response) override {
    response->set_protocol_version(kProtocolVersion);
    response->set_min_compatible_version(kMinCompatibleProtocolVersion);
    response->set_hostname("refusing");
    response->set_cores(1);
    response->add_allowed_roots("/");
    return grpc::Status::OK;
  }
  grpc::Status Prepare(grpc::ServerContext*, const v1::PrepareRequest*, v1::PrepareResponse*) override { return grpc::Status::OK; }
  grpc::Status Start(grpc::ServerContext*, const v1::StartRequest*, v1::StartResponse*) override {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "start refused by the test's worker");
  }
  grpc::Status Stop(grpc::ServerContext*, const v1::StopRequest*, v1::StopResponse*) override { return grpc::Status::OK; }
  grpc::Status Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) override { return grpc::Status::OK; }
  grpc::Status StreamIntervals(grpc::ServerContext*, const v1::StreamIntervalsRequest*, grpc::ServerWriter<v1::IntervalReport>*) override {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such run");
  }
  // The session: answers hello, probes and prepare, refuses every start, ends a stopped run.
  grpc::Status Session(grpc::ServerContext*, grpc::ServerReaderWriter<v1::WorkerMessage, v1::ControllerMessage>* stream) override {
    v1::ControllerMessage in;
    while (stream->Read(&in)) {
      v1::WorkerMessage out;
      if (in.has_hello()) {
        Hello(nullptr, &in.hello(), out.mutable_hello());
      } else if (in.has_prepare()) {
        out.mutable_prepared()->set_run_id(in.prepare().run_id());
      } else if (in.has_start()) {
        v1::SessionProblem* problem = out.mutable_problem();
        problem->set_run_id(in.start().run_id());
        problem->set_command("start");
        problem->set_code(static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
        problem->set_message("start refused by the test's worker");
      } else if (in.has_stop()) {
        out.mutable_ended()->set_run_id(in.stop().run_id());
      } else if (in.has_probe()) {
        out.mutable_echo()->set_sequence(in.probe().sequence());
        out.mutable_echo()->set_controller_send_unix_ns(in.probe().controller_send_unix_ns());
      } else {
        continue;
      }
      if (!stream->Write(out)) break;
    }
    return grpc::Status::OK;
  }
};

TEST_F(MdtestEndToEnd, EachProblemOfAPhaseIsReportedOnce) {
  RefusingWorker service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  TestProcess process({Runfile("controller/iofleet"), "mdtest", "-d", dir_, "-n", "5", "-F", "--hosts",
                       absl::StrCat(a_->address(), ",127.0.0.1:", port), "--results-dir", "none"},
                      TempDir() + "/md-refused");
  EXPECT_EQ(process.Wait(std::chrono::seconds(60)).value_or(-1), 1);
  const std::string err = process.Stderr();
  size_t times = 0;
  for (size_t at = err.find("start refused by the test's worker"); at != std::string::npos;
       at = err.find("start refused by the test's worker", at + 1)) {
    ++times;
  }
  EXPECT_EQ(times, 1u) << err;
  server->Shutdown();
}

}  // namespace
}  // namespace iofleet
