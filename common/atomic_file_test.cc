#include "common/atomic_file.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

namespace fs = std::filesystem;

std::string MakeDirectory(const std::string& base) {
  std::string pattern = base + "/atomic-file-XXXXXX";
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
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  return names;
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
  std::vector<std::string> bases = {getenv("TEST_TMPDIR")};
  if (fs::is_directory("/dev/shm")) bases.push_back("/dev/shm");
  for (const std::string& base : bases) {
    const std::string dir = MakeDirectory(base);
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
    fs::remove_all(dir);
  }
}

// A directory that cannot be written: an error that names the file, and nothing left.
TEST(WriteFileAtomically, AnUnwritableDirectoryIsAnErrorNamingTheFile) {
  const std::string dir = MakeDirectory(getenv("TEST_TMPDIR"));
  ASSERT_FALSE(dir.empty());
  const std::string missing = dir + "/no-such-directory/result.json";
  for (size_t size : {size_t{10}, kDirectAtLeast + 1}) {
    const absl::Status status = WriteFileAtomically(missing, Varied(size));
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find("no-such-directory/result.json"), absl::string_view::npos) << status;
  }
  EXPECT_TRUE(Entries(dir).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace iofleet
