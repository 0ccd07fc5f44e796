#include "common/nfs_url.h"

#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(NfsUrl, ParsesServerPathAndQuery) {
  auto url = ParseNfsUrl("nfs://10.0.0.1//export/./a/?nfsport=2049&mountport=20048");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->server, "10.0.0.1");
  EXPECT_EQ(url->path, "/export/a");
  EXPECT_EQ(url->query, "nfsport=2049&mountport=20048");
  EXPECT_EQ(url->ToString(), "nfs://10.0.0.1/export/a?nfsport=2049&mountport=20048");
  EXPECT_EQ(url->Location(), "nfs://10.0.0.1/export/a");
  EXPECT_EQ(url->Child("f.0").ToString(), "nfs://10.0.0.1/export/a/f.0?nfsport=2049&mountport=20048");
}

TEST(NfsUrl, RefusesWhatCannotBeConfined) {
  EXPECT_FALSE(ParseNfsUrl("nfs://server/export/../etc").ok());
  EXPECT_FALSE(ParseNfsUrl("nfs:///export").ok());
  EXPECT_FALSE(ParseNfsUrl("nfs://server").ok());
  EXPECT_FALSE(ParseNfsUrl("/export").ok());
  const auto v4 = ParseNfsUrl("nfs://server/export?version=4");
  ASSERT_FALSE(v4.ok());
  EXPECT_NE(v4.status().message().find("NFSv3"), std::string::npos) << v4.status();
  EXPECT_TRUE(ParseNfsUrl("nfs://server/export?version=3").ok());
}

TEST(NfsUrl, UnderARootOnlyAtAComponentBoundary) {
  const NfsUrl root = *ParseNfsUrl("nfs://s/export");
  EXPECT_TRUE(ParseNfsUrl("nfs://s/export")->IsUnder(root));
  EXPECT_TRUE(ParseNfsUrl("nfs://s/export/a/b?nfsport=1")->IsUnder(root));
  EXPECT_FALSE(ParseNfsUrl("nfs://s/export2/a")->IsUnder(root));
  EXPECT_FALSE(ParseNfsUrl("nfs://t/export/a")->IsUnder(root));
  EXPECT_TRUE(ParseNfsUrl("nfs://s/x")->IsUnder(*ParseNfsUrl("nfs://s/")));
}

}  // namespace
}  // namespace iofleet
