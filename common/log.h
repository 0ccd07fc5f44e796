// Minimal stderr logging for daemons and the CLI (Debian's abseil has no absl/log).
// Never used on the per-IO path.
#ifndef IOFLEET_COMMON_LOG_H_
#define IOFLEET_COMMON_LOG_H_

#include "absl/strings/string_view.h"

namespace iofleet {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below this level are dropped (default kInfo).
void SetLogLevel(LogLevel level);
// Prefix for every line, e.g. "iofleet-worker 127.0.0.1:7420".
void SetLogPrefix(absl::string_view prefix);
void Log(LogLevel level, absl::string_view message);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_LOG_H_
