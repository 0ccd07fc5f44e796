// The block-stage tracer on a real loop device (root): what it counts is what reached the
// device, and nothing of it stays attached after it is gone.
#include "worker/block_stage_tracer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/targets.h"

namespace iofleet {
namespace {

// Reads and writes completed by the device (/sys/block/NAME/stat, fields 1 and 5).
std::pair<uint64_t, uint64_t> CompletedRequests(const std::string& name) {
  std::ifstream in("/sys/block/" + name + "/stat");
  uint64_t f[11] = {};
  for (uint64_t& v : f) in >> v;
  return {f[0], f[4]};
}

class BlockStageTracerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (loop devices, BPF)";
    base_ = ::testing::TempDir();
    loop_ = std::make_unique<testing::LoopDevice>(base_, "64M");
    ASSERT_EQ(loop_->error(), "") << loop_->error();
    name_ = loop_->path().substr(loop_->path().rfind('/') + 1);
  }
  std::string base_, name_;
  std::unique_ptr<testing::LoopDevice> loop_;
};

TEST_F(BlockStageTracerTest, CountsEveryRequestTheDeviceCompleted) {
  const int fd = ::open(loop_->path().c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0);
  absl::StatusOr<ResolvedDevices> resolved = ResolveBlockDevices(fd);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  ASSERT_EQ(resolved->devices.size(), 1u);
  EXPECT_EQ(resolved->devices[0].name, name_);
  absl::StatusOr<std::unique_ptr<BlockStageTracer>> tracer = BlockStageTracer::Attach(resolved->devices);
  ASSERT_TRUE(tracer.ok()) << tracer.status();
  absl::StatusOr<BlockStageTracer::Snapshot> before = (*tracer)->Read();
  ASSERT_TRUE(before.ok()) << before.status();
  const auto [reads_before, writes_before] = CompletedRequests(name_);

  void* buffer = nullptr;
  ASSERT_EQ(::posix_memalign(&buffer, 4096, 65536), 0);
  std::memset(buffer, 0x5a, 65536);
  // 500 sequential 4 KiB reads, then 200 64 KiB writes at scattered offsets.
  for (int i = 0; i < 500; ++i) ASSERT_EQ(::pread(fd, buffer, 4096, i * 4096L), 4096);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(::pwrite(fd, buffer, 65536, ((i * 37) % 900) * 65536L), 65536);
  ::free(buffer);
  ::close(fd);

  // The run's last snapshot: every request the device got has completed (direct IO returned).
  absl::StatusOr<BlockStageTracer::Snapshot> after = (*tracer)->Read(/*including_in_flight=*/true);
  ASSERT_TRUE(after.ok()) << after.status();
  const auto [reads_after, writes_after] = CompletedRequests(name_);
  std::vector<v1::BlockDeviceStages> records = BlockStagesSince(*after, *before, (*tracer)->devices(), "host-a", {{0, 2}});
  ASSERT_EQ(records.size(), 1u);
  const v1::BlockDeviceStages& device = records[0];
  EXPECT_EQ(device.host(), "host-a");
  EXPECT_EQ(device.device(), name_);
  EXPECT_THAT(device.jobs(), ::testing::ElementsAre(0u, 2u));
  EXPECT_THAT(device.backing(), ::testing::HasSubstr(base_));
  const v1::BlockStageDirection* read = nullptr;
  const v1::BlockStageDirection* write = nullptr;
  for (const v1::BlockStageDirection& d : device.directions()) {
    if (d.direction() == "read") read = &d;
    if (d.direction() == "write") write = &d;
  }
  ASSERT_NE(read, nullptr);
  ASSERT_NE(write, nullptr);
  // As many requests as the device counted (nothing else used it): timed, or dispatched with
  // a completion the kernel never reported (block_rq_complete skipped under load, counted when
  // the tag is dispatched again or tracing stops), but for events the kernel did not run the
  // tracer for (another block event on the same CPU).
  const uint64_t missed = device.missed_events();
  EXPECT_EQ(reads_after - reads_before, 500u);
  EXPECT_EQ(writes_after - writes_before, 200u);
  auto near = [missed](uint64_t got, uint64_t want) { return got <= want && got + missed >= want; };
  EXPECT_PRED2(near, read->dispatch_to_complete().count() + read->completion_unseen(), 500u)
      << missed << " missed, " << read->completion_unseen() << " completions unseen";
  EXPECT_PRED2(near, write->dispatch_to_complete().count() + write->completion_unseen(), 200u)
      << missed << " missed, " << write->completion_unseen() << " completions unseen";
  EXPECT_EQ(read->request_bytes().count(), read->dispatch_to_complete().count());
  EXPECT_EQ(write->request_bytes().count(), write->dispatch_to_complete().count());
  // The kernel's skipped completions are rare (a few in a thousand under load), never the rule.
  EXPECT_LE(read->completion_unseen() + write->completion_unseen(), 7u);
  // Every request's size, exactly (the layout is exact below 128 and 4096 is a bucket's start).
  EXPECT_EQ(read->request_bytes().sum_ns(), read->request_bytes().count() * 4096);
  EXPECT_EQ(write->request_bytes().sum_ns(), write->request_bytes().count() * 65536);
  // Q seen for each (direct IO submits after tracing began): all three stages of every request.
  EXPECT_EQ(read->unqueued(), 0u);
  EXPECT_EQ(read->queue_to_dispatch().count(), read->dispatch_to_complete().count());
  EXPECT_EQ(read->queue_to_complete().count(), read->dispatch_to_complete().count());
  // Q2C = Q2D + D2C, request by request, so for the sums too (exact ns).
  EXPECT_EQ(read->queue_to_complete().sum_ns(), read->queue_to_dispatch().sum_ns() + read->dispatch_to_complete().sum_ns());
  EXPECT_EQ(write->queue_to_complete().sum_ns(), write->queue_to_dispatch().sum_ns() + write->dispatch_to_complete().sum_ns());
  // The reads follow each other on the device; the writes mostly do not.
  EXPECT_GE(read->sequential(), 499u);
  EXPECT_LT(write->sequential(), 20u);

  EXPECT_GT(BlockStageTracer::ProgramsLoaded(), 0);
  tracer->reset();
  // The kernel frees a detached program in the background (after an RCU grace period).
  for (int tries = 0; tries < 500 && BlockStageTracer::ProgramsLoaded() > 0; ++tries) ::usleep(10000);
  EXPECT_EQ(BlockStageTracer::ProgramsLoaded(), 0) << "still loaded 5 s after the tracer was destroyed";
}

TEST(BlockStageTracer, RefusesMoreDevicesThanItTraces) {
  std::vector<BlockDevice> many(BlockStageTracer::kMaxDevices + 1);
  absl::StatusOr<std::unique_ptr<BlockStageTracer>> tracer = BlockStageTracer::Attach(many);
  ASSERT_FALSE(tracer.ok());
  EXPECT_THAT(std::string(tracer.status().message()), ::testing::HasSubstr("at most 8"));
}

}  // namespace
}  // namespace iofleet
