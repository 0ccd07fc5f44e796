#include "worker/per_op_csv.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class PerOperationCsvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/per_op_csv_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(PerOperationCsvTest, LinesAreMdtestsOpTimerLines) {
  const std::string path = dir_ + "/ops-File read-00001.csv";
  auto csv = PerOperationCsv::Create(path, 4096);
  ASSERT_TRUE(csv.ok()) << csv.status();
  (*csv)->Add(1.90734863e-05, 7.10487366e-05);
  (*csv)->Add(0.5, 0.25);
  ASSERT_TRUE((*csv)->Close().ok());
  // mdtest: fprintf(fd, "%.8e,%.8e,%e\n", time, runtime, size / runtime).
  EXPECT_THAT(Lines(path), ::testing::ElementsAre("time,runtime,tp", "1.90734863e-05,7.10487366e-05,5.765057e+07",
                                                  "5.00000000e-01,2.50000000e-01,1.638400e+04"));
}

TEST_F(PerOperationCsvTest, EveryOperationIsWrittenAcrossFullBuffers) {
  const std::string path = dir_ + "/many.csv";
  {
    std::ofstream old(path);
    old << "what an earlier run left\n";  // emptied, as mdtest's fopen("w")
  }
  auto csv = PerOperationCsv::Create(path, 1);
  ASSERT_TRUE(csv.ok()) << csv.status();
  const size_t n = 2 * PerOperationCsv::kBufferedOperations + 3;
  for (size_t i = 0; i < n; ++i) (*csv)->Add(static_cast<double>(i), 1.0);
  ASSERT_TRUE((*csv)->Close().ok());
  const std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), n + 1);
  EXPECT_EQ(lines[0], "time,runtime,tp");
  // In order, none lost or repeated at the buffer's boundaries.
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(std::strtod(lines[i + 1].c_str(), nullptr), static_cast<double>(i)) << "line " << i + 2;
}

// A wear-out's lines go on after its stonewalled pass's, under the one header.
TEST_F(PerOperationCsvTest, AppendingGoesOnAfterTheLinesThere) {
  const std::string path = dir_ + "/ops-File creation-00000.csv";
  auto pass = PerOperationCsv::Create(path, 1);
  ASSERT_TRUE(pass.ok()) << pass.status();
  (*pass)->Add(0.5, 1.0);
  ASSERT_TRUE((*pass)->Close().ok());
  auto wear_out = PerOperationCsv::Create(path, 1, /*append=*/true);
  ASSERT_TRUE(wear_out.ok()) << wear_out.status();
  (*wear_out)->Add(1.5, 1.0);
  ASSERT_TRUE((*wear_out)->Close().ok());
  EXPECT_THAT(Lines(path), ::testing::ElementsAre("time,runtime,tp", "5.00000000e-01,1.00000000e+00,1.000000e+00",
                                                  "1.50000000e+00,1.00000000e+00,1.000000e+00"));
  // Appending to a file not there yet starts it with the header.
  auto fresh = PerOperationCsv::Create(dir_ + "/new.csv", 1, /*append=*/true);
  ASSERT_TRUE(fresh.ok() && (*fresh)->Close().ok());
  EXPECT_THAT(Lines(dir_ + "/new.csv"), ::testing::ElementsAre("time,runtime,tp"));
}

TEST_F(PerOperationCsvTest, FailuresNameTheFile) {
  auto missing = PerOperationCsv::Create(dir_ + "/no/such/dir-File stat-00000.csv", 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr(dir_ + "/no/such/dir-File stat-00000.csv"));
  // A device that takes no data: the header cannot be written.
  auto full = PerOperationCsv::Create("/dev/full", 1);
  ASSERT_FALSE(full.ok());
  EXPECT_THAT(full.status().message(), ::testing::HasSubstr("writing /dev/full"));
}

}  // namespace
}  // namespace iofleet
