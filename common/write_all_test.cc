#include "common/write_all.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// Into a pipe smaller than the text, read on the other side as it goes: every byte arrives,
// in order, through the short writes the pipe makes.
TEST(WriteAll, AWholeTextThroughShortWrites) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ASSERT_GT(::fcntl(pipe_fds[1], F_SETPIPE_SZ, 4096), 0);
  std::string text(1 << 20, ' ');
  for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 23);
  std::string got;
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    ::close(pipe_fds[0]);
    _exit(WriteAll(pipe_fds[1], text));
  }
  ::close(pipe_fds[1]);
  char buffer[1000];  // (reads of another size than the pipe's: the writes come out short)
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) got.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(got == text) << got.size() << " bytes arrived of " << text.size();
}

// At an offset, into a file; and the errno of a call that fails (a read-only descriptor).
TEST(WriteAll, AtAnOffsetAndTheErrorOfAFailedCall) {
  const char* tmp = ::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/write-all-XXXXXX";
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0);
  ASSERT_EQ(WriteAllAt(fd, "0123456789", 0), 0);
  ASSERT_EQ(WriteAllAt(fd, "abc", 4), 0);
  char back[11] = {};
  ASSERT_EQ(::pread(fd, back, 10, 0), 10);
  EXPECT_STREQ(back, "0123abc789");
  const int read_only = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(read_only, 0);
  EXPECT_EQ(WriteAll(read_only, "x"), EBADF);
  EXPECT_EQ(WriteAllAt(read_only, "x", 0), EBADF);
  ::close(read_only);
  ::close(fd);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace iofleet
