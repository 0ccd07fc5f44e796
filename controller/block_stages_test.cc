#include "controller/block_stages.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "histogram/latency_histogram.h"

namespace iofleet {
namespace {

v1::BlockDeviceStages Device(const std::string& host, const std::string& name, uint64_t d2c_ns, uint64_t q2d_ns, int requests) {
  v1::BlockDeviceStages device;
  device.set_host(host);
  device.set_device(name);
  v1::BlockStageDirection* d = device.add_directions();
  d->set_direction("read");
  LatencyHistogram q2d, d2c, q2c, bytes;
  for (int i = 0; i < requests; ++i) {
    q2d.Record(q2d_ns);
    d2c.Record(d2c_ns);
    q2c.Record(q2d_ns + d2c_ns);
    bytes.Record(4096);
  }
  *d->mutable_queue_to_dispatch() = q2d.ToProto();
  *d->mutable_dispatch_to_complete() = d2c.ToProto();
  *d->mutable_queue_to_complete() = q2c.ToProto();
  *d->mutable_request_bytes() = bytes.ToProto();
  d->set_sequential(static_cast<uint64_t>(requests / 2));
  return device;
}

TEST(BlockStages, MergesTheSameHostAndDeviceAndKeepsOthersApart) {
  google::protobuf::RepeatedPtrField<v1::BlockDeviceStages> into;
  MergeBlockDevice(Device("a", "loop0", 100'000, 1'000, 10), &into);
  MergeBlockDevice(Device("a", "loop0", 200'000, 2'000, 30), &into);
  MergeBlockDevice(Device("b", "loop0", 100'000, 1'000, 5), &into);
  ASSERT_EQ(into.size(), 2);
  EXPECT_EQ(into[0].directions(0).dispatch_to_complete().count(), 40u);
  EXPECT_EQ(into[0].directions(0).dispatch_to_complete().sum_ns(), 10u * 100'000 + 30u * 200'000);
  EXPECT_EQ(into[0].directions(0).sequential(), 20u);
  EXPECT_EQ(into[1].directions(0).request_bytes().count(), 5u);
}

TEST(BlockStages, RequestsWhoseCompletionTheKernelSkippedAreCountedAndSaid) {
  google::protobuf::RepeatedPtrField<v1::BlockDeviceStages> into;
  v1::BlockDeviceStages first = Device("a", "loop0", 100'000, 1'000, 10);
  first.mutable_directions(0)->set_completion_unseen(3);
  v1::BlockDeviceStages second = Device("a", "loop0", 100'000, 1'000, 10);
  second.mutable_directions(0)->set_completion_unseen(2);
  MergeBlockDevice(first, &into);
  MergeBlockDevice(second, &into);
  ASSERT_EQ(into.size(), 1);
  EXPECT_EQ(into[0].directions(0).completion_unseen(), 5u);
  EXPECT_THAT(BlockRequestShape(into[0].directions(0)), ::testing::HasSubstr("; 5 more dispatched whose completion the kernel did not report (not timed)"));
}

TEST(BlockStages, RefusesMalformedRecords) {
  v1::BlockDeviceStages device = Device("a", "loop0", 1, 1, 1);
  EXPECT_TRUE(ValidateBlockDevice(device).ok());
  device.mutable_directions(0)->set_direction("sideways");
  EXPECT_THAT(std::string(ValidateBlockDevice(device).message()), ::testing::HasSubstr("unknown direction"));
  device = Device("a", "loop0", 1, 1, 1);
  device.mutable_directions(0)->mutable_dispatch_to_complete()->set_count(7);  // counts that do not add up
  EXPECT_FALSE(ValidateBlockDevice(device).ok());
  device = Device("a", "loop0", 1, 1, 1);
  *device.add_directions() = device.directions(0);
  EXPECT_THAT(std::string(ValidateBlockDevice(device).message()), ::testing::HasSubstr("twice"));
}

TEST(BlockStages, TheMeansSplitExactlyAndThePercentilesAreShownApart) {
  const v1::BlockDeviceStages device = Device("a", "loop0", 90'000, 10'000, 4);
  EXPECT_EQ(BlockStageSplit(device.directions(0), 0), "mean Q2C 100.0us = Q2D 10.0us + D2C 90.0us");
  EXPECT_THAT(BlockStageSplit(device.directions(0), 99), ::testing::StartsWith("p99 Q2C "));
  EXPECT_EQ(BlockRequestShape(device.directions(0)), "4 requests, size mean 4KiB (p50 4KiB, max 4KiB), 50% sequential");
}

TEST(BlockStages, AHostWhoseDeviceIsSlowStandsOut) {
  v1::RunReport report;
  for (const char* host : {"a", "b", "c"}) {
    v1::WorkerInfo* w = report.add_workers();
    w->set_address(absl::StrCat(host, ":7000"));
    w->set_hostname(host);
  }
  *report.add_block_devices() = Device("a", "nvme0n1", 100'000, 2'000, 100);
  *report.add_block_devices() = Device("b", "nvme0n1", 110'000, 2'000, 100);
  *report.add_block_devices() = Device("c", "nvme0n1", 900'000, 2'000, 100);  // its device is slow
  MarkBlockStageOutliers(&report);
  EXPECT_THAT(report.workers(0).differs(), ::testing::IsEmpty());
  EXPECT_THAT(report.workers(1).differs(), ::testing::IsEmpty());
  ASSERT_EQ(report.workers(2).differs_size(), 1);
  EXPECT_THAT(report.workers(2).differs(0), ::testing::StartsWith("block read D2C p99: 90"));
  EXPECT_THAT(report.workers(2).differs(0), ::testing::HasSubstr("(others: a 10"));
}

TEST(BlockStages, HostsAlikeAreNotNamed) {
  v1::RunReport report;
  for (const char* host : {"a", "b"}) {
    report.add_workers()->set_hostname(host);
    *report.add_block_devices() = Device(host, "sda", 100'000, 50'000, 10);
  }
  MarkBlockStageOutliers(&report);
  EXPECT_THAT(report.workers(0).differs(), ::testing::IsEmpty());
  EXPECT_THAT(report.workers(1).differs(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace iofleet
