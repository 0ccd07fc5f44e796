// Path operations on an NFSv3 export that stay beneath it even if the tree changes under them
// (another NFS client swaps a directory for a symlink): the NFS counterpart of ConfinedTree
// (common/confined_path.h).
//
// libnfs's path calls (nfs_unlink, nfs_open, ...) resolve every component on the client and
// follow relative symlinks, so `allowed/link -> ../other` takes them outside the directory the
// worker was allowed. NfsTree instead walks by file handle: it learns the export's root handle
// (MOUNT3), LOOKUPs one component at a time, refuses a symlink anywhere on the way (-ELOOP) and a
// "." or ".." component (-EXDEV), and then makes the call on (directory handle, last name) —
// REMOVE3, RMDIR3, MKDIR3, RENAME3, CREATE3, MKNOD3 — or on the last object's own handle (READ3,
// WRITE3, READDIR3). The handle of the last parent is kept, so the items of one directory
// (mdtest) cost one LOOKUP each, and a parent swapped after that is never entered.
//
// Data files opened through libnfs (the nfs engine, layout) are reached by path: Identify() names
// the object the confined walk finds, and the caller checks that what nfs_open reached is that
// object (its fsid and fileid), so a path that leads elsewhere by the time it is opened is refused.
//
// One NfsTree per NfsConnection and thread (a libnfs context is not thread-safe). Calls return 0
// or -errno, as the worker's metadata operations are timed one by one.
#ifndef IOFLEET_NFS_NFS_TREE_H_
#define IOFLEET_NFS_NFS_TREE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "nfs/nfs_connection.h"

struct nfsfh;

namespace iofleet {

// What a stat of an NFS object says.
struct NfsObject {
  uint64_t fsid = 0;
  uint64_t fileid = 0;
  uint64_t size = 0;
  bool directory = false;
  bool symlink = false;
};

class NfsTree {
 public:
  // Learns the root handle of the export `connection` mounted (a MOUNT3 call of its own, with
  // the connection's ports); `connection` must outlive the tree.
  static absl::StatusOr<std::unique_ptr<NfsTree>> Open(NfsConnection* connection);
  NfsTree(const NfsTree&) = delete;
  NfsTree& operator=(const NfsTree&) = delete;

  // Paths are inside the mount, as NfsConnection::PathOf gives them ("/a/b").
  int MakeDirectory(const std::string& path, uint32_t mode = 0755);
  int RemoveDirectory(const std::string& path);
  int Unlink(const std::string& path);
  int Rename(const std::string& from, const std::string& to);
  // The object itself: a final symlink is described, not followed.
  int Stat(const std::string& path, NfsObject* object);
  // A new file (an existing one is -EEXIST unless `shared`) holding `data`, written UNSTABLE
  // and COMMITted when `sync` (mdtest -y, which syncs a write: no data, no commit); `node`
  // (mdtest -k) creates it without data, as a kernel client does mknod(S_IFREG) over NFSv3.
  // With data, `read_back` (mdtest --verify-write) receives its first read_back.size() bytes read
  // again through the new file's handle.
  int CreateFile(const std::string& path, absl::Span<const char> data, bool sync, bool node, bool shared, uint32_t mode = 0644,
                 absl::Span<char> read_back = {});
  // Reads buffer.size() bytes from offset 0; a shorter file is -EIO (as mdtest). A final
  // symlink is -ELOOP (O_NOFOLLOW).
  int ReadFile(const std::string& path, absl::Span<char> buffer);
  // Calls `entry` with each name in the directory (not . and ..) until it returns false.
  int List(const std::string& path, absl::FunctionRef<bool(absl::string_view)> entry);
  // The regular file at `path`, no symlink followed (-ELOOP for one); made empty first when
  // missing and `create`.
  int Identify(const std::string& path, bool create, NfsObject* object);
  // nfs_open of the regular file at `path` (made when missing and `create`), checked to be the
  // object Identify() finds: a path that libnfs resolves elsewhere (a component swapped for a
  // symlink in between) is closed again and refused with -ELOOP.
  int OpenFile(const std::string& path, int flags, bool create, nfsfh** handle);

 private:
  struct Handle {
    std::string bytes;
  };
  NfsTree(NfsConnection* connection, Handle root) : connection_(connection), root_(std::move(root)) {}
  // The handle of the parent directory of `path` (cached) and its last component.
  int Parent(const std::string& path, Handle* parent, std::string* leaf);
  // The object at `path` (its parent walked, its last component looked up, not followed), with
  // the parent's handle and the last component for calls that act on the name.
  int Resolve(const std::string& path, Handle* parent, std::string* leaf, Handle* object, NfsObject* attributes);
  // LOOKUP of `name` in `directory`.
  int Lookup(const Handle& directory, const std::string& name, Handle* object, NfsObject* attributes);
  // Drops the cached parent when it is `path` or lies below it (removed or renamed).
  void Forget(const std::string& path);
  int GetAttributes(const Handle& object, NfsObject* attributes);
  // CREATE3 of `leaf` in `parent` (GUARDED when `exclusive`); *file gets its handle when the
  // server returns one (else it is left empty).
  int Create(const Handle& parent, const std::string& leaf, bool exclusive, Handle* file, uint32_t mode = 0644);
  int Write(const Handle& file, absl::Span<const char> data, bool sync);
  // READ3s of buffer.size() bytes from offset 0; a shorter file is -EIO.
  int Read(const Handle& file, absl::Span<char> buffer);
  int Commit(const Handle& file);

  NfsConnection* connection_;
  Handle root_;
  std::string cached_parent_;
  Handle cached_handle_;
};

// mkdir -p of `directory` through a connection at `existing` (a directory at or above it that
// exists), component by component and by file handle; directories already there are fine, a
// symlink on the way is refused (kPermissionDenied naming the path). Without `parents` only
// the last component may be missing (mdtest's -d: kNotFound names the missing parent).
absl::Status MakeNfsDirectories(const NfsUrl& existing, const NfsUrl& directory, bool parents = true);

}  // namespace iofleet

#endif  // IOFLEET_NFS_NFS_TREE_H_
