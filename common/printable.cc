#include "common/printable.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0.
size_t Utf8Length(absl::string_view text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::string Printable(absl::string_view text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes;) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (const size_t n = c >= 0x80 ? Utf8Length(text, i) : 0; n > 0) {
      out.append(text.data() + i, n);
      i += n;
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", c);
      ++i;
    }
  }
  if (i < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes in all)");
  return out;
}

}  // namespace iofleet
