#include "common/write_all.h"

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace iofleet {
namespace {

// `write` writes some of (data, size) at `done` bytes in; -1 with errno on failure.
template <typename Write>
int WriteLoop(absl::string_view data, const Write& write) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(data.data() + done, data.size() - done, done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOSPC;
    done += static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

int WriteAll(int fd, absl::string_view data) {
  return WriteLoop(data, [fd](const char* p, size_t n, size_t) { return ::write(fd, p, n); });
}

int WriteAllAt(int fd, absl::string_view data, off_t offset) {
  return WriteLoop(data, [fd, offset](const char* p, size_t n, size_t done) {
    return ::pwrite(fd, p, n, offset + static_cast<off_t>(done));
  });
}

}  // namespace iofleet
