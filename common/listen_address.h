// Checks on an address a daemon is about to listen on (HOST:PORT, [V6]:PORT).
#ifndef IOFLEET_COMMON_LISTEN_ADDRESS_H_
#define IOFLEET_COMMON_LISTEN_ADDRESS_H_

#include <string>

#include "absl/status/status.h"

namespace iofleet {

// OK when HOST:PORT can be bound now (port 0 always can), else kUnavailable "port P on HOST
// is already in use ..." or why it cannot be bound. gRPC listens with SO_REUSEPORT, under
// which a second daemon would share a port silently; this bind has no such option.
absl::Status CheckPortFree(const std::string& host_port);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_LISTEN_ADDRESS_H_
