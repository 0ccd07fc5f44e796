#include "worker/file_system.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// mdtest's rehearsals go on to a phase's instant only where they cost no server a request
// (worker/metadata_task.cc): the kind of file system decides, and an unknown kind is remote.
TEST(FileSystem, OnlyKnownDiskAndMemoryFileSystemsAreLocalStorage) {
  auto fs = OpenFileSystem({"/"});
  ASSERT_TRUE(fs.ok()) << fs.status();
  EXPECT_TRUE((*fs)->OnLocalStorage("/dev/shm/item")) << "tmpfs";
  EXPECT_FALSE((*fs)->OnLocalStorage("/proc/self/item")) << "proc: not a kind that holds files";
  EXPECT_FALSE((*fs)->OnLocalStorage("/sys/kernel/item")) << "sysfs";
  EXPECT_FALSE((*fs)->OnLocalStorage("/no-such-directory/item")) << "a directory that cannot be opened";
}

}  // namespace
}  // namespace iofleet
