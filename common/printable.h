// User text echoed in messages (a job file's line, a section name), made safe for a terminal:
// control bytes and bytes that are not UTF-8 become \xNN, and very long text is cut with a
// note of its length, so a binary or hostile job file cannot flood or drive the terminal.
#ifndef IOFLEET_COMMON_PRINTABLE_H_
#define IOFLEET_COMMON_PRINTABLE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace iofleet {

std::string Printable(absl::string_view text, size_t max_bytes = 200);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_PRINTABLE_H_
