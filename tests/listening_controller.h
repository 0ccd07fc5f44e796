// A test fixture for controllers that listen (iofleet run --listen 127.0.0.1:0 --expect-workers
// N) and the workers or relays that dial them: a directory per test, job files that write
// under it, the controller started with its port read off its banner, its JSON report read back.
#ifndef IOFLEET_TESTS_LISTENING_CONTROLLER_H_
#define IOFLEET_TESTS_LISTENING_CONTROLLER_H_

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/test_process.h"

namespace iofleet::testing {

class ListeningControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = TempDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    data_ = base_ + "/data";
    ::mkdir(base_.c_str(), 0755);
    ::mkdir(data_.c_str(), 0755);
  }
  // A job file whose jobs write under data_.
  std::string Job(const std::string& body) {
    const std::string path = base_ + "/job.fio";
    std::ofstream(path) << body << "directory=" << data_ << "\n";
    return path;
  }
  // The port a controller or relay started with --listen 127.0.0.1:0 listens on (empty if it
  // never said).
  static std::string PortOf(const TestProcess& process, int workers) {
    EXPECT_TRUE(process.WaitForOutput("for " + std::to_string(workers) + " worker(s)", std::chrono::seconds(20), true)) << process.Stderr();
    std::smatch port;
    const std::string err = process.Stderr();
    return std::regex_search(err, port, std::regex("\\(port ([0-9]+)\\)")) ? std::string(port[1]) : "";
  }
  // `iofleet run JOB --listen 127.0.0.1:0 --expect-workers N`, its report going to NAME.json;
  // port_ is where it listens.
  std::unique_ptr<TestProcess> Controller(const std::string& job, int workers, std::vector<std::string> extra = {},
                                          const std::string& name = "result") {
    std::vector<std::string> argv = {Runfile("controller/iofleet"), "run", job, "--listen", "127.0.0.1:0", "--expect-workers",
                                     std::to_string(workers), "--results-dir", "none", "--output-format", "iofleet-json",
                                     "--output", base_ + "/" + name + ".json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto controller = std::make_unique<TestProcess>(argv, base_ + "/" + name);
    port_ = PortOf(*controller, workers);
    return controller;
  }
  v1::RunReport Result(const std::string& name = "result") {
    v1::RunReport report;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(base_ + "/" + name + ".json"), &report).ok()) << name;
    return report;
  }
  std::string base_, data_, port_;
};

}  // namespace iofleet::testing

#endif  // IOFLEET_TESTS_LISTENING_CONTROLLER_H_
