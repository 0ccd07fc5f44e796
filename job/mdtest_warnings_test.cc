#include "job/mdtest_warnings.h"

#include "gtest/gtest.h"

namespace iofleet {
namespace {

using Op = v1::MetadataPhase;

TEST(MdtestRecursionPath, DoublesTheSeparatorsBelowTheTreesTop) {
  const std::string item = "/t/test-dir.0-0/mdtest_tree.0.0/mdtest_tree.0.1/mdtest_tree.0.4/dir.mdtest.0.21";
  EXPECT_EQ(MdtestRecursionPath(item, 0), item);
  EXPECT_EQ(MdtestRecursionPath(item, 2), "/t/test-dir.0-0/mdtest_tree.0.0/mdtest_tree.0.1//mdtest_tree.0.4//dir.mdtest.0.21");
  // A level deeper than the path has separators stops at its root.
  EXPECT_EQ(MdtestRecursionPath("/a/b", 9), "/a//b");
  EXPECT_EQ(MdtestRecursionPath("", 3), "");
}

TEST(MdtestWarning, NamesEachOperationInMdtestsWords) {
  EXPECT_EQ(MdtestWarning(Op::FILE_STAT, 0, "/t/a/b", "", false, 1), "unable to stat file /t/a/b");
  EXPECT_EQ(MdtestWarning(Op::DIR_STAT, 0, "/t/a/b", "", false, 1), "unable to stat directory /t/a/b");
  EXPECT_EQ(MdtestWarning(Op::FILE_REMOVE, 3, "/t/a/b", "", false, 1), "[RANK 003]: unlink() of file \"/t/a//b\" failed");
  EXPECT_EQ(MdtestWarning(Op::DIR_REMOVE, 0, "/t/a/b", "", false, 1), "unable to remove directory /t/a//b");
  EXPECT_EQ(MdtestWarning(Op::DIR_CREATE, 0, "/t/a/b", "", false, 0), "unable to create directory /t/a/b");
  EXPECT_EQ(MdtestWarning(Op::TREE_CREATE, 0, "/t/top", "", true, 0), "unable to create tree directory '/t/top/'");
  EXPECT_EQ(MdtestWarning(Op::TREE_CREATE, 0, "/t/top/sub", "", false, 0), "Unable to create directory /t/top/sub/");
  EXPECT_EQ(MdtestWarning(Op::TREE_REMOVE, 0, "/t/top", "", true, 0), "Unable to remove directory /t/top/");
}

TEST(MdtestWarning, ARenameIsOneFailureOfTwoLines) {
  EXPECT_EQ(MdtestWarning(Op::DIR_RENAME, 12, "/t/a", "/t/b", false, 0),
            "[RANK 012]: rename() of file \"/t/a\" to  \"/t/b\" failed\nunable to rename directory /t/a");
}

TEST(MdtestWarning, OnlyTheOperationsMdtestGoesPast) {
  for (Op::Op op : {Op::FILE_CREATE, Op::FILE_READ}) {
    EXPECT_FALSE(MdtestWarnsAndGoesOn(op)) << op;
    EXPECT_EQ(MdtestWarning(op, 0, "/t/a", "", false, 0), "") << op;
  }
  for (Op::Op op : {Op::TREE_CREATE, Op::TREE_REMOVE, Op::DIR_CREATE, Op::DIR_STAT, Op::DIR_RENAME, Op::DIR_REMOVE, Op::FILE_STAT,
                    Op::FILE_REMOVE}) {
    EXPECT_TRUE(MdtestWarnsAndGoesOn(op)) << op;
    EXPECT_NE(MdtestWarning(op, 0, "/t/a", "/t/b", false, 0), "") << op;
  }
}

}  // namespace
}  // namespace iofleet
