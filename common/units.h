// Parsing of sizes ("4k", "1MiB") and durations ("500ms", "2m") with fio's conventions, and
// human-readable formatting for reports.
#ifndef IOFLEET_COMMON_UNITS_H_
#define IOFLEET_COMMON_UNITS_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace iofleet {

// fio's default kb_base=1024: k/K/KB/KiB = 2^10, m/M/MB/MiB = 2^20, g, t, p likewise.
// A bare number is bytes. Sizes, durations and counts may be arithmetic, as fio's are in
// parentheses: + - * / % ^ and ( ), units on the operands ("(2*1m+4k)", "(1m+30s)"). fio
// evaluates arithmetic only when the value starts with '(' (it reads size=5*1024*1024 as 5
// bytes); iofleet evaluates it either way.
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);

// A whole number or an arithmetic expression over whole numbers (and sizes): "(16*2)".
absl::StatusOr<uint64_t> EvaluateCount(absl::string_view text);

// fio's time syntax: a bare number is in `default_unit_ns` (seconds for runtime); suffixes
// ns, us, ms, s, m, h, d.
absl::StatusOr<uint64_t> ParseDurationNs(absl::string_view text,
                                         uint64_t default_unit_ns = 1000000000ull);

// "4KiB", "1.5MiB", "3GiB" (binary units, at most one decimal where not exact).
std::string FormatBytes(double bytes);
// "48.1MiB/s".
std::string FormatBandwidth(double bytes_per_sec);
// "12.3k", "950", "1.20M" like fio's IOPS figures.
std::string FormatCount(double value);
// "5001msec"-free human form: "850ns", "12.4us", "3.20ms", "1.50s".
std::string FormatDurationNs(double ns);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_UNITS_H_
