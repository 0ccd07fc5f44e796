// Opening files only beneath a worker's allowed roots (--allow-root), at every open: each path
// is resolved by the kernel with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) from a
// descriptor of the root that holds it, so a symlink or ".." pointing out of the root — even
// one planted after the job's directory was checked — fails with EXDEV instead of being
// followed. Symlinks that stay inside the root work as usual.
//
// The roots are process-wide (a worker has one set, given at start-up); until they are set,
// OpenConfined is plain open(2), which is what tools and unit tests outside a worker get.
#ifndef IOFLEET_COMMON_CONFINED_OPEN_H_
#define IOFLEET_COMMON_CONFINED_OPEN_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace iofleet {

// Sets the roots (absolute, resolved directories; nfs:// roots are ignored). Call once, before
// any IO thread starts. Fails if a root cannot be opened.
absl::Status ConfineOpensBeneath(const std::vector<std::string>& roots);

// open(2) of an absolute path, confined as above: a descriptor, or -errno (-EXDEV: the path
// leads outside its root; -EACCES: it is under no root at all).
int OpenConfined(const std::string& path, int flags, mode_t mode = 0644);

// A message for a failed OpenConfined, naming the path and, for EXDEV/EACCES, why.
absl::Status ConfinedOpenError(int negative_errno, const std::string& what, const std::string& path);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_CONFINED_OPEN_H_
