// NFS URLs as libnfs and fio's nfs engine take them: nfs://server/path[?arg=val&...].
// Parsing is pure (no libnfs) so that the controller, the worker's path policy and the tests
// share one rule: the path is absolute and normalised ("//" and "." dropped), ".." is refused
// (a URL must not climb out of the export an --allow-root prefix names), and the query holds
// libnfs connection arguments (nfsport=, mountport=, uid=, ...), kept verbatim.
#ifndef IOFLEET_COMMON_NFS_URL_H_
#define IOFLEET_COMMON_NFS_URL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace iofleet {

struct NfsUrl {
  std::string server;  // host name or address (with :port when given)
  std::string path;    // absolute, normalised, no trailing '/' except for "/"
  std::string query;   // without the '?', may be empty

  // "nfs://server/path?query".
  std::string ToString() const;
  // Without the query: the part that names a place (used to build and compare paths).
  std::string Location() const;
  // The URL of `name` inside this directory (query kept).
  NfsUrl Child(absl::string_view name) const;
  // True when this URL is `root` or lies below it (same server; query ignored).
  bool IsUnder(const NfsUrl& root) const;
};

bool IsNfsUrl(absl::string_view s);

// kInvalidArgument naming the URL and what is wrong: no server, a relative or ".." path,
// NFSv4 (version=4: libnfs 4.0 cannot encode NFSv4 writes, so results would be wrong).
absl::StatusOr<NfsUrl> ParseNfsUrl(absl::string_view url);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_NFS_URL_H_
