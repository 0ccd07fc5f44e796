// Every path operation a worker makes, kept beneath its allowed roots (--allow-root) at the
// moment it is made, even if the tree changes under it (another NFS client, another user):
//
// - Data files (OpenConfined): the kernel resolves the path with openat2(RESOLVE_BENEATH |
//   RESOLVE_NO_MAGICLINKS) from a descriptor of the root that holds it, so a symlink or ".."
//   pointing out of the root fails with EXDEV. Symlinks that stay inside the root work, as the
//   user may name such a file (filename=link).
// - Paths the worker built itself (its job directory resolved at Prepare, mdtest trees, the
//   files it named): ConfinedTree opens the parent directory with openat2(RESOLVE_BENEATH |
//   RESOLVE_NO_SYMLINKS) from the root's descriptor, then makes the *at call (mkdirat,
//   unlinkat, renameat, fstatat without following, openat with O_NOFOLLOW) on the last
//   component. Those paths were resolved when the run was prepared, so any symlink met later
//   is a component swapped since: refused with ELOOP, never followed.
//
// The roots are process-wide (a worker has one set, given at start-up); until they are set,
// the same calls work on plain paths, which is what tools and unit tests outside a worker get.
#ifndef IOFLEET_COMMON_CONFINED_PATH_H_
#define IOFLEET_COMMON_CONFINED_PATH_H_

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>

#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace iofleet {

// Sets the roots (absolute, resolved directories; nfs:// roots are ignored). Call once, before
// any IO thread starts and before the process opens anything else (UseOwnDescriptorTable counts
// on it). Opens /dev/null on any standard stream the launcher left closed. Fails if a root cannot
// be opened.
absl::Status ConfineOpensBeneath(const std::vector<std::string>& roots);

// Gives the calling thread a descriptor table of its own, holding the standard streams and the
// allowed roots' descriptors and nothing else, for the rest of its life (the table is released,
// and every descriptor opened in it closed, when the thread ends).
//
// Why: threads of one process share one table, and every open and close takes its lock and
// every descriptor lookup in a multi-threaded process pays reference counts, so mdtest tasks that
// open and close a file per item (file read: 1 M/s and more on tmpfs) slow each other down where
// mdtest's ranks, separate processes, do not (two tasks in one worker read files at 0.78x
// mdtest's rate on tmpfs sharing the table, 1.06x with a table each: README).
//
// What it needs of the caller: every descriptor the thread uses from then on is one it opens
// itself (or a root's), and none it opens is handed to another thread (the number would name
// another file, or nothing, in the shared table). A thread that calls into gRPC or any library
// that keeps descriptors process-wide must not call it.
//
// The worker's other descriptors (gRPC's sockets and epoll set among them) are not copied:
// close_range(2) with CLOSE_RANGE_UNSHARE copies only those below its first argument, the first
// number above the roots' (they are opened at start-up, before any other of the worker's). A
// copied socket would stay open, and registered in gRPC's epoll set, after gRPC closes it.
// Descriptors a launcher left open below that number are copied by the kernel and closed at once
// in the new table. Until ConfineOpensBeneath is called (tools, unit tests) it does nothing.
absl::Status UseOwnDescriptorTable();

// open(2) of an absolute path, confined as above: a descriptor, or -errno (-EXDEV: the path
// leads outside its root; -EACCES: it is under no root at all).
int OpenConfined(const std::string& path, int flags, mode_t mode = 0644);

// Raises the process's soft limit on open descriptors to its hard limit (as Go's runtime does
// at start-up): each mdtest task keeps up to ConfinedTree::kCachedDirectories directories open,
// and the common soft limit of 1,024 would leave a few tasks a few hundred. Call it before any
// ConfinedTree is made (each reads the limit when made); a failure changes nothing.
void RaiseDescriptorLimit();

// Metadata operations on absolute paths the worker built, for one thread. Each returns 0 (or a
// descriptor) or -errno: -ELOOP when a component is a symlink, -EXDEV when the path leads out
// of its root, -EACCES when it is under no root. Descriptors of the last kCachedDirectories
// parent directories used are kept, so operations on the items of a directory (mdtest) resolve
// it once, and a directory swapped for a symlink after that is never entered (the descriptor
// stays on the real one). A directory moved elsewhere after it was opened is still written
// through its descriptor: rename(2) can only put it where its mover may write anyway.
class ConfinedTree {
 public:
  // Keeps up to `kept_directories` parent directories open (at least one; fewer when the
  // process's descriptor limit is lower: see kept_directories()).
  explicit ConfinedTree(size_t kept_directories = kCachedDirectories);
  ~ConfinedTree();
  ConfinedTree(const ConfinedTree&) = delete;
  ConfinedTree& operator=(const ConfinedTree&) = delete;

  // How many parent directories stay open (fewer when the descriptor table nears its ceiling:
  // half the soft limit in the process's shared table, all of it but a margin in a table of the
  // thread's own). A tree of mdtest -z 3 -b 10 has 1,111 directories: with 64 kept, a task with two
  // items per directory (-I 2) opened (and closed) a directory for every other operation, and
  // its directory and file phases ran at 0.74-0.93x mdtest's rate on tmpfs; with 2,048,
  // 1.00-1.38x (bench/mdtest_bench.sh, 5 pairs).
  static constexpr size_t kCachedDirectories = 2048;
  // How many it keeps: what it was asked for, within that ceiling less a margin (a task's
  // descriptor table holds its kept directories and the items it has open). A
  // directory opened beyond that closes the one used longest ago, so a phase that goes through
  // more directories than this, once each, opens every one of them in its loop.
  size_t kept_directories() const { return kept_; }

  // Opens (and keeps) the directory that holds `path`, as the first operation on a name in it
  // would: a timed operation that comes next finds it open (an untimed set-up step).
  void OpenParentOf(const std::string& path) {
    const char* leaf;
    (void)Parent(path, &leaf);
  }
  int MakeDirectory(const std::string& path, mode_t mode = 0755);
  int RemoveDirectory(const std::string& path);
  int Unlink(const std::string& path);
  int Rename(const std::string& from, const std::string& to);
  // lstat(2): a final symlink is described, not followed.
  int Stat(const std::string& path, struct stat* st);
  // openat(2) of the last component with O_NOFOLLOW.
  int Open(const std::string& path, int flags, mode_t mode = 0644);
  // A descriptor of the directory itself (O_RDONLY | O_DIRECTORY), for fdopendir.
  int OpenDirectory(const std::string& path);
  // mknod(2) of a regular file (mdtest -k).
  int MakeNode(const std::string& path, mode_t mode);
  // fstatfs(2) of the directory that holds `path` (which need not exist yet).
  int StatFileSystem(const std::string& path, struct statfs* fs);

 private:
  struct CachedDirectory {
    std::string path;
    int fd;
  };
  // Most recently used first: using one moves it to the front, the last makes room (both O(1),
  // so a tree of thousands of directories visited in turn costs no scan per directory).
  using Recency = std::list<CachedDirectory>;
  // By path; the keys view the list's own strings (list nodes stay where they are).
  using Cache = absl::flat_hash_map<absl::string_view, Recency::iterator>;
  // A descriptor of the directory that holds `path` (cached), or -errno; `leaf` points at the
  // last component inside `path` (a suffix, so NUL-terminated; no copy per operation).
  int Parent(const std::string& path, const char** leaf);
  // Opens `parent` beneath the roots: one step from its own parent when that is cached.
  int OpenParent(absl::string_view parent);
  // Keeps `fd` as `parent`'s, closing the directory used longest ago when the cache is full.
  void Remember(absl::string_view parent, int fd);
  // Closes and drops `path`'s descriptor if it is kept (the directory is about to be removed or
  // renamed).
  void Forget(absl::string_view path);
  rlim_t ceiling_;  // the descriptor number from which a kept directory is closed first
  size_t kept_;
  Recency recency_;
  Cache cached_;
  std::vector<uint32_t> kept_by_length_;  // how many kept paths have each length (Forget)
  const CachedDirectory* last_ = nullptr;  // the front of recency_: the first one looked at
};

// A message for a failed confined call, naming the path and, for EXDEV/ELOOP/EACCES, why;
// those three are kPermissionDenied (the worker refused), other errors keep their errno's code.
absl::Status ConfinedPathError(int negative_errno, const std::string& what, const std::string& path);
// The message alone, for callers that keep an errno (mdtest operations).
std::string ConfinedPathReason(int error);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_CONFINED_PATH_H_
