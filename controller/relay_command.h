// `iofleet relay --listen ADDR --controller HOST:PORT --expect-workers N`: waits for N workers
// (or relays) to dial in, then dials the controller and serves its runs, one after another,
// until Ctrl-C (controller/relay.h).
#ifndef IOFLEET_CONTROLLER_RELAY_COMMAND_H_
#define IOFLEET_CONTROLLER_RELAY_COMMAND_H_

#include <string>
#include <vector>

namespace iofleet {

int RunRelay(const std::vector<std::string>& args);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_RELAY_COMMAND_H_
