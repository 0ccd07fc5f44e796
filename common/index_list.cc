#include "common/index_list.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace iofleet {

absl::StatusOr<std::vector<uint32_t>> ParseIndexList(absl::string_view text, uint32_t limit) {
  std::vector<bool> seen(limit, false);
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t dash = part.find('-');
    uint32_t first = 0, last = 0;
    if (!absl::SimpleAtoi(part.substr(0, dash), &first) ||
        !absl::SimpleAtoi(dash == absl::string_view::npos ? part : part.substr(dash + 1), &last) || last < first) {
      return absl::InvalidArgumentError(absl::StrCat("'", part, "' is not a number or an ascending range like 0-3"));
    }
    if (last >= limit) return absl::InvalidArgumentError(absl::StrCat("'", part, "' goes above ", limit - 1));
    for (uint32_t i = first; i <= last; ++i) seen[i] = true;
  }
  std::vector<uint32_t> list;
  for (uint32_t i = 0; i < limit; ++i) {
    if (seen[i]) list.push_back(i);
  }
  return list;
}

}  // namespace iofleet
