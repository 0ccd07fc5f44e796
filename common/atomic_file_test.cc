#include "common/atomic_file.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

std::string MakeDirectory(const char* base) {
  std::string pattern = std::string(base) + "/atomic-file-XXXXXX";
  return mkdtemp(pattern.data()) != nullptr ? pattern : "";
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    }
    closedir(d);
  }
  return names;
}

void RemoveAll(const std::string& dir) {
  for (const std::string& name : Entries(dir)) unlink((dir + "/" + name).c_str());
  rmdir(dir.c_str());
}

// A text that is not one byte repeated, so that a chunk written twice or out of place shows.
std::string Varied(size_t size) {
  std::string text(size, ' ');
  for (size_t i = 0; i < size; ++i) text[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return text;
}

// Small and large texts (the large ones go through O_DIRECT where the file system takes it: a
// whole number of 4 KiB blocks and a tail), on the test's own directory (a disk file system
// here) and on /dev/shm (tmpfs): the file holds exactly the text, replaces what was there, and
// no temporary file is left beside it.
TEST(WriteFileAtomically, WritesExactlyTheTextAndLeavesNothingElse) {
  std::vector<std::string> bases = {getenv("TEST_TMPDIR") != nullptr ? getenv("TEST_TMPDIR") : "/tmp"};
  struct stat shm;
  if (stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode)) bases.push_back("/dev/shm");
  for (const std::string& base : bases) {
    const std::string dir = MakeDirectory(base.c_str());
    ASSERT_FALSE(dir.empty()) << base;
    const std::string path = dir + "/result.json";
    for (size_t size : {size_t{0}, size_t{17}, kDirectAtLeast - 1, kDirectAtLeast, kDirectAtLeast + 4096, 3 * kDirectAtLeast + 12345}) {
      const std::string text = Varied(size);
      ASSERT_TRUE(WriteFileAtomically(path, text).ok()) << base << " " << size;
      const std::string back = Read(path);
      EXPECT_EQ(back.size(), size) << base;
      EXPECT_TRUE(back == text) << base << ": " << size << " bytes read back differ";
      EXPECT_EQ(Entries(dir), std::vector<std::string>{"result.json"}) << base << " " << size;
    }
    RemoveAll(dir);
  }
}

// A directory that cannot be written: an error that names the file, and nothing left.
TEST(WriteFileAtomically, AnUnwritableDirectoryIsAnErrorNamingTheFile) {
  const std::string dir = MakeDirectory(getenv("TEST_TMPDIR") != nullptr ? getenv("TEST_TMPDIR") : "/tmp");
  ASSERT_FALSE(dir.empty());
  const std::string missing = dir + "/no-such-directory/result.json";
  for (size_t size : {size_t{10}, kDirectAtLeast + 1}) {
    const absl::Status status = WriteFileAtomically(missing, Varied(size));
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("no-such-directory/result.json"), absl::string_view::npos) << status;
  }
  EXPECT_TRUE(Entries(dir).empty());
  RemoveAll(dir);
}

}  // namespace
}  // namespace iofleet
