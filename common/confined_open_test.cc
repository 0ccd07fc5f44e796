#include "common/confined_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// Confinement is process-wide, so one test sets it and tries every escape.
TEST(ConfinedOpen, EveryEscapeFailsAndNothingIsCreatedOutside) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/confined";
  const std::string root = base + "/root", outside = base + "/outside";
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(outside.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/sub").c_str(), 0755), 0);
  const int secret = ::open((outside + "/secret").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(secret, 0);
  ::close(secret);
  ASSERT_EQ(::symlink((outside + "/secret").c_str(), (root + "/to-secret").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/to-outside").c_str()), 0);
  ASSERT_EQ(::symlink("sub", (root + "/to-sub").c_str()), 0);
  ASSERT_TRUE(ConfineOpensBeneath({root}).ok());

  EXPECT_EQ(OpenConfined(root + "/to-secret", O_WRONLY | O_CREAT), -EXDEV) << "a symlink to a file outside";
  EXPECT_EQ(OpenConfined(root + "/to-outside/new", O_WRONLY | O_CREAT), -EXDEV) << "a symlinked directory outside";
  EXPECT_EQ(OpenConfined(root + "/sub/../../outside/new", O_WRONLY | O_CREAT), -EXDEV) << "'..' out of the root";
  EXPECT_EQ(OpenConfined(outside + "/new", O_WRONLY | O_CREAT), -EACCES) << "a path under no root";
  struct stat st;
  EXPECT_NE(::stat((outside + "/new").c_str(), &st), 0) << "nothing was created outside";
  ASSERT_EQ(::stat((outside + "/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);

  // Inside the root, symlinks and files work as usual.
  const int fd = OpenConfined(root + "/to-sub/file", O_WRONLY | O_CREAT);
  ASSERT_GE(fd, 0) << -fd;
  ::close(fd);
  EXPECT_EQ(::stat((root + "/sub/file").c_str(), &st), 0);
  EXPECT_NE(ConfinedOpenError(-EXDEV, "open", root + "/to-secret").message().find("outside the worker's allowed roots"), std::string::npos);
}

}  // namespace
}  // namespace iofleet
