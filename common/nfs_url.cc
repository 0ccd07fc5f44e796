#include "common/nfs_url.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace iofleet {
namespace {
constexpr absl::string_view kScheme = "nfs://";
}  // namespace

bool IsNfsUrl(absl::string_view s) { return absl::StartsWith(s, kScheme); }

std::string NfsUrl::Location() const { return absl::StrCat(kScheme, server, path); }

std::string NfsUrl::ToString() const { return query.empty() ? Location() : absl::StrCat(Location(), "?", query); }

NfsUrl NfsUrl::Child(absl::string_view name) const {
  NfsUrl child = *this;
  child.path = absl::StrCat(path == "/" ? "" : path, "/", name);
  return child;
}

bool NfsUrl::IsUnder(const NfsUrl& root) const {
  if (server != root.server) return false;
  if (root.path == "/" || path == root.path) return true;
  return absl::StartsWith(path, root.path) && path[root.path.size()] == '/';
}

absl::StatusOr<NfsUrl> ParseNfsUrl(absl::string_view url) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("NFS URL '", url, "': ", why, " (expected nfs://server/export/path)"));
  };
  if (!IsNfsUrl(url)) return bad("does not start with nfs://");
  absl::string_view rest = url.substr(kScheme.size());
  NfsUrl parsed;
  if (const size_t q = rest.find('?'); q != absl::string_view::npos) {
    parsed.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  const size_t slash = rest.find('/');
  parsed.server = std::string(rest.substr(0, slash));
  if (parsed.server.empty()) return bad("no server");
  if (slash == absl::string_view::npos) return bad("no export path");
  std::vector<absl::string_view> parts;
  for (absl::string_view part : absl::StrSplit(rest.substr(slash), '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") return bad("'..' is not allowed in the path");
    parts.push_back(part);
  }
  parsed.path = absl::StrCat("/", absl::StrJoin(parts, "/"));
  for (absl::string_view arg : absl::StrSplit(parsed.query, '&', absl::SkipEmpty())) {
    if (arg == "version=4" || arg == "version=4.0" || arg == "version=4.1") {
      return bad("NFSv4 is not supported: libnfs 4.0 (Debian 12) fails NFSv4 writes; use NFSv3, the default");
    }
    if (absl::StartsWith(arg, "version=") && arg != "version=3") return bad(absl::StrCat("unknown NFS ", arg, " (3 is supported)"));
  }
  return parsed;
}

}  // namespace iofleet
