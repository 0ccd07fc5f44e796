#include "common/launch_rank.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace iofleet {

absl::StatusOr<std::optional<LaunchRank>> LaunchRankFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  // More workers than any controller takes (ClusterSession bounds --expect-workers lower).
  constexpr uint32_t kHighestRank = 1'000'000;
  for (const char* name : kLaunchRankVariables) {
    const char* value = getenv ? getenv(name) : std::getenv(name);
    if (value == nullptr) continue;
    uint32_t rank = 0;
    if (!absl::SimpleAtoi(value, &rank) || rank > kHighestRank) {
      return absl::InvalidArgumentError(absl::StrCat(name, "='", value, "' is not a launch rank (a number from 0 to ", kHighestRank, ")"));
    }
    return LaunchRank{.rank = rank, .source = name};
  }
  return std::nullopt;
}

}  // namespace iofleet
