#include "nfs/nfs_connection.h"

#include <fcntl.h>
#include <nfsc/libnfs.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errno_status.h"

namespace iofleet {

absl::StatusOr<std::unique_ptr<NfsConnection>> NfsConnection::Connect(const NfsUrl& directory, int timeout_ms) {
  // Servers export some directories and not every directory below them (ganesha refuses the
  // MOUNT of a subdirectory): mount the deepest directory the server accepts, from
  // `directory` upwards, and reach the rest by path.
  std::string export_path = directory.path;
  std::string first_error;
  while (true) {
    nfs_context* context = nfs_init_context();
    if (context == nullptr) return absl::ResourceExhaustedError("cannot create a libnfs context");
    std::unique_ptr<NfsConnection> connection(new NfsConnection(context, directory));
    connection->export_path_ = export_path;
    connection->timeout_ms_ = timeout_ms;
    // libnfs applies the URL's arguments (ports, uid/gid, ...) to the context as it parses it.
    nfs_url* parsed = nfs_parse_url_dir(context, directory.ToString().c_str());
    if (parsed == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("NFS URL ", directory.ToString(), ": ", connection->LastError()));
    }
    nfs_destroy_url(parsed);
    nfs_set_timeout(context, timeout_ms);
    // Listings are counted to check what other clients made: never from a stale cache.
    nfs_set_dircache(context, 0);
    const int rc = nfs_mount(context, directory.server.c_str(), export_path.c_str());
    if (rc == 0) return connection;
    if (first_error.empty()) first_error = connection->LastError();
    // Only a refused or unknown export is worth a try higher up; a dead server is not.
    const bool refused = rc == -EACCES || rc == -ENOENT || rc == -EPERM || first_error.find("MNT3ERR") != std::string::npos;
    if (!refused || export_path == "/") {
      return absl::Status(ErrnoStatus(-rc, "").code(),
                          absl::StrCat("NFS mount of ", directory.server, ":", directory.path, " failed: ", first_error));
    }
    export_path = export_path.substr(0, std::max<size_t>(export_path.rfind('/'), 1));
  }
}

NfsConnection::~NfsConnection() { nfs_destroy_context(context_); }

absl::StatusOr<std::string> NfsConnection::PathOf(absl::string_view url) const {
  auto parsed = ParseNfsUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->IsUnder(root_)) {
    return absl::PermissionDeniedError(absl::StrCat(url, " is not under the mounted ", root_.Location()));
  }
  // Relative to the export actually mounted, which is root_.path or a directory above it.
  const std::string rest = parsed->path.substr(export_path_ == "/" ? 0 : export_path_.size());
  return rest.empty() ? std::string("/") : rest;
}

uint64_t NfsConnection::read_max() const { return nfs_get_readmax(context_); }
uint64_t NfsConnection::write_max() const { return nfs_get_writemax(context_); }

std::string NfsConnection::LastError() const {
  const char* error = nfs_get_error(context_);
  return error != nullptr && *error != '\0' ? error : "no reason given";
}

absl::Status NfsConnection::Error(int result, absl::string_view what) const {
  return ErrnoStatus(-result, absl::StrCat(what, " on ", root_.server, " (", LastError(), ")"));
}

}  // namespace iofleet
