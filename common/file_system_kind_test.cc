#include "common/file_system_kind.h"

#include <linux/magic.h>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// The target facts name a kind; mdtest's rehearsals go on to a phase's instant only on a local
// one. A network or FUSE file system, and any kind not in the table, is not local.
TEST(FileSystemKind, NamesAndLocality) {
  EXPECT_EQ(FileSystemKindOf(EXT4_SUPER_MAGIC).name, "ext4");
  EXPECT_TRUE(FileSystemKindOf(EXT4_SUPER_MAGIC).local);
  EXPECT_TRUE(FileSystemKindOf(TMPFS_MAGIC).local);
  EXPECT_EQ(FileSystemKindOf(NFS_SUPER_MAGIC).name, "nfs");
  EXPECT_FALSE(FileSystemKindOf(NFS_SUPER_MAGIC).local);
  EXPECT_EQ(FileSystemKindOf(0x65735546).name, "fuse");
  EXPECT_FALSE(FileSystemKindOf(0x65735546).local);
  EXPECT_EQ(FileSystemKindOf(PROC_SUPER_MAGIC).name, "");
  EXPECT_FALSE(FileSystemKindOf(PROC_SUPER_MAGIC).local);
}

}  // namespace
}  // namespace iofleet
