#include "worker/path_policy.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/confined_path.h"
#include "common/errno_status.h"
#include "common/nfs_url.h"
#include "nfs/nfs_tree.h"

namespace iofleet {
namespace {

absl::StatusOr<std::string> RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    return ErrnoStatus(errno, absl::StrCat("resolve ", path));
  }
  return std::string(buffer);
}

}  // namespace

absl::StatusOr<PathPolicy> PathPolicy::Create(const std::vector<std::string>& roots) {
  if (roots.empty()) {
    return absl::InvalidArgumentError("at least one --allow-root DIR is needed: a worker only does IO under allowed roots");
  }
  PathPolicy policy;
  for (const std::string& root : roots) {
    if (IsNfsUrl(root)) {
      // An NFS export (or a directory in one) reached through libnfs: checked by its URL's
      // normalised path (no "..", no symlinks followed by the server outside the export).
      auto url = ParseNfsUrl(root);
      if (!url.ok()) return absl::InvalidArgumentError(absl::StrCat("--allow-root ", root, ": ", url.status().message()));
      policy.roots_.push_back(url->ToString());
      continue;
    }
    auto resolved = RealPath(root);
    if (!resolved.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--allow-root ", root, ": ", resolved.status().message()));
    }
    policy.roots_.push_back(*resolved);
  }
  return policy;
}

bool PathPolicy::IsAllowed(const std::string& resolved) const {
  for (const std::string& root : roots_) {
    if (resolved == root || root == "/" || absl::StartsWith(resolved, root + "/")) return true;
  }
  return false;
}

absl::StatusOr<std::string> PathPolicy::ResolveExistingDirectory(const std::string& directory) const {
  if (directory.empty() || directory[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("directory '", directory, "' must be an absolute path"));
  }
  struct stat st;
  if (::stat(directory.c_str(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("directory '", directory, "'"));
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat("'", directory, "' is not a directory"));
  auto resolved = RealPath(directory);
  if (!resolved.ok()) return resolved.status();
  if (!IsAllowed(*resolved)) {
    return absl::PermissionDeniedError(absl::StrCat("directory '", directory, "' (", *resolved, ") is outside this worker's allowed roots: ",
                                                    absl::StrJoin(roots_, ", ")));
  }
  return *resolved;
}

absl::StatusOr<std::string> PathPolicy::ResolveNfsDirectory(const std::string& directory, bool parents) const {
  auto url = ParseNfsUrl(directory);
  if (!url.ok()) return url.status();
  for (const std::string& root : roots_) {
    auto allowed = ParseNfsUrl(root);
    if (!allowed.ok() || !url->IsUnder(*allowed)) continue;
    // The directory's own connection arguments (ports) win over the root's.
    NfsUrl existing = *allowed;
    if (!url->query.empty()) existing.query = url->query;
    if (absl::Status status = MakeNfsDirectories(existing, *url, parents); !status.ok()) return status;
    return url->ToString();
  }
  return absl::PermissionDeniedError(absl::StrCat("directory '", directory, "' is outside this worker's allowed roots: ",
                                                  absl::StrJoin(roots_, ", ")));
}

absl::StatusOr<std::string> PathPolicy::Resolve(const std::string& directory, bool parents, bool* made) const {
  if (made != nullptr) *made = false;
  if (IsNfsUrl(directory)) return ResolveNfsDirectory(directory, parents);
  if (directory.empty() || directory[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("directory '", directory, "' must be an absolute path"));
  }
  // Split into the longest existing prefix and a missing tail.
  std::vector<std::string> parts = absl::StrSplit(directory, '/', absl::SkipEmpty());
  size_t existing = parts.size();
  std::string prefix;
  while (true) {
    prefix = "/" + absl::StrJoin(parts.begin(), parts.begin() + existing, "/");
    struct stat st;
    if (::stat(prefix.c_str(), &st) == 0) break;
    if (existing == 0) break;
    --existing;
  }
  for (size_t i = existing; i < parts.size(); ++i) {
    if (parts[i] == "..") {
      return absl::InvalidArgumentError(absl::StrCat("directory '", directory, "' has '..' in a part that does not exist yet"));
    }
  }
  auto resolved = RealPath(prefix);
  if (!resolved.ok()) return resolved.status();
  std::string full = *resolved;
  for (size_t i = existing; i < parts.size(); ++i) {
    if (parts[i] != ".") full = absl::StrCat(full == "/" ? "" : full, "/", parts[i]);
  }
  if (!IsAllowed(full)) {
    return absl::PermissionDeniedError(absl::StrCat("directory '", directory, "' (", full,
                                                    ") is outside this worker's allowed roots: ",
                                                    absl::StrJoin(roots_, ", ")));
  }
  // (Said only once the path is known to be beneath a root.)
  if (!parents && existing + 1 < parts.size()) {
    return absl::NotFoundError(absl::StrCat("directory '", directory, "': /", absl::StrJoin(parts.begin(), parts.begin() + existing + 1, "/"),
                                            " does not exist (as mdtest, only the test directory itself is made, not its parents)"));
  }
  // The missing tail is made one level at a time from a descriptor of the level above, which
  // was resolved beneath the root with no symlink: a component swapped meanwhile is refused.
  std::string built = *resolved;
  ConfinedTree tree;
  for (size_t i = existing; i < parts.size(); ++i) {
    if (parts[i] == ".") continue;
    built = absl::StrCat(built == "/" ? "" : built, "/", parts[i]);
    // mdtest's test directory with mdtest's mode (DIRMODE, 0775, before the umask).
    const int rc = tree.MakeDirectory(built, parents ? 0755 : 0775);
    if (rc != 0 && rc != -EEXIST) return ConfinedPathError(rc, "create directory", built);
    if (rc == 0 && i + 1 == parts.size() && made != nullptr) *made = true;
  }
  return full;
}

}  // namespace iofleet
