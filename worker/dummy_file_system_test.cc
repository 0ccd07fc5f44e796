#include "worker/dummy_file_system.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

using Clock = std::chrono::steady_clock;

std::string TempDir() { return std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp"; }

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(DummyFileSystem, EveryOperationSucceedsAndTouchesNothing) {
  DummyFileSystem fs(v1::MetadataPhase::DummyBackend(), 0, false);
  const std::string dir = TempDir() + "/dummy-dir", file = TempDir() + "/dummy-file";
  EXPECT_EQ(fs.MakeDirectory(dir), 0);
  EXPECT_FALSE(Exists(dir));
  const char data[16] = {1, 2, 3};
  EXPECT_EQ(fs.CreateFile(file, data, {}), 0);
  EXPECT_FALSE(Exists(file));
  uint64_t size = 99;
  EXPECT_EQ(fs.Stat(file, &size), 0);
  EXPECT_EQ(size, 0u);
  char buffer[4] = {'a', 'b', 'c', 'd'};
  EXPECT_EQ(fs.ReadFile(file, absl::MakeSpan(buffer), {}), 0);
  EXPECT_EQ(std::string(buffer, 4), "abcd") << "a DUMMY read reads nothing";
  EXPECT_EQ(fs.Rename(dir, dir + "-2"), 0);
  EXPECT_EQ(fs.Unlink(file), 0);
  EXPECT_EQ(fs.RemoveDirectory(dir), 0);
  EXPECT_EQ(fs.ListDirectory(TempDir(), ""), 0);
  EXPECT_FALSE(fs.EnsureFile(file, 4096, true, false, nullptr, v1::JobSpec::FALLOCATE_NATIVE).ok());
  EXPECT_FALSE(Exists(file));
}

// mdtest's delays: a creation with data waits for its create, its write and its close.
TEST(DummyFileSystem, CreationWaitsForItsDelays) {
  v1::MetadataPhase::DummyBackend backend;
  backend.set_delay_create_us(30'000);
  backend.set_delay_xfer_us(20'000);
  backend.set_delay_close_us(10'000);
  DummyFileSystem fs(backend, 3, false);
  const char data[8] = {};
  const auto start = Clock::now();
  ASSERT_EQ(fs.CreateFile("/x/file", data, {}), 0);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(60));
  // -c opens instead of creating: no create delay, but the write's and the close's.
  DummyFileSystem opens(backend, 3, true);
  char buffer[8];
  const auto read_start = Clock::now();
  ASSERT_EQ(opens.ReadFile("/x/file", absl::MakeSpan(buffer), {}), 0);
  EXPECT_GE(Clock::now() - read_start, std::chrono::milliseconds(30));
}

TEST(DummyFileSystem, DelaysOnlyInTaskZeroWhenAsked) {
  v1::MetadataPhase::DummyBackend backend;
  backend.set_delay_sync_us(1'000'000);
  backend.set_delay_only_rank0(true);
  DummyFileSystem other(backend, 1, false);
  const auto start = Clock::now();
  other.Sync();
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500)) << "task 1 waited for task 0's delay";
  backend.set_delay_sync_us(50'000);
  DummyFileSystem first(backend, 0, false);
  const auto first_start = Clock::now();
  first.Sync();
  EXPECT_GE(Clock::now() - first_start, std::chrono::milliseconds(50));
}

}  // namespace
}  // namespace iofleet
