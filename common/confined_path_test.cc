#include "common/confined_path.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// Confinement is process-wide, so one test sets it and tries every escape.
TEST(ConfinedPath, EveryEscapeFailsAndNothingOutsideIsTouched) {
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
  EXPECT_NE(ConfinedPathError(-EXDEV, "open", root + "/to-secret").message().find("outside the worker's allowed roots"), std::string::npos);

  // Paths the worker built: every metadata call refuses a symlink anywhere beneath the root,
  // even one that stays inside it, and acts on the last component without following it.
  ConfinedTree tree;
  ASSERT_EQ(tree.MakeDirectory(root + "/made"), 0);
  ASSERT_EQ(tree.MakeDirectory(root + "/made/item"), 0);
  const int made = tree.Open(root + "/made/file", O_CREAT | O_EXCL | O_WRONLY);
  ASSERT_GE(made, 0) << -made;
  ::close(made);
  EXPECT_EQ(tree.Stat(root + "/made/file", &st), 0);
  EXPECT_EQ(tree.Rename(root + "/made/item", root + "/made/item.renamed"), 0);
  EXPECT_EQ(tree.Rename(root + "/made/item.renamed", root + "/sub/item"), 0) << "across directories";
  EXPECT_EQ(tree.RemoveDirectory(root + "/sub/item"), 0);
  const int listing = tree.OpenDirectory(root + "/made");
  ASSERT_GE(listing, 0);
  ::close(listing);

  // The outside directory holds a file named like the one the worker made.
  const int victim = ::open((outside + "/file").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(victim, 0);
  ::close(victim);
  ASSERT_EQ(::mkdir((outside + "/item").c_str(), 0755), 0);
  ConfinedTree fresh;  // no cached descriptor: resolves the swapped path
  EXPECT_EQ(fresh.Unlink(root + "/to-outside/file"), -ELOOP) << "unlink through a symlinked directory";
  EXPECT_EQ(fresh.RemoveDirectory(root + "/to-outside/item"), -ELOOP) << "rmdir through a symlinked directory";
  EXPECT_EQ(fresh.Stat(root + "/to-outside/file", &st), -ELOOP) << "stat through a symlinked directory";
  EXPECT_EQ(fresh.Rename(root + "/to-outside/item", root + "/to-outside/item.renamed"), -ELOOP);
  EXPECT_EQ(fresh.MakeDirectory(root + "/to-outside/new"), -ELOOP);
  EXPECT_EQ(fresh.Open(root + "/to-outside/file", O_RDONLY), -ELOOP);
  EXPECT_EQ(fresh.OpenDirectory(root + "/to-outside"), -ELOOP);
  EXPECT_EQ(fresh.Unlink(root + "/to-sub/file"), -ELOOP) << "a symlink inside the root is refused too";
  EXPECT_EQ(fresh.Unlink(root + "/sub/../../outside/file"), -EXDEV) << "'..' out of the root";
  EXPECT_EQ(fresh.Unlink(outside + "/file"), -EACCES) << "a path under no root";
  EXPECT_EQ(fresh.Open(root + "/to-secret", O_RDONLY), -ELOOP) << "a final symlink is not followed";
  EXPECT_EQ(fresh.Unlink(root + "/made/."), -EINVAL);
  EXPECT_EQ(::stat((outside + "/file").c_str(), &st), 0) << "the outside file was removed";
  EXPECT_EQ(::stat((outside + "/item").c_str(), &st), 0) << "the outside directory was removed";
  EXPECT_NE(::stat((outside + "/new").c_str(), &st), 0);

  // A directory swapped for a symlink after its descriptor was taken: the calls stay in the
  // real directory (now moved aside), never follow the link.
  ConfinedTree cached;
  ASSERT_EQ(cached.Stat(root + "/made/file", &st), 0);
  ASSERT_EQ(::rename((root + "/made").c_str(), (root + "/made.moved").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/made").c_str()), 0);
  EXPECT_EQ(cached.Unlink(root + "/made/file"), 0);
  EXPECT_NE(::stat((root + "/made.moved/file").c_str(), &st), 0) << "the worker's own file went";
  EXPECT_EQ(::stat((outside + "/file").c_str(), &st), 0) << "the outside file stayed";
  EXPECT_EQ(ConfinedPathError(-ELOOP, "unlink", root + "/made/file").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(ConfinedPathError(-ELOOP, "unlink", root + "/made/file").message().find("symlink"), std::string::npos);

  // A directory opened one step from its cached parent (a tree made level by level) follows
  // the same rules: a symlink or '..' there is refused, not followed.
  ConfinedTree levels;
  ASSERT_EQ(levels.MakeDirectory(root + "/level"), 0);
  ASSERT_EQ(levels.MakeDirectory(root + "/level/next"), 0);  // root/level now open
  ASSERT_EQ(levels.MakeDirectory(root + "/level/next/leaf"), 0) << "one step from root/level";
  ASSERT_EQ(::symlink(outside.c_str(), (root + "/level/link").c_str()), 0);
  EXPECT_EQ(levels.MakeDirectory(root + "/level/link/new"), -ELOOP) << "a symlink one step from a cached directory";
  EXPECT_EQ(levels.MakeDirectory(root + "/level/../../outside/new"), -EXDEV) << "'..' after a cached directory";
  EXPECT_NE(::stat((outside + "/new").c_str(), &st), 0) << "nothing was made outside";
}

// More directories than the cache holds, visited in turn: every call lands in its own
// directory, and the descriptors go with the tree.
TEST(ConfinedPath, ManyDirectoriesInTurn) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/many";
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  ASSERT_TRUE(ConfineOpensBeneath({base}).ok());  // (one more root for the process)
  auto open_descriptors = [] {
    int n = 0;
    for (int fd = 0; fd < 4096; ++fd) n += ::fcntl(fd, F_GETFD) != -1;
    return n;
  };
  const int before = open_descriptors();
  constexpr int kDirectories = 3 * ConfinedTree::kCachedDirectories / 2;
  {
    ConfinedTree tree;
    for (int d = 0; d < kDirectories; ++d) ASSERT_EQ(tree.MakeDirectory(base + "/d" + std::to_string(d)), 0);
    for (int round = 0; round < 2; ++round) {
      for (int d = 0; d < kDirectories; ++d) {
        ASSERT_EQ(tree.MakeDirectory(base + "/d" + std::to_string(d) + "/item" + std::to_string(round)), 0) << d;
      }
    }
    for (int d = kDirectories - 1; d >= 0; --d) {
      struct stat st;
      for (int round = 0; round < 2; ++round) {
        const std::string item = base + "/d" + std::to_string(d) + "/item" + std::to_string(round);
        ASSERT_EQ(tree.Stat(item, &st), 0) << item;
        ASSERT_EQ(tree.RemoveDirectory(item), 0) << item;
      }
      ASSERT_EQ(tree.Rename(base + "/d" + std::to_string(d), base + "/d" + std::to_string(d) + ".renamed"), 0);
    }
    EXPECT_LE(open_descriptors(), before + static_cast<int>(ConfinedTree::kCachedDirectories));
  }
  EXPECT_EQ(open_descriptors(), before);
  for (int d = 0; d < kDirectories; ++d) {
    EXPECT_EQ(::rmdir((base + "/d" + std::to_string(d) + ".renamed").c_str()), 0) << "each directory emptied and renamed";
  }
}

// A tree keeps as many directories open as it is asked to, and never more than half the
// process's descriptor limit allows (mdtest tasks ask for every directory of a large tree).
TEST(ConfinedPath, KeepsWhatItIsAskedWithinTheDescriptorLimit) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/kept";
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  ASSERT_TRUE(ConfineOpensBeneath({base}).ok());
  auto open_descriptors = [] {
    int n = 0;
    for (int fd = 0; fd < 4096; ++fd) n += ::fcntl(fd, F_GETFD) != -1;
    return n;
  };
  const int before = open_descriptors();
  {
    ConfinedTree tree(10);
    EXPECT_EQ(tree.kept_directories(), 10u);
    for (int d = 0; d < 30; ++d) {
      const std::string dir = base + "/d" + std::to_string(d);
      ASSERT_EQ(tree.MakeDirectory(dir), 0);
      ASSERT_EQ(tree.MakeDirectory(dir + "/item"), 0) << "made through its kept parent";
      EXPECT_LE(open_descriptors(), before + 10) << d;
    }
    EXPECT_EQ(open_descriptors(), before + 10) << "the last ten used";
  }
  EXPECT_EQ(open_descriptors(), before);
  struct rlimit files {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  EXPECT_LT(ConfinedTree(size_t{1} << 40).kept_directories(), files.rlim_cur / 2) << "room left for the items a task opens";
  EXPECT_EQ(ConfinedTree(0).kept_directories(), 1u);
}

// In a descriptor table of its own (an mdtest task's), a tree keeps directories past half the
// limit: only its own descriptors count against the limit there. (A soft limit of 1,100 for the
// test: a shared table's ceiling would be 550.)
TEST(ConfinedPath, OwnTableKeepsPastHalfTheLimit) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/own-kept";
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  ASSERT_TRUE(ConfineOpensBeneath({base}).ok());
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_GE(saved.rlim_max, 1100u);
  struct rlimit lowered = saved;
  lowered.rlim_cur = 1100;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  constexpr int kDirectories = 700;
  size_t shared_kept = 0, own_kept = 0;
  int own_open = 0, shared_open = 0;
  auto open_in_this_table = [] {
    int n = 0;
    for (int fd = 0; fd < 1100; ++fd) n += ::fcntl(fd, F_GETFD) != -1;
    return n;
  };
  auto visit = [&](ConfinedTree& tree, const std::string& name) {
    for (int d = 0; d < kDirectories; ++d) ASSERT_EQ(tree.MakeDirectory(base + "/" + name + std::to_string(d)), 0);
    for (int d = 0; d < kDirectories; ++d) {
      ASSERT_EQ(tree.MakeDirectory(base + "/" + name + std::to_string(d) + "/item"), 0) << d;
    }
  };
  std::thread shared([&] {
    ConfinedTree tree(kDirectories);
    shared_kept = tree.kept_directories();
    visit(tree, "s");
    shared_open = open_in_this_table();
  });
  shared.join();
  std::thread own([&] {
    ASSERT_TRUE(UseOwnDescriptorTable().ok());
    ConfinedTree tree(kDirectories);
    own_kept = tree.kept_directories();
    visit(tree, "o");
    own_open = open_in_this_table();
  });
  own.join();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_LT(shared_kept, 550u) << "the shared table's half";
  EXPECT_LT(shared_open, 600) << "no more than the half kept open in the shared table";
  EXPECT_EQ(own_kept, static_cast<size_t>(kDirectories)) << "every directory asked for, in a table of its own";
  EXPECT_GE(own_open, kDirectories) << "and every one of them still open after the last";
}

// Makes, removes and makes again base/tree and base/tree/item (twice), then renames the tree
// away and makes it again, through one ConfinedTree keeping `kept` directories: what is made in
// base/tree lands in the directory of that name there is, never in one removed or renamed.
void RemakeDirectories(const std::string& base, size_t kept) {
  ConfinedTree tree(kept);
  const std::string dir = base + "/tree", item = dir + "/item";
  struct stat st;
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(tree.MakeDirectory(dir), 0) << round;
    ASSERT_EQ(tree.MakeDirectory(item), 0) << round;  // its parent kept open from here
    ASSERT_EQ(::stat(item.c_str(), &st), 0) << "round " << round << ": made in the directory that is there";
    ASSERT_EQ(tree.RemoveDirectory(item), 0) << round;
    ASSERT_EQ(tree.RemoveDirectory(dir), 0) << round;
  }
  ASSERT_EQ(tree.MakeDirectory(dir), 0);
  ASSERT_EQ(tree.MakeDirectory(item), 0);
  ASSERT_EQ(tree.Rename(dir, dir + ".moved"), 0);
  ASSERT_EQ(tree.MakeDirectory(dir), 0);
  ASSERT_EQ(tree.MakeDirectory(dir + "/second"), 0);
  EXPECT_EQ(::stat((dir + "/second").c_str(), &st), 0) << "made in the new directory, not the moved one";
  EXPECT_NE(::stat((dir + ".moved/second").c_str(), &st), 0);
}

// A directory removed (or renamed) and made again under its name is the new one: what is made
// in it lands there, not in the removed directory whose descriptor was kept (mdtest's iterations
// remake the same tree). Also with one directory kept, each new parent closing the one before.
TEST(ConfinedPath, ARemadeDirectoryIsTheNewOne) {
  for (const size_t kept : {ConfinedTree::kCachedDirectories, size_t{1}}) {
    SCOPED_TRACE(kept);
    const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/remade-" + std::to_string(kept);
    ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
    ASSERT_TRUE(ConfineOpensBeneath({base}).ok());
    RemakeDirectories(base, kept);
  }
}

// A thread on a descriptor table of its own (mdtest tasks): the process's other descriptors are
// not in it, the roots are and confine as before, and what it leaves open is closed when it ends.
TEST(ConfinedPath, OwnDescriptorTable) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/own";
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((base + "/root").c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo((base + "/root/fifo").c_str(), 0644), 0);
  ASSERT_TRUE(ConfineOpensBeneath({base + "/root"}).ok());
  // Opened after the roots, as the worker's gRPC sockets are: never copied.
  int later[2];
  ASSERT_EQ(::pipe2(later, O_CLOEXEC), 0);
  const int reader = ::open((base + "/root/fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);

  int later_errno = 0, writer = -1, escape = 0;
  absl::Status own;
  std::thread task([&] {
    own = UseOwnDescriptorTable();
    later_errno = ::fcntl(later[1], F_GETFD) == -1 ? errno : 0;
    writer = OpenConfined(base + "/root/fifo", O_WRONLY | O_NONBLOCK);  // left open on purpose
    escape = OpenConfined(base + "/root/../outside", O_WRONLY | O_CREAT);
  });
  task.join();
  ASSERT_TRUE(own.ok()) << own;
  EXPECT_EQ(later_errno, EBADF) << "a descriptor the process opened after the roots is not in the thread's table";
  EXPECT_GE(writer, 0) << "the roots are there: a confined open works";
  EXPECT_EQ(escape, -EXDEV) << "and still confines";
  struct stat st;
  EXPECT_NE(::stat((base + "/outside").c_str(), &st), 0);
  // Every writer of the FIFO is gone (the one the thread left open went with its table): hang-up,
  // then EOF. (The kernel releases a thread's table just after join returns: waited for.)
  pollfd hangup{.fd = reader, .events = POLLIN};
  ASSERT_EQ(::poll(&hangup, 1, 10'000), 1) << "the thread's descriptors are closed when it ends";
  EXPECT_TRUE(hangup.revents & POLLHUP);
  char byte;
  EXPECT_EQ(::read(reader, &byte, 1), 0);
  // The process's own descriptors are untouched.
  EXPECT_EQ(::write(later[1], "x", 1), 1);
  EXPECT_EQ(::read(later[0], &byte, 1), 1);
  ::close(later[0]);
  ::close(later[1]);
  ::close(reader);
}

// A worker started with its standard streams closed: they are opened on /dev/null before the
// roots, so no root and no later descriptor takes their numbers. (In a child: the test's own
// streams stay.)
TEST(ConfinedPath, ClosedStandardStreamsAreFilledFirst) {
  const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/closed-streams";
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(0);
    ::close(1);
    ::close(2);
    if (!ConfineOpensBeneath({base}).ok()) ::_exit(10);
    for (int fd = 0; fd <= 2; ++fd) {
      char target[64] = {};
      const std::string link = "/proc/self/fd/" + std::to_string(fd);
      if (::readlink(link.c_str(), target, sizeof(target) - 1) < 0 || std::string(target) != "/dev/null") ::_exit(11 + fd);
    }
    const int next = ::open("/", O_PATH | O_CLOEXEC);
    ::_exit(next >= 4 ? 0 : 20);  // the root took 3
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: confinement failed; 11-13: that stream is not /dev/null; 20: a later open took a low number";
}

}  // namespace
}  // namespace iofleet
