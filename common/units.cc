#include "common/units.h"

#include <cctype>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {
namespace {

// Splits "12ms" into "12" and "ms".
void SplitNumber(absl::string_view text, absl::string_view* number, absl::string_view* suffix) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  *number = text.substr(0, i);
  *suffix = text.substr(i);
}

}  // namespace

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  absl::string_view number, suffix;
  SplitNumber(absl::StripAsciiWhitespace(text), &number, &suffix);
  uint64_t value = 0;
  if (number.empty() || !absl::SimpleAtoi(number, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a size (e.g. 4k, 1MiB, 512)"));
  }
  std::string unit = absl::AsciiStrToLower(suffix);
  int shift = 0;
  if (unit.empty() || unit == "b") {
    shift = 0;
  } else {
    static constexpr const char kLetters[] = "kmgtp";
    const char* pos = std::char_traits<char>::find(kLetters, 5, unit[0]);
    absl::string_view rest = absl::string_view(unit).substr(1);
    if (pos == nullptr || !(rest.empty() || rest == "b" || rest == "ib")) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' has an unknown size unit '", suffix, "' (use k, m, g, t, p or KiB, MiB, ...)"));
    }
    shift = 10 * static_cast<int>(pos - kLetters + 1);
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) {
    return absl::InvalidArgumentError(absl::StrCat("size '", text, "' is too large"));
  }
  return value << shift;
}

absl::StatusOr<uint64_t> ParseDurationNs(absl::string_view text, uint64_t default_unit_ns) {
  absl::string_view number, suffix;
  SplitNumber(absl::StripAsciiWhitespace(text), &number, &suffix);
  double value = 0;
  if (number.empty() || !absl::SimpleAtod(number, &value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a duration (e.g. 30, 500ms, 2m)"));
  }
  std::string unit = absl::AsciiStrToLower(suffix);
  double scale;
  if (unit.empty()) scale = static_cast<double>(default_unit_ns);
  else if (unit == "ns") scale = 1;
  else if (unit == "us" || unit == "usec") scale = 1e3;
  else if (unit == "ms" || unit == "msec") scale = 1e6;
  else if (unit == "s" || unit == "sec") scale = 1e9;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else if (unit == "d") scale = 86400e9;
  else {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' has an unknown time unit '", suffix, "' (use us, ms, s, m, h, d)"));
  }
  double ns = value * scale;
  if (ns > 1.8e19) return absl::InvalidArgumentError(absl::StrCat("duration '", text, "' is too long"));
  return static_cast<uint64_t>(std::llround(ns));
}

std::string FormatBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0 || bytes == std::floor(bytes)) return absl::StrFormat("%.0f%s", bytes, kUnits[unit]);
  if (bytes >= 100) return absl::StrFormat("%.0f%s", bytes, kUnits[unit]);
  if (bytes >= 10) return absl::StrFormat("%.1f%s", bytes, kUnits[unit]);
  return absl::StrFormat("%.2f%s", bytes, kUnits[unit]);
}

std::string FormatBandwidth(double bytes_per_sec) {
  return absl::StrCat(FormatBytes(bytes_per_sec), "/s");
}

std::string FormatCount(double value) {
  if (value < 1000) return absl::StrFormat("%.0f", value);
  if (value < 1e4) return absl::StrFormat("%.2fk", value / 1e3);
  if (value < 1e6) return absl::StrFormat("%.1fk", value / 1e3);
  if (value < 1e7) return absl::StrFormat("%.2fM", value / 1e6);
  return absl::StrFormat("%.1fM", value / 1e6);
}

std::string FormatDurationNs(double ns) {
  if (ns < 1e3) return absl::StrFormat("%.0fns", ns);
  if (ns < 1e4) return absl::StrFormat("%.2fus", ns / 1e3);
  if (ns < 1e6) return absl::StrFormat("%.1fus", ns / 1e3);
  if (ns < 1e7) return absl::StrFormat("%.2fms", ns / 1e6);
  if (ns < 1e9) return absl::StrFormat("%.1fms", ns / 1e6);
  return absl::StrFormat("%.2fs", ns / 1e9);
}

}  // namespace iofleet
