#include "worker/block_devices.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

namespace fs = std::filesystem;

// A sysfs tree as the kernel lays it out: devices under /sys/devices, /sys/dev/block/M:m
// links to them, partitions inside their disk's directory, stacked devices' "slaves".
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/iofleet-sysfs-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path Device(const std::string& relative, const std::string& dev, const std::string& scheduler = "") {
    const fs::path dir = root_ / "devices" / relative;
    fs::create_directories(dir);
    Write(dir / "dev", dev);
    if (!scheduler.empty()) Write(dir / "queue" / "scheduler", scheduler);
    fs::create_directories(root_ / "dev" / "block");
    fs::create_symlink(dir, root_ / "dev" / "block" / dev);
    return dir;
  }
  static void Write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  fs::path root_;
};

TEST_F(FakeSysfs, APartitionResolvesToItsWholeDisk) {
  const fs::path sda = Device("pci0/sda", "8:0", "[mq-deadline] kyber none");
  const fs::path sda1 = Device("pci0/sda/sda1", "8:1");
  Write(sda1 / "partition", "1");
  absl::StatusOr<std::vector<BlockDevice>> devices = ResolveDeviceNumber(8, 1, root_.string());
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "sda");
  EXPECT_EQ((*devices)[0].major, 8u);
  EXPECT_EQ((*devices)[0].minor, 0u);
  EXPECT_EQ((*devices)[0].scheduler, "mq-deadline");
}

TEST_F(FakeSysfs, DeviceMapperResolvesToTheDisksBeneathIt) {
  const fs::path sda = Device("pci0/sda", "8:0", "[none] mq-deadline");
  const fs::path sda1 = Device("pci0/sda/sda1", "8:1");
  Write(sda1 / "partition", "1");
  const fs::path sdb = Device("pci0/sdb", "8:16", "none [kyber]");
  const fs::path dm = Device("virtual/block/dm-0", "254:0", "none");
  fs::create_directories(dm / "slaves");
  fs::create_symlink(sda1, dm / "slaves" / "sda1");
  fs::create_symlink(sdb, dm / "slaves" / "sdb");
  absl::StatusOr<std::vector<BlockDevice>> devices = ResolveDeviceNumber(254, 0, root_.string());
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::string> names;
  for (const BlockDevice& d : *devices) names.push_back(d.name + "=" + d.scheduler);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("sda=none", "sdb=kyber"));
}

TEST_F(FakeSysfs, ALoopDeviceNamesItsBackingFile) {
  const fs::path loop = Device("virtual/block/loop3", "7:3", "[none] mq-deadline");
  Write(loop / "loop" / "backing_file", "/var/tmp/ext4.img");
  absl::StatusOr<std::vector<BlockDevice>> devices = ResolveDeviceNumber(7, 3, root_.string());
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].name, "loop3");
  EXPECT_EQ((*devices)[0].backing, "/var/tmp/ext4.img");
}

TEST_F(FakeSysfs, AnUnknownDeviceIsNamedInTheError) {
  absl::StatusOr<std::vector<BlockDevice>> devices = ResolveDeviceNumber(9, 9, root_.string());
  ASSERT_FALSE(devices.ok());
  EXPECT_THAT(std::string(devices.status().message()), ::testing::HasSubstr("9:9"));
}

TEST(BlockDevices, TmpfsSaysItHasNoBlockDevice) {
  const int fd = ::open("/dev/shm", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  absl::StatusOr<ResolvedDevices> resolved = ResolveBlockDevices(fd);
  ::close(fd);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_TRUE(resolved->devices.empty());
  EXPECT_EQ(resolved->none_reason, "tmpfs has no block device");
}

}  // namespace
}  // namespace iofleet
