#include "worker/host_facts.h"

#include <sys/stat.h>
#include <sys/vfs.h>

#include <fstream>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// A fake /proc/self/mountinfo and /sys/block, so every kind of target can be checked.
class HostFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(std::getenv("TEST_TMPDIR")) + "/facts";
    for (const char* d : {"", "/sys", "/sys/vda", "/sys/vda/queue", "/sys/vda/device"}) ::mkdir((root_ + d).c_str(), 0755);
    std::ofstream(root_ + "/sys/vda/queue/scheduler") << "mq-deadline [kyber] none\n";
    std::ofstream(root_ + "/sys/vda/queue/nr_requests") << "256\n";
    std::ofstream(root_ + "/sys/vda/queue/read_ahead_kb") << "128\n";
    std::ofstream(root_ + "/sys/vda/queue/rotational") << "0\n";
    std::ofstream(root_ + "/sys/vda/device/queue_depth") << "32\n";
    std::ofstream(root_ + "/mountinfo")
        << "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,discard\n"
        << "40 22 0:44 / /mnt/nfs rw,relatime shared:9 - nfs4 server:/export rw,vers=4.2,rsize=1048576,wsize=524288,proto=tcp,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60\n"
        << "41 22 0:45 / /mnt/fuse rw,nosuid shared:10 - fuse.bindfs bindfs rw,user_id=0\n";
  }
  std::string root_;
};

TEST_F(HostFactsTest, BlockBackedPathHasItsDiskQueue) {
  v1::TargetFacts t = DescribeTarget("/data/run", root_ + "/mountinfo", root_ + "/sys");
  EXPECT_EQ(t.fs_type(), "ext4");
  EXPECT_EQ(t.mount_source(), "/dev/vda1");
  EXPECT_EQ(t.device(), "vda");  // the partition's whole disk
  EXPECT_EQ(t.scheduler(), "kyber");
  EXPECT_EQ(t.nr_requests(), "256");
  EXPECT_EQ(t.read_ahead_kb(), "128");
  EXPECT_EQ(t.rotational(), "0");
  EXPECT_EQ(t.queue_depth(), "32");
}

TEST_F(HostFactsTest, NfsAndFuseMountsExplainThemselves) {
  v1::TargetFacts nfs = DescribeTarget("/mnt/nfs/bench", root_ + "/mountinfo", root_ + "/sys");
  EXPECT_EQ(nfs.fs_type(), "nfs4");
  EXPECT_EQ(nfs.nfs_version(), "4.2");
  EXPECT_EQ(nfs.rsize(), "1048576");
  EXPECT_EQ(nfs.wsize(), "524288");
  EXPECT_EQ(nfs.proto(), "tcp");
  EXPECT_EQ(nfs.actimeo(), "3-60/30-60");
  EXPECT_EQ(nfs.device(), "");
  v1::TargetFacts fuse = DescribeTarget("/mnt/fuse", root_ + "/mountinfo", root_ + "/sys");
  EXPECT_EQ(fuse.fuse_daemon(), "bindfs");
}

// In a chroot or a container the mount holding the path may not be listed at all: the
// filesystem's magic number still names it (TEST_TMPDIR's filesystem here).
TEST(HostFacts, AMountThatIsNotListedIsNamedByItsMagicNumber) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string empty = tmp + "/empty-mountinfo";
  std::ofstream(empty) << "";
  const v1::TargetFacts t = DescribeTarget(tmp, empty, tmp + "/no-sys");
  EXPECT_FALSE(t.fs_type().empty()) << "the filesystem of " << tmp << " has no name";
  EXPECT_EQ(t.fs_type(), DescribeTarget(tmp, "/proc/self/mountinfo", "/sys").fs_type().substr(0, t.fs_type().size()))
      << "the magic number names what mountinfo names";
}

// mdtest's "FS" line: the size and inodes of the path's file system, as statfs(2) has them.
TEST(HostFacts, SizeAndInodesOfTheTargetsFileSystem) {
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const v1::TargetFacts t = DescribeTarget(tmp);
  struct statfs fs;
  ASSERT_EQ(::statfs(tmp.c_str(), &fs), 0);
  EXPECT_EQ(t.fs_bytes(), static_cast<uint64_t>(fs.f_blocks) * fs.f_bsize);
  EXPECT_GT(t.fs_bytes(), 0u);
  EXPECT_LE(t.fs_free_bytes(), t.fs_bytes());
  EXPECT_EQ(t.fs_inodes(), fs.f_files);
  EXPECT_EQ(DescribeTarget(tmp + "/missing").fs_bytes(), 0u) << "no file system, no figures";
}

TEST(HostFacts, ThisHost) {
  v1::HostFacts facts = CollectHostFacts();
  EXPECT_FALSE(facts.hostname().empty());
  EXPECT_GT(facts.cpus(), 0u);
  EXPECT_GT(facts.memory_bytes(), 0u);
  EXPECT_FALSE(facts.kernel().empty());
}

}  // namespace
}  // namespace iofleet
