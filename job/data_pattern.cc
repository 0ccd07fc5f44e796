#include "job/data_pattern.h"

#include <climits>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

bool IsHex(char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); }

int HexValue(char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10; }

// The pattern's bytes with %o pasted in: one period of what the buffer holds.
std::string Period(const v1::DataPattern& pattern, uint64_t block_offset) {
  std::string period = pattern.bytes();
  for (const uint32_t at : pattern.block_offset_at()) {
    for (int i = 0; i < 8 && at + i < period.size(); ++i) period[at + i] = static_cast<char>(block_offset >> (8 * i));
  }
  return period;
}

}  // namespace

absl::StatusOr<v1::DataPattern> ParseDataPattern(absl::string_view text, bool block_offsets) {
  v1::DataPattern pattern;
  std::string& bytes = *pattern.mutable_bytes();
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  if (rest.empty()) return absl::InvalidArgumentError("the pattern is empty");
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': ", why, " at '", rest, "'"));
  };
  while (!rest.empty()) {
    if (rest[0] == '"' || rest[0] == '\'') {
      const size_t end = rest.find(rest[0], 1);
      if (end == absl::string_view::npos) return bad("no closing quote");
      const absl::string_view quoted = rest.substr(1, end - 1);
      if (rest[0] == '"') {
        if (quoted.empty()) return bad("an empty string");
        bytes.append(quoted.data(), quoted.size());
      } else {
        // fio reads the file where the job file is read: here, on the controller.
        std::ifstream in{std::string(quoted), std::ios::binary};
        if (!in) return bad(absl::StrCat("cannot read the file '", quoted, "'"));
        std::string contents(kMaxPatternBytes + 1, '\0');
        in.read(contents.data(), static_cast<std::streamsize>(contents.size()));
        contents.resize(static_cast<size_t>(in.gcount()));
        if (contents.empty()) return bad(absl::StrCat("the file '", quoted, "' is empty"));
        bytes.append(contents);
      }
      rest.remove_prefix(end + 1);
    } else if (rest[0] == '%') {
      if (!absl::StartsWith(rest, "%o")) return bad("the only format is %o (the block's offset)");
      if (!block_offsets) return bad("%o (the block's offset) is for verify_pattern only, as in fio");
      pattern.add_block_offset_at(static_cast<uint32_t>(bytes.size()));
      bytes.append(8, '\0');
      rest.remove_prefix(2);
    } else if (rest.size() > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') && IsHex(rest[2])) {
      size_t digits = 2;
      while (digits < rest.size() && IsHex(rest[digits])) ++digits;
      // fio's 0xff0x14: a hex number followed by another ends before that one's "0x".
      if (digits < rest.size() && (rest[digits] == 'x' || rest[digits] == 'X') && rest[digits - 1] == '0') --digits;
      absl::string_view hex = rest.substr(2, digits - 2);
      if (hex.size() % 2 == 1) {  // an odd count: the first digit is a byte of its own
        bytes.push_back(static_cast<char>(HexValue(hex[0])));
        hex.remove_prefix(1);
      }
      for (size_t i = 0; i < hex.size(); i += 2) bytes.push_back(static_cast<char>(HexValue(hex[i]) << 4 | HexValue(hex[i + 1])));
      rest.remove_prefix(digits);
    } else {
      size_t end = (rest[0] == '-' || rest[0] == '+') ? 1 : 0;
      const size_t first_digit = end;
      while (end < rest.size() && absl::ascii_isdigit(static_cast<unsigned char>(rest[end]))) ++end;
      // A decimal number ends where a hex one ("0x") starts, as in fio's -100xab.
      if (end > first_digit + 1 && end < rest.size() && (rest[end] == 'x' || rest[end] == 'X') && rest[end - 1] == '0') --end;
      int64_t value = 0;
      if (end == first_digit || !absl::SimpleAtoi(rest.substr(0, end), &value)) {
        return bad("expected a number (decimal, or hex starting 0x), a \"string\", a 'file' or %o");
      }
      if (value > INT_MAX || value < INT_MIN) return bad("a decimal number must fit in 32 bits (use hex for more)");
      uint32_t v = static_cast<uint32_t>(static_cast<int32_t>(value));
      if (v == 0) bytes.push_back('\0');
      for (; v != 0; v >>= 8) bytes.push_back(static_cast<char>(v & 0xff));
      rest.remove_prefix(end);
    }
    if (bytes.size() > kMaxPatternBytes) return absl::InvalidArgumentError(absl::StrCat("'", text, "': longer than ", kMaxPatternBytes, " bytes"));
  }
  return pattern;
}

absl::Status CheckDataPattern(const v1::DataPattern& pattern) {
  if (pattern.bytes().empty()) return absl::InvalidArgumentError("the pattern is empty");
  if (pattern.bytes().size() > kMaxPatternBytes) return absl::InvalidArgumentError(absl::StrCat("the pattern is longer than ", kMaxPatternBytes, " bytes"));
  if (pattern.block_offset_at_size() > static_cast<int>(kMaxPatternBytes / 8)) return absl::InvalidArgumentError("the pattern has too many %o");
  for (const uint32_t at : pattern.block_offset_at()) {
    if (at > pattern.bytes().size() - 8 || pattern.bytes().size() < 8) return absl::InvalidArgumentError("a %o of the pattern lies past its end");
  }
  return absl::OkStatus();
}

void FillWithPattern(const v1::DataPattern& pattern, char* out, uint64_t length, uint64_t block_offset) {
  const std::string period = Period(pattern, block_offset);
  for (uint64_t done = 0; done < length;) {
    const uint64_t n = std::min<uint64_t>(period.size(), length - done);
    std::memcpy(out + done, period.data(), n);
    done += n;
  }
}

std::optional<uint64_t> FirstPatternMismatch(const v1::DataPattern& pattern, const char* data, uint64_t length,
                                             uint64_t phase, uint64_t block_offset) {
  const std::string period = Period(pattern, block_offset);
  uint64_t at = phase % period.size();
  for (uint64_t i = 0; i < length;) {
    const uint64_t n = std::min<uint64_t>(period.size() - at, length - i);
    if (std::memcmp(data + i, period.data() + at, n) != 0) {
      for (uint64_t k = 0; k < n; ++k) {
        if (data[i + k] != period[at + k]) return i + k;
      }
    }
    i += n;
    at = 0;
  }
  return std::nullopt;
}

}  // namespace iofleet
