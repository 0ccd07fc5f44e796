#include "common/confined_open.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

struct Root {
  std::string path;
  int fd;  // O_PATH | O_DIRECTORY, kept for the life of the process
};

std::vector<Root>& Roots() {
  static auto* roots = new std::vector<Root>();
  return *roots;
}

}  // namespace

absl::Status ConfineOpensBeneath(const std::vector<std::string>& roots) {
  for (const std::string& root : roots) {
    if (absl::StartsWith(root, "nfs://")) continue;
    const int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open allowed root ", root));
    Roots().push_back({root, fd});
  }
  return absl::OkStatus();
}

int OpenConfined(const std::string& path, int flags, mode_t mode) {
  if (Roots().empty()) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    return fd >= 0 ? fd : -errno;
  }
  // The deepest root that lexically holds the path.
  const Root* best = nullptr;
  for (const Root& root : Roots()) {
    const bool holds = root.path == "/" || path == root.path || absl::StartsWith(path, root.path + "/");
    if (holds && (best == nullptr || root.path.size() > best->path.size())) best = &root;
  }
  if (best == nullptr) return -EACCES;
  std::string relative = path == best->path ? "." : path.substr(best->path == "/" ? 1 : best->path.size() + 1);
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, best->fd, relative.c_str(), &how, sizeof(how));
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

absl::Status ConfinedOpenError(int negative_errno, const std::string& what, const std::string& path) {
  const int err = -negative_errno;
  std::string why;
  if (err == EXDEV) why = ": it leads outside the worker's allowed roots (a symlink or '..' pointing out)";
  if (err == EACCES && !Roots().empty()) why = " (or it is not under the worker's allowed roots)";
  return absl::ErrnoToStatus(err, absl::StrCat(what, " ", path, why));
}

}  // namespace iofleet
