// One libnfs context mounted at an NFS directory URL: what the nfs engine, the worker's file
// layout and metadata tasks, and its host facts use to reach an NFS server without a kernel
// mount. A context is not thread-safe: each thread connects its own (as fio's nfs engine does).
#ifndef IOFLEET_NFS_NFS_CONNECTION_H_
#define IOFLEET_NFS_NFS_CONNECTION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/nfs_url.h"

struct nfs_context;

namespace iofleet {

class NfsConnection {
 public:
  // Mounts directory.server:directory.path (NFSv3; or the nearest directory above it that the
  // server exports, reaching the directory by path) with the URL's libnfs arguments
  // (nfsport=, mountport=, uid=...). Blocking calls on the connection time out after
  // `timeout_ms`. Errors name the server, the path and libnfs's reason.
  static absl::StatusOr<std::unique_ptr<NfsConnection>> Connect(const NfsUrl& directory, int timeout_ms = 30000);
  ~NfsConnection();
  NfsConnection(const NfsConnection&) = delete;
  NfsConnection& operator=(const NfsConnection&) = delete;

  nfs_context* context() const { return context_; }
  const NfsUrl& root() const { return root_; }
  // The directory the server mounted: root().path or the nearest exported one above it.
  const std::string& export_path() const { return export_path_; }
  int timeout_ms() const { return timeout_ms_; }
  // The path inside the mount of a URL at or under root() ("/" for the root itself);
  // kPermissionDenied for any other URL.
  absl::StatusOr<std::string> PathOf(absl::string_view url) const;
  // The server's largest READ3/WRITE3 transfer (rsize/wsize of a kernel mount).
  uint64_t read_max() const;
  uint64_t write_max() const;
  // libnfs's message for the last failure on this context.
  std::string LastError() const;
  // An absl::Status for a negative libnfs result (-errno), naming the operation.
  absl::Status Error(int result, absl::string_view what) const;

 private:
  NfsConnection(nfs_context* context, NfsUrl root) : context_(context), root_(std::move(root)) {}
  nfs_context* context_;
  NfsUrl root_;
  std::string export_path_;  // what was mounted: root_.path or a directory above it
  int timeout_ms_ = 30000;
};

}  // namespace iofleet

#endif  // IOFLEET_NFS_NFS_CONNECTION_H_
