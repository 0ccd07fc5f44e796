// This host's name (gethostname), as the controller, the worker and the relay introduce
// themselves.
#ifndef IOFLEET_COMMON_HOSTNAME_H_
#define IOFLEET_COMMON_HOSTNAME_H_

#include <unistd.h>

#include <string>

namespace iofleet {

inline std::string LocalHostname() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);  // a longer name is cut, still terminated
  return name;
}

}  // namespace iofleet

#endif  // IOFLEET_COMMON_HOSTNAME_H_
