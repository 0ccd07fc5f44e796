#include "common/protocol_version.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

TEST(ProtocolVersion, NewerPeersWithinRangeAreCompatible) {
  EXPECT_TRUE(CheckProtocolCompatible({1, 1}, "controller", {1, 1}, "worker w").ok());
  // A newer worker that still accepts protocol 1.
  EXPECT_TRUE(CheckProtocolCompatible({1, 1}, "controller", {3, 1}, "worker w").ok());
  // A newer controller talking to an older worker it still supports.
  EXPECT_TRUE(CheckProtocolCompatible({3, 1}, "controller", {1, 1}, "worker w").ok());
}

TEST(ProtocolVersion, IncompatiblePeersGetBothVersionsNamed) {
  absl::Status old_peer = CheckProtocolCompatible({4, 2}, "controller", {1, 1}, "worker w:1");
  EXPECT_EQ(old_peer.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(old_peer.message()),
              HasSubstr("worker w:1 speaks protocol 1, but this controller (protocol 4) needs at least 2"));
  absl::Status old_self = CheckProtocolCompatible({1, 1}, "controller", {5, 3}, "worker w:1");
  EXPECT_THAT(std::string(old_self.message()),
              HasSubstr("worker w:1 (protocol 5) needs at least protocol 3, but this controller speaks 1"));
}

}  // namespace
}  // namespace iofleet
