// One conformance suite run against every registered engine on a temp directory: what a
// worker relies on from any engine (positioned IO, results as bytes or -errno, short reads at
// end of file, syncs), through the submit/reap interface whether the engine queues or not.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "engines/engine_registry.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

class EngineConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = std::string(tmp ? tmp : "/tmp") + "/engine_" + GetParam();
    ::mkdir(dir_.c_str(), 0755);
    auto engine = CreateEngine(GetParam(), EngineOptions{.iodepth = 4});
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
  }

  // Submits and, for queueing engines, commits and reaps until `request` is done.
  int64_t Run(IoRequest request) {
    IoRequest* r = &request;
    if (engine_->Submit(r) == SubmitResult::kQueued) {
      EXPECT_TRUE(engine_->Commit().ok());
      IoRequest* done[4];
      auto n = engine_->Reap(1, absl::MakeSpan(done));
      EXPECT_TRUE(n.ok() && *n == 1);
    }
    return r->result;
  }

  std::string dir_;
  std::unique_ptr<IoEngine> engine_;
};

TEST_P(EngineConformance, WritesThenReadsBackAtOffsets) {
  const std::string path = dir_ + "/data";
  auto fd = engine_->Open(path, {.read = true, .write = true, .create = true});
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::vector<char> block(4096);
  for (int i = 0; i < 8; ++i) {
    std::memset(block.data(), 'a' + i, block.size());
    // Out of order on purpose: offsets must be honoured.
    const uint64_t offset = static_cast<uint64_t>((i * 5) % 8) * 4096;
    EXPECT_EQ(Run({.op = IoOp::kWrite, .file = *fd, .buffer = block.data(), .length = 4096, .offset = offset}), 4096);
  }
  EXPECT_EQ(Run({.op = IoOp::kFsync, .file = *fd}), 0);
  EXPECT_EQ(Run({.op = IoOp::kFdatasync, .file = *fd}), 0);
  EXPECT_TRUE(engine_->Invalidate(*fd).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8 * 4096);
  for (int i = 0; i < 8; ++i) {
    const uint64_t offset = static_cast<uint64_t>((i * 5) % 8) * 4096;
    EXPECT_EQ(Run({.op = IoOp::kRead, .file = *fd, .buffer = block.data(), .length = 4096, .offset = offset}), 4096);
    EXPECT_EQ(block[0], 'a' + i);
    EXPECT_EQ(block[4095], 'a' + i);
  }
  // A read across end of file is short; at end of file it returns 0.
  EXPECT_EQ(Run({.op = IoOp::kRead, .file = *fd, .buffer = block.data(), .length = 4096, .offset = 8 * 4096 - 100}), 100);
  EXPECT_EQ(Run({.op = IoOp::kRead, .file = *fd, .buffer = block.data(), .length = 4096, .offset = 8 * 4096}), 0);
  EXPECT_TRUE(engine_->Close(*fd).ok());
}

TEST_P(EngineConformance, ErrorsAreNegativeErrno) {
  const std::string path = dir_ + "/readonly";
  ASSERT_TRUE(engine_->Open(path, {.write = true, .create = true}).ok());
  auto fd = engine_->Open(path, {.read = true});
  ASSERT_TRUE(fd.ok());
  char byte = 'x';
  EXPECT_EQ(Run({.op = IoOp::kWrite, .file = *fd, .buffer = &byte, .length = 1, .offset = 0}), -EBADF);
  EXPECT_TRUE(engine_->Close(*fd).ok());
}

TEST_P(EngineConformance, OpenErrorNamesThePath) {
  auto fd = engine_->Open(dir_ + "/missing/file", {.read = true});
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(fd.status().message().find("missing/file"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineConformance, ::testing::ValuesIn(EngineNames()),
                         [](const auto& info) { return info.param; });

TEST(EngineRegistry, UnknownEngineSuggestsNearest) {
  auto engine = CreateEngine("psycn", {});
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(engine.status().message().find("did you mean psync?"), std::string::npos)
      << engine.status();
}

}  // namespace
}  // namespace iofleet
