#include "common/listen_address.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace iofleet {

absl::Status CheckPortFree(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  if (colon == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("'", host_port, "' is not HOST:PORT"));
  std::string host = host_port.substr(0, colon);
  const std::string port = host_port.substr(colon + 1);
  if (port == "0") return absl::OkStatus();
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot listen on ", host_port, ": ", ::gai_strerror(rc)));
  }
  absl::Status status;
  for (addrinfo* a = found; a != nullptr && status.ok(); a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR only lets a port in TIME_WAIT be reused (a restart); a listener still blocks.
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
      const int error = errno;
      status = error == EADDRINUSE
                   ? absl::UnavailableError(absl::StrCat("port ", port, " on ", host, " is already in use (another iofleet-worker, or another ",
                                                         "program, listens there): pick another --listen port or stop that one"))
                   : absl::UnavailableError(absl::StrCat("cannot listen on ", host_port, ": ", std::strerror(error)));
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return status;
}

}  // namespace iofleet
