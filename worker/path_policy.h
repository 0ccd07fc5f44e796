// Which paths a worker may touch: only those under the directories it was started with
// (--allow-root). Paths are resolved (symlinks, "..") before the check, so a job cannot
// escape through a link or a relative path. A root may also be an NFS URL prefix
// (nfs://server/export): nfs:// directories must lie under one, by their normalised path.
#ifndef IOFLEET_WORKER_PATH_POLICY_H_
#define IOFLEET_WORKER_PATH_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace iofleet {

class PathPolicy {
 public:
  // Each root must exist; it is stored resolved.
  static absl::StatusOr<PathPolicy> Create(const std::vector<std::string>& roots);

  const std::vector<std::string>& roots() const { return roots_; }

  // Resolves `directory` and checks it lies under a root; creates the missing tail of the
  // directory (mkdir -p) only after the existing part passed the check. Returns the
  // resolved directory. kPermissionDenied names the path and the allowed roots.
  absl::StatusOr<std::string> ResolveDirectory(const std::string& directory) const { return Resolve(directory, true, nullptr); }
  // The same for mdtest's test directory (-d): only the directory itself may be missing, and
  // is made (not its parents: kNotFound names the first missing one). `made` says whether this
  // call made a local one (over nfs:// always false: removing it again would need a connection
  // above the directory the tasks may work in, so the run leaves it).
  absl::StatusOr<std::string> ResolveTestDirectory(const std::string& directory, bool* made) const {
    return Resolve(directory, false, made);
  }
  // A local directory that must already exist (where a run writes its own files: mdtest's
  // --savePerOpDataCSV), resolved and checked as above; nothing is made. kNotFound if missing.
  absl::StatusOr<std::string> ResolveExistingDirectory(const std::string& directory) const;

 private:
  bool IsAllowed(const std::string& resolved) const;
  absl::StatusOr<std::string> Resolve(const std::string& directory, bool parents, bool* made) const;
  absl::StatusOr<std::string> ResolveNfsDirectory(const std::string& url, bool parents) const;
  std::vector<std::string> roots_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_PATH_POLICY_H_
