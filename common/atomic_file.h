// Writing result files so that a reader never sees half of one: the text goes to a temporary
// file next to the target, which is then renamed over it.
#ifndef IOFLEET_COMMON_ATOMIC_FILE_H_
#define IOFLEET_COMMON_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace iofleet {

absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_ATOMIC_FILE_H_
