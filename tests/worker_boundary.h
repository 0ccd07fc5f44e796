// The fixture of the worker-boundary tests (worker_boundary_e2e_test.cc, hostile_requests_e2e_test.cc):
// a root the worker is allowed, a directory outside it holding files named like a run's, and
// helpers to swap a directory for a symlink and to run the controller.
#ifndef IOFLEET_TESTS_WORKER_BOUNDARY_H_
#define IOFLEET_TESTS_WORKER_BOUNDARY_H_

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet::testing {

struct Outcome {
  int exit_code = -1;
  std::string err;
};

inline Outcome Wait(TestProcess& process) {
  Outcome outcome;
  outcome.exit_code = process.Wait(std::chrono::seconds(90)).value_or(-1);
  outcome.err = process.Stderr();
  return outcome;
}

inline std::vector<std::string> Controller(std::vector<std::string> args) {
  args.insert(args.begin(), Runfile("controller/iofleet"));
  args.insert(args.end(), {"--quiet", "--results-dir", "none"});
  return args;
}

class WorkerBoundary : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = absl::StrCat(TempDir(), "/boundary-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    root_ = base_ + "/root";
    outside_ = base_ + "/outside";
    ASSERT_EQ(::mkdir(base_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(outside_.c_str(), 0755), 0);
  }
  // Files outside the root named like the ones a run makes, so that a followed symlink would
  // stat, remove or overwrite them.
  void PlantOutside(const std::vector<std::string>& names) {
    for (const std::string& name : names) std::ofstream(outside_ + "/" + name) << "outside " << name;
  }
  void ExpectOutsideUntouched(const std::vector<std::string>& names) {
    EXPECT_EQ(DirectoryNames(outside_).size(), names.size()) << "something was created in or removed from the outside directory";
    for (const std::string& name : names) {
      EXPECT_EQ(testing::ReadFile(outside_ + "/" + name), "outside " + name) << name << " outside the root was changed or removed";
    }
  }
  // Replaces `path` (a directory the run made) with a symlink to the outside directory; the
  // real directory moves aside, still inside the root.
  void SwapForSymlink(const std::string& path) {
    ASSERT_EQ(::rename(path.c_str(), (path + ".moved").c_str()), 0) << path;
    ASSERT_EQ(::symlink(outside_.c_str(), path.c_str()), 0);
  }

  std::string base_, root_, outside_;
};

}  // namespace iofleet::testing

#endif  // IOFLEET_TESTS_WORKER_BOUNDARY_H_
