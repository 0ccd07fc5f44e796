#ifndef IOFLEET_COMMON_FILE_SYSTEM_KIND_H_
#define IOFLEET_COMMON_FILE_SYSTEM_KIND_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace iofleet {

// A kind of file system, as statfs(2)'s f_type tells it.
struct FileSystemKind {
  absl::string_view name;  // as mountinfo names it; empty when the kind is not known here
  bool local = false;      // a disk or memory file system: its operations stay on this host
};

// The kind whose f_type is `magic` (an unknown one: no name, not local).
FileSystemKind FileSystemKindOf(uint64_t magic);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_FILE_SYSTEM_KIND_H_
