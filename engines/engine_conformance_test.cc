// One conformance suite run against every registered engine (and io_uring's option variants)
// on a temp directory: what a worker relies on from any engine — positioned IO, results as
// bytes or -errno, short reads at end of file, syncs, several requests in flight — through
// the submit/commit/reap interface whether the engine queues or not.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "engines/engine_registry.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

struct EngineCase {
  std::string label;
  std::string engine;
  EngineOptions options;
};

std::vector<EngineCase> AllCases() {
  std::vector<EngineCase> cases;
  for (const std::string& name : EngineNames()) cases.push_back({name, name, EngineOptions{.iodepth = 8}});
  cases.push_back({"io_uring_fixed", "io_uring", EngineOptions{.iodepth = 8, .fixedbufs = true, .registerfiles = true}});
  cases.push_back({"io_uring_sqpoll", "io_uring", EngineOptions{.iodepth = 8, .sqthread_poll = true}});
  cases.push_back({"null_depth1", "null", EngineOptions{.iodepth = 1}});
  return cases;
}

class EngineConformance : public ::testing::TestWithParam<EngineCase> {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/engine_" + GetParam().label;
    target_dir_ = dir_;
    if ((*FindEngine(GetParam().engine))->nfs_urls) {
      // The files are on an NFS server's export: made there locally, used through the URL.
      const char* url = std::getenv("IOFLEET_TEST_NFS_URL");
      const char* exported = std::getenv("IOFLEET_TEST_NFS_EXPORT");
      if (url == nullptr || exported == nullptr) {
        GTEST_SKIP() << "needs an NFS server: //tests:nfs_engine_conformance_test runs this suite against nfs-ganesha";
      }
      dir_ = std::string(exported) + "/engine_" + GetParam().label;
      target_dir_ = std::string(url) + "/engine_" + GetParam().label;
    }
    ::mkdir(dir_.c_str(), 0755);
    diskless_ = (*FindEngine(GetParam().engine))->diskless;
    auto engine = CreateEngine(GetParam().engine, GetParam().options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    for (int i = 0; i < 8; ++i) {
      void* p = nullptr;
      ASSERT_EQ(::posix_memalign(&p, 4096, 4096), 0);
      buffers_.push_back(static_cast<char*>(p));
      registered_.push_back({p, 4096});
    }
    ASSERT_TRUE(engine_->RegisterBuffers(registered_).ok());
  }
  void TearDown() override {
    for (char* b : buffers_) ::free(b);
  }

  // A file of `size` bytes, as the worker's layout leaves it; returns the engine's name for it.
  std::string SizedFile(const std::string& name, off_t size) {
    const std::string path = dir_ + "/" + name;
    const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    EXPECT_EQ(::ftruncate(fd, size), 0);
    ::close(fd);
    return target_dir_ + "/" + name;
  }

  // Submits all `requests`, commits once, and reaps until each is complete.
  void RunAll(std::vector<IoRequest>& requests) {
    int queued = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
      requests[i].tag = static_cast<uint32_t>(i);
      if (engine_->Submit(&requests[i]) == SubmitResult::kQueued) ++queued;
    }
    ASSERT_TRUE(engine_->Commit().ok());
    std::vector<IoRequest*> done(requests.size());
    while (queued > 0) {
      auto n = engine_->Reap(1, absl::MakeSpan(done));
      ASSERT_TRUE(n.ok()) << n.status();
      ASSERT_GE(*n, 1);
      queued -= *n;
    }
  }

  int64_t Run(IoRequest request) {
    std::vector<IoRequest> one = {request};
    RunAll(one);
    return one[0].result;
  }

  IoRequest Rw(IoOp op, int fd, int buffer, uint64_t offset, uint64_t length = 4096) {
    return {.op = op, .file = fd, .buffer = buffers_[buffer], .length = length, .offset = offset, .buffer_index = buffer};
  }

  std::string dir_;         // where the test makes and checks files on this machine
  std::string target_dir_;  // the same directory as the engine names it (a path or nfs:// URL)
  bool diskless_ = false;
  std::unique_ptr<IoEngine> engine_;
  std::vector<char*> buffers_;
  std::vector<std::pair<void*, uint64_t>> registered_;
};

// fio's rw=trim on a file: the range is deallocated (a punched hole reads back as zeros) and the
// file keeps its size; over NFSv3 there is no such call and the engine says so.
TEST_P(EngineConformance, TrimPunchesAHoleInAFile) {
  if (diskless_) GTEST_SKIP() << "diskless engine";
  const std::string path = SizedFile("trimmed", 8 * 4096);
  auto fd = engine_->Open(path, {.read = true, .write = true, .create = true, .pattern = AccessPattern::kRandom});
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::memset(buffers_[0], 'x', 4096);
  for (uint64_t block = 0; block < 8; ++block) ASSERT_EQ(Run(Rw(IoOp::kWrite, *fd, 0, block * 4096)), 4096);
  ASSERT_EQ(Run({.op = IoOp::kFsync, .file = *fd}), 0);
  const int64_t trimmed = Run({.op = IoOp::kTrim, .file = *fd, .length = 2 * 4096, .offset = 2 * 4096});
  if (GetParam().engine == "nfs") {
    EXPECT_EQ(trimmed, -EOPNOTSUPP);
    return;
  }
  EXPECT_EQ(trimmed, 2 * 4096);
  for (uint64_t block = 0; block < 8; ++block) {
    std::memset(buffers_[1], '?', 4096);
    ASSERT_EQ(Run(Rw(IoOp::kRead, *fd, 1, block * 4096)), 4096);
    EXPECT_EQ(buffers_[1][0], block == 2 || block == 3 ? 0 : 'x') << "block " << block;
    EXPECT_EQ(buffers_[1][4095], block == 2 || block == 3 ? 0 : 'x') << "block " << block;
  }
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/trimmed").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8 * 4096);
  ASSERT_TRUE(engine_->Close(*fd).ok());
}

TEST_P(EngineConformance, WritesThenReadsBackAtOffsetsWithSeveralInFlight) {
  if (diskless_) GTEST_SKIP() << "diskless engine";
  const std::string path = SizedFile("data", 8 * 4096);
  auto fd = engine_->Open(path, {.read = true, .write = true, .create = true, .pattern = AccessPattern::kRandom});
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::vector<IoRequest> writes;
  for (int i = 0; i < 8; ++i) {
    std::memset(buffers_[i], 'a' + i, 4096);
    // Out of order on purpose: offsets must be honoured.
    writes.push_back(Rw(IoOp::kWrite, *fd, i, static_cast<uint64_t>((i * 5) % 8) * 4096));
  }
  RunAll(writes);
  for (const IoRequest& w : writes) EXPECT_EQ(w.result, 4096);
  EXPECT_EQ(Run({.op = IoOp::kFsync, .file = *fd}), 0);
  EXPECT_EQ(Run({.op = IoOp::kFdatasync, .file = *fd}), 0);
  EXPECT_TRUE(engine_->Invalidate(*fd).ok());
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/data").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8 * 4096);
  std::vector<IoRequest> reads;
  for (int i = 0; i < 8; ++i) {
    std::memset(buffers_[i], 0, 4096);
    reads.push_back(Rw(IoOp::kRead, *fd, i, static_cast<uint64_t>((i * 5) % 8) * 4096));
  }
  RunAll(reads);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(reads[i].result, 4096);
    EXPECT_EQ(buffers_[i][0], 'a' + i);
    EXPECT_EQ(buffers_[i][4095], 'a' + i);
  }
  // A read across end of file is short; at end of file it returns 0.
  EXPECT_EQ(Run(Rw(IoOp::kRead, *fd, 0, 8 * 4096 - 100)), 100);
  EXPECT_EQ(Run(Rw(IoOp::kRead, *fd, 0, 8 * 4096)), 0);
  EXPECT_TRUE(engine_->Close(*fd).ok());
}

TEST_P(EngineConformance, ErrorsAreNegativeErrno) {
  if (diskless_) GTEST_SKIP() << "diskless engine";
  const std::string path = SizedFile("readonly", 4096);
  auto fd = engine_->Open(path, {.read = true});
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(Run(Rw(IoOp::kWrite, *fd, 0, 0)), -EBADF);
  EXPECT_TRUE(engine_->Close(*fd).ok());
}

TEST_P(EngineConformance, OpenErrorNamesThePath) {
  if (diskless_) GTEST_SKIP() << "diskless engine";
  auto fd = engine_->Open(target_dir_ + "/missing/file", {.read = true});
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(fd.status().message().find("missing/file"), std::string::npos);
}

TEST_P(EngineConformance, NoteOnlyWhenSomethingWasRefused) {
  for (const std::string& note : engine_->notes()) EXPECT_NE(note.find("refused"), std::string::npos) << note;
}

INSTANTIATE_TEST_SUITE_P(AllEngines, EngineConformance, ::testing::ValuesIn(AllCases()),
                         [](const auto& info) { return info.param.label; });

TEST(NullEngine, CompletesEverythingWithoutTouchingFiles) {
  auto engine = CreateEngine("null", {.iodepth = 4});
  ASSERT_TRUE(engine.ok());
  auto fd = (*engine)->Open("/nonexistent/file", {.read = true});
  ASSERT_TRUE(fd.ok());
  std::vector<IoRequest> requests(4, IoRequest{.op = IoOp::kRead, .file = *fd, .length = 65536});
  for (auto& r : requests) EXPECT_EQ((*engine)->Submit(&r), SubmitResult::kQueued);
  std::vector<IoRequest*> out(8);
  auto n = (*engine)->Reap(1, absl::MakeSpan(out));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 4);
  for (auto& r : requests) EXPECT_EQ(r.result, 65536);
}

// Reap with a timeout (io_submit_mode=offload waits for completions only until the next IO is
// due): a read of a FIFO nobody writes completes nothing, and Reap returns after the timeout
// with none; once data arrives the read completes.
TEST(IoUringEngine, ReapTimesOutAndThenCompletes) {
  const std::string fifo = std::string(std::getenv("TEST_TMPDIR")) + "/reap-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto engine = CreateEngine("io_uring", {.iodepth = 2});
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto fd = (*engine)->Open(fifo, {.read = true, .write = true});  // O_RDWR: opening a FIFO so never blocks
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::vector<char> buffer(4096);
  IoRequest read{.op = IoOp::kRead, .file = *fd, .buffer = buffer.data(), .length = 4096};
  ASSERT_EQ((*engine)->Submit(&read), SubmitResult::kQueued);
  ASSERT_TRUE((*engine)->Commit().ok());
  std::vector<IoRequest*> out(2);
  const auto before = std::chrono::steady_clock::now();
  auto none = (*engine)->Reap(1, absl::MakeSpan(out), 30'000'000);
  const auto waited = std::chrono::steady_clock::now() - before;
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, 0);
  EXPECT_GE(waited, std::chrono::milliseconds(25));
  EXPECT_LT(waited, std::chrono::seconds(2));
  const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, buffer.data(), 4096), 4096);
  auto one = (*engine)->Reap(1, absl::MakeSpan(out), 2'000'000'000);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, 1);
  EXPECT_EQ(read.result, 4096);
  ::close(writer);
  EXPECT_TRUE((*engine)->Close(*fd).ok());
}

TEST(EngineRegistry, UnknownEngineSuggestsNearest) {
  auto engine = CreateEngine("psycn", {});
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(engine.status().message().find("did you mean psync?"), std::string::npos) << engine.status();
  EXPECT_FALSE(CreateEngine("io_uring", {.iodepth = 0}).ok());
}

}  // namespace
}  // namespace iofleet
