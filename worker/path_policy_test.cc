#include "worker/path_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

class PathPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::string(std::getenv("TEST_TMPDIR")) + "/policy";
    ::mkdir(base_.c_str(), 0755);
    ::mkdir((base_ + "/allowed").c_str(), 0755);
    ::mkdir((base_ + "/other").c_str(), 0755);
    if (::symlink((base_ + "/other").c_str(), (base_ + "/allowed/escape").c_str()) != 0) {
      ASSERT_EQ(errno, EEXIST);  // made by an earlier test
    }
  }
  std::string base_;
};

TEST_F(PathPolicyTest, AllowsAndCreatesDirectoriesUnderARoot) {
  auto policy = PathPolicy::Create({base_ + "/allowed"});
  ASSERT_TRUE(policy.ok());
  auto dir = policy->ResolveDirectory(base_ + "/allowed/new/deeper");
  ASSERT_TRUE(dir.ok()) << dir.status();
  struct stat st;
  EXPECT_EQ(::stat(dir->c_str(), &st), 0);
  EXPECT_TRUE(policy->ResolveDirectory(base_ + "/allowed").ok());
}

// mdtest's test directory: the directory itself is made (and said to be), never its parents,
// and a path outside the roots is refused before anything about it is said.
TEST_F(PathPolicyTest, TestDirectoryIsMadeWithoutItsParents) {
  auto policy = PathPolicy::Create({base_ + "/allowed"});
  ASSERT_TRUE(policy.ok());
  bool made = false;
  auto dir = policy->ResolveTestDirectory(base_ + "/allowed/md", &made);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_TRUE(made);
  struct stat st;
  EXPECT_EQ(::stat(dir->c_str(), &st), 0);
  ASSERT_TRUE(policy->ResolveTestDirectory(base_ + "/allowed/md", &made).ok());
  EXPECT_FALSE(made) << "an existing test directory is said to be made";

  auto parents = policy->ResolveTestDirectory(base_ + "/allowed/a/b/md", &made);
  ASSERT_FALSE(parents.ok());
  EXPECT_EQ(parents.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(parents.status().message()), ::testing::HasSubstr(base_ + "/allowed/a does not exist"));
  EXPECT_NE(::stat((base_ + "/allowed/a").c_str(), &st), 0) << "a parent was made";

  auto outside = policy->ResolveTestDirectory(base_ + "/other/x/y", &made);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(PathPolicyTest, RefusesPathsOutsideEvenThroughLinksAndDotDot) {
  auto policy = PathPolicy::Create({base_ + "/allowed"});
  ASSERT_TRUE(policy.ok());
  for (const std::string& bad : {base_ + "/other", base_ + "/allowed/escape", base_ + "/allowed/../other",
                                 base_ + "/allowedX", std::string("/etc")}) {
    auto dir = policy->ResolveDirectory(bad);
    ASSERT_FALSE(dir.ok()) << bad;
    EXPECT_EQ(dir.status().code(), absl::StatusCode::kPermissionDenied) << bad << " " << dir.status();
  }
  EXPECT_FALSE(policy->ResolveDirectory(base_ + "/allowed/missing/../../../other").ok());
  // Nothing was created outside the root by the refused requests.
  struct stat st;
  EXPECT_NE(::stat((base_ + "/allowedX").c_str(), &st), 0);
  EXPECT_EQ(policy->ResolveDirectory("relative/dir").status().code(), absl::StatusCode::kInvalidArgument);
}

// Where a run writes its own files (--savePerOpDataCSV): an existing directory under a root,
// through links that stay inside; nothing is made, and a way out is refused.
TEST_F(PathPolicyTest, ExistingDirectoryIsNeverMadeAndStaysUnderARoot) {
  auto policy = PathPolicy::Create({base_ + "/allowed"});
  ASSERT_TRUE(policy.ok());
  auto dir = policy->ResolveExistingDirectory(base_ + "/allowed/./");
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, policy->roots()[0]);
  auto missing = policy->ResolveExistingDirectory(base_ + "/allowed/missing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  struct stat st;
  EXPECT_NE(::stat((base_ + "/allowed/missing").c_str(), &st), 0) << "made";
  for (const std::string& out : {base_ + "/other", base_ + "/allowed/escape", base_ + "/allowed/../other", std::string("/")}) {
    auto refused = policy->ResolveExistingDirectory(out);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied) << out << ": " << refused.status();
  }
  EXPECT_EQ(policy->ResolveExistingDirectory("allowed").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PathPolicyTest, NeedsExistingRoots) {
  EXPECT_FALSE(PathPolicy::Create({}).ok());
  EXPECT_FALSE(PathPolicy::Create({base_ + "/does-not-exist"}).ok());
}

TEST_F(PathPolicyTest, NfsUrlsOnlyUnderAnNfsRoot) {
  auto policy = PathPolicy::Create({base_ + "/allowed", "nfs://filer/export/bench?nfsport=2049"});
  ASSERT_TRUE(policy.ok()) << policy.status();
  // Refused before any connection is tried: another directory, another server, a look-alike
  // prefix, a climb out, or a local root for a URL.
  for (const char* url : {"nfs://filer/export/other", "nfs://other/export/bench", "nfs://filer/export/bench2/x"}) {
    EXPECT_EQ(policy->ResolveDirectory(url).status().code(), absl::StatusCode::kPermissionDenied) << url;
  }
  EXPECT_EQ(policy->ResolveDirectory("nfs://filer/export/bench/../../etc").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(PathPolicy::Create({"nfs://filer/export/../x"}).ok());
}

}  // namespace
}  // namespace iofleet
