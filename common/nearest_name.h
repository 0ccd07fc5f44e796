// Suggests the closest known name for a misspelt one ("--hsts" -> "--hosts"), so every
// "unknown option" error can say what was probably meant.
#ifndef IOFLEET_COMMON_NEAREST_NAME_H_
#define IOFLEET_COMMON_NEAREST_NAME_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace iofleet {

// Levenshtein distance, case-sensitive.
int EditDistance(absl::string_view a, absl::string_view b);

// The candidate closest to `name`, or "" when none is reasonably close (distance above
// max(2, len/3)) so that wild guesses are not offered.
std::string NearestName(absl::string_view name, const std::vector<std::string>& candidates);

// " (did you mean X?)" or "" — ready to append to an error message.
std::string DidYouMean(absl::string_view name, const std::vector<std::string>& candidates,
                       absl::string_view prefix = "");

}  // namespace iofleet

#endif  // IOFLEET_COMMON_NEAREST_NAME_H_
