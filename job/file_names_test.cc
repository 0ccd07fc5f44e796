#include "job/file_names.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::ElementsAre;

TEST(FileNames, ColonsSeparateAndBackslashColonEscapes) {
  EXPECT_THAT(SplitFioList("a:b:c"), ElementsAre("a", "b", "c"));
  EXPECT_THAT(SplitFioList("c\\:foo"), ElementsAre("c:foo")) << "fio: one file named c:foo";
  EXPECT_THAT(SplitFioList("f1:f2::f3"), ElementsAre("f1", "f2", "", "f3")) << "empty entries are kept, to be refused";
  EXPECT_THAT(SplitFioList("x\\y"), ElementsAre("x\\y")) << "a backslash before anything else stays";
}

TEST(FileNames, DirectoryListsButNotNfsUrls) {
  v1::JobSpec job;
  job.set_directory("/a:/b");
  EXPECT_THAT(JobDirectories(job), ElementsAre("/a", "/b"));
  job.set_directory("nfs://server:2049/export/x");
  EXPECT_THAT(JobDirectories(job), ElementsAre("nfs://server:2049/export/x"));
  job.clear_directory();
  EXPECT_TRUE(JobDirectories(job).empty());
  EXPECT_TRUE(JobFileNames(job).empty());
}

TEST(FileNames, FilenameFormatKeywords) {
  const GeneratedFile file{.job_name = "write", .worker = 3, .jobnum = 1, .filenum = 7};
  EXPECT_EQ(*GeneratedFileName("", file), "write.w3.1.7") << "iofleet's default keeps workers apart";
  EXPECT_EQ(*GeneratedFileName("myfiles.$clientuid.$jobnum.$filenum", file), "myfiles.3.1.7") << "fio's nfs.fio example";
  EXPECT_EQ(*GeneratedFileName("$jobname.$jobnum.$filenum", file), "write.1.7") << "fio's default: shared by workers";
  EXPECT_EQ(*GeneratedFileName("shared", file), "shared");
  absl::StatusOr<std::string> typo = GeneratedFileName("f.$jobnam.$filenum", file);
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(std::string(typo.status().message()), ::testing::HasSubstr("unknown keyword '$jobnam' (did you mean jobname?)"));
}

}  // namespace
}  // namespace iofleet
