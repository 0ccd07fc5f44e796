#include "common/nearest_name.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace iofleet {

int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string NearestName(absl::string_view name, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(2, static_cast<int>(name.size()) / 3);
  std::string best;
  int best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    int d = EditDistance(name, candidate);
    // A known name that merely extends the input ("bloc" -> "block_size") is a good guess too.
    if (candidate.size() > name.size() && absl::StartsWith(candidate, name) &&
        name.size() >= 3) {
      d = std::min(d, 1);
    }
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string DidYouMean(absl::string_view name, const std::vector<std::string>& candidates,
                       absl::string_view prefix) {
  std::string nearest = NearestName(name, candidates);
  if (nearest.empty()) return "";
  return absl::StrCat(" (did you mean ", prefix, nearest, "?)");
}

}  // namespace iofleet
