// Protocol versioning between controller and workers. Each side announces the version it
// speaks and the oldest version it can still work with; two peers are compatible when each
// speaks at least the other's minimum. Fields are only ever added to the protos, so newer
// peers talk to older ones without exact version equality (unlike fio's client/server).
#ifndef IOFLEET_COMMON_PROTOCOL_VERSION_H_
#define IOFLEET_COMMON_PROTOCOL_VERSION_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace iofleet {

inline constexpr uint32_t kProtocolVersion = 4;
// 2: one session stream per worker; 3: a session's interval reports travel in batches; 4: relays
// (a session may stand for many workers; only relays need a controller of 4).
inline constexpr uint32_t kMinCompatibleProtocolVersion = 3;
inline constexpr char kIofleetVersion[] = "0.1.0";

struct ProtocolVersions {
  uint32_t version = 0;
  uint32_t min_compatible = 0;
};

// OK, or kFailedPrecondition naming both sides' versions, e.g. "worker 10.0.0.2:7420 speaks
// protocol 0, but this controller (protocol 1) needs at least 1".
absl::Status CheckProtocolCompatible(ProtocolVersions self, absl::string_view self_role,
                                     ProtocolVersions peer, absl::string_view peer_name);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_PROTOCOL_VERSION_H_
