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

// fio's arithmetic in option values, `size=(5*1024*1024)`: + - * / % ^ and parentheses over
// operands that are numbers with an optional unit ("4k", "30s"). `operand` turns one operand
// into its value in base units; `*has_unit` says whether any operand carried a unit (a bare
// duration expression is in the option's default unit). As in fio's parser, / and % of two
// whole numbers are integer operations.
class Expression {
 public:
  using Operand = absl::StatusOr<long double> (*)(absl::string_view text, uint64_t default_unit_ns);
  Expression(absl::string_view text, Operand operand, uint64_t default_unit_ns)
      : text_(text), operand_(operand), default_unit_ns_(default_unit_ns) {}

  absl::StatusOr<long double> Evaluate(bool* has_unit) {
    absl::StatusOr<long double> value = Sum();
    if (value.ok() && (Skip(), pos_ != text_.size())) return Error(absl::StrCat("unexpected '", text_.substr(pos_, 1), "'"));
    *has_unit = has_unit_;
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("'", text_, "': ", what, " (arithmetic: + - * / % ^ and parentheses)"));
  }
  void Skip() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Take(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static bool Whole(long double v) { return v == std::floor(v) && std::fabs(v) < 1.8e19L; }

  absl::StatusOr<long double> Sum() {
    absl::StatusOr<long double> left = Product();
    while (left.ok()) {
      if (Take('+')) {
        absl::StatusOr<long double> right = Product();
        if (!right.ok()) return right;
        *left += *right;
      } else if (Take('-')) {
        absl::StatusOr<long double> right = Product();
        if (!right.ok()) return right;
        *left -= *right;
      } else {
        break;
      }
    }
    return left;
  }
  absl::StatusOr<long double> Product() {
    absl::StatusOr<long double> left = Power();
    while (left.ok()) {
      Skip();
      if (pos_ >= text_.size() || (text_[pos_] != '*' && text_[pos_] != '/' && text_[pos_] != '%')) break;
      const char op = text_[pos_++];
      absl::StatusOr<long double> right = Power();
      if (!right.ok()) return right;
      if (op == '*') {
        *left *= *right;
        continue;
      }
      if (*right == 0) return Error("division by zero");
      if (op == '%') {
        if (!Whole(*left) || !Whole(*right)) return Error("% needs whole numbers");
        *left = std::fmod(*left, *right);
      } else {
        *left = Whole(*left) && Whole(*right) ? std::trunc(*left / *right) : *left / *right;
      }
    }
    return left;
  }
  // Every recursion below goes through Nested(): a value of a few KiB of '(' or '-' must not
  // exhaust the stack.
  template <typename Step>
  absl::StatusOr<long double> Nested(Step step) {
    if (++depth_ > 32) return Error("nested more than 32 deep");
    absl::StatusOr<long double> v = step();
    --depth_;
    return v;
  }
  absl::StatusOr<long double> Power() {
    absl::StatusOr<long double> base = Unary();
    if (base.ok() && Take('^')) {
      absl::StatusOr<long double> exponent = Nested([this] { return Power(); });  // right-associative
      if (!exponent.ok()) return exponent;
      *base = std::pow(*base, *exponent);
    }
    return base;
  }
  absl::StatusOr<long double> Unary() {
    if (Take('-')) {
      absl::StatusOr<long double> v = Nested([this] { return Unary(); });
      if (v.ok()) *v = -*v;
      return v;
    }
    if (Take('+')) return Nested([this] { return Unary(); });
    if (Take('(')) {
      absl::StatusOr<long double> v = Nested([this] { return Sum(); });
      if (v.ok() && !Take(')')) return Error("a '(' without its ')'");
      return v;
    }
    Skip();
    const size_t start = pos_;
    while (pos_ < text_.size() && (absl::ascii_isalnum(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    if (pos_ == start) return Error(pos_ < text_.size() ? absl::StrCat("unexpected '", text_.substr(pos_, 1), "'") : "an operand is missing");
    const absl::string_view operand = text_.substr(start, pos_ - start);
    size_t digits = 0;
    while (digits < operand.size() && (absl::ascii_isdigit(operand[digits]) || operand[digits] == '.')) ++digits;
    if (digits == operand.size()) {  // a plain number: a factor, not an amount
      double v;
      if (!absl::SimpleAtod(operand, &v)) return Error(absl::StrCat("'", operand, "' is not a number"));
      return static_cast<long double>(v);
    }
    has_unit_ = true;
    return operand_(operand, default_unit_ns_);
  }

  absl::string_view text_;
  Operand operand_;
  uint64_t default_unit_ns_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool has_unit_ = false;
};

bool IsExpression(absl::string_view text) { return text.find_first_of("()*/+%^") != absl::string_view::npos; }

absl::StatusOr<long double> SizeOperand(absl::string_view text, uint64_t) {
  absl::StatusOr<uint64_t> v = ParseSize(text);
  if (!v.ok()) return v.status();
  return static_cast<long double>(*v);
}

absl::StatusOr<long double> DurationOperand(absl::string_view text, uint64_t default_unit_ns) {
  absl::StatusOr<uint64_t> v = ParseDurationNs(text, default_unit_ns);
  if (!v.ok()) return v.status();
  return static_cast<long double>(*v);
}

// A whole, non-negative result that fits in 64 bits.
absl::StatusOr<uint64_t> WholeResult(absl::string_view text, long double value) {
  if (!(value >= 0)) return absl::InvalidArgumentError(absl::StrCat("'", text, "' comes to ", static_cast<double>(value), ", below 0"));
  if (value >= 18446744073709551615.0L) return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large"));
  return static_cast<uint64_t>(std::llroundl(value));
}

}  // namespace

absl::StatusOr<uint64_t> EvaluateCount(absl::string_view text) {
  bool has_unit = false;
  absl::StatusOr<long double> value = Expression(text, &SizeOperand, 0).Evaluate(&has_unit);
  if (!value.ok()) return value.status();
  return WholeResult(text, *value);
}

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  if (IsExpression(text)) return EvaluateCount(text);
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
  if (IsExpression(text)) {
    bool has_unit = false;
    absl::StatusOr<long double> value = Expression(text, &DurationOperand, default_unit_ns).Evaluate(&has_unit);
    if (!value.ok()) return value.status();
    return WholeResult(text, has_unit ? *value : *value * default_unit_ns);
  }
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
