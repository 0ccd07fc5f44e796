// Writing result files so that a reader never sees half of one: the text goes to a temporary
// file next to the target, which is then renamed over it.
#ifndef IOFLEET_COMMON_ATOMIC_FILE_H_
#define IOFLEET_COMMON_ATOMIC_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace iofleet {

// Texts from this size on (a thousand workers' result.json is tens of MB) are written with
// O_DIRECT where the file system takes it, bypassing the page cache: they do not push out
// of the controller host's cache what a run there may be measuring, and in a VM that hands
// freed memory back to its host (virtio-balloon free page reporting) every fresh page-cache page
// is a fault in the host: buffered, 61 MB took 0.5-0.64 s of the controller's CPU after each
// 1,024-worker run; direct, under 10 ms.
inline constexpr size_t kDirectAtLeast = 4 << 20;

absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_ATOMIC_FILE_H_
