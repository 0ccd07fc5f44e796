#include "common/log.h"

#include <cstdio>
#include <mutex>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace iofleet {
namespace {

std::mutex& LogMutex() {
  static std::mutex mu;
  return mu;
}
LogLevel g_level = LogLevel::kInfo;
std::string& Prefix() {
  static std::string prefix;
  return prefix;
}

}  // namespace

void SetLogLevel(LogLevel level) { g_level = level; }

void SetLogPrefix(absl::string_view prefix) {
  std::lock_guard<std::mutex> lock(LogMutex());
  Prefix() = std::string(prefix);
}

void Log(LogLevel level, absl::string_view message) {
  if (level < g_level) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  std::string stamp = absl::FormatTime("%H:%M:%E3S", absl::Now(), absl::LocalTimeZone());
  std::lock_guard<std::mutex> lock(LogMutex());
  std::fprintf(stderr, "%s %s%s%s: %.*s\n", stamp.c_str(), Prefix().c_str(),
               Prefix().empty() ? "" : " ", kNames[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace iofleet
