#include "common/protocol_version.h"

#include "absl/strings/str_cat.h"

namespace iofleet {

absl::Status CheckProtocolCompatible(ProtocolVersions self, absl::string_view self_role,
                                     ProtocolVersions peer, absl::string_view peer_name) {
  if (peer.version < self.min_compatible) {
    return absl::FailedPreconditionError(absl::StrCat(
        peer_name, " speaks protocol ", peer.version, ", but this ", self_role, " (protocol ",
        self.version, ") needs at least ", self.min_compatible, ": upgrade ", peer_name));
  }
  if (self.version < peer.min_compatible) {
    return absl::FailedPreconditionError(absl::StrCat(
        peer_name, " (protocol ", peer.version, ") needs at least protocol ", peer.min_compatible,
        ", but this ", self_role, " speaks ", self.version, ": upgrade this ", self_role));
  }
  return absl::OkStatus();
}

}  // namespace iofleet
