// The file operations a worker does outside the measured data path — laying files out before
// a run and mdtest's metadata operations — on a local path (POSIX calls) or on an nfs:// URL
// (libnfs, no mount). One instance per thread: an NFS instance owns libnfs contexts, which
// are not thread-safe. Metadata calls return 0 or an errno (they are timed one by one, so no
// Status is built on success paths); set-up calls return absl::Status.
#ifndef IOFLEET_WORKER_FILE_SYSTEM_H_
#define IOFLEET_WORKER_FILE_SYSTEM_H_

#include <unistd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/job.pb.h"
#include "absl/types/span.h"
#include "common/confined_path.h"

namespace iofleet {

// The modes mdtest asks for (mdtest.c's DIRMODE; aiori-POSIX's create, 0664, and mknod,
// S_IRUSR), before the process umask: a site whose umask is 002 gets group-writable trees from
// both tools.
inline constexpr uint32_t kMdtestDirectoryMode = 0775;
inline constexpr uint32_t kMdtestFileMode = 0664;
inline constexpr uint32_t kMdtestNodeMode = 0400;

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Readies what an operation on `path` needs (its directory, opened beneath the roots) before
  // a timed phase starts; nothing where there is nothing to ready.
  virtual void Ready(const std::string& path) { (void)path; }
  // How many directories Ready keeps open at once (0: Ready keeps nothing). A phase readies no
  // more than that: one more would close the first, which its loop then opens again.
  virtual size_t ReadyDirectories() const { return 0; }
  // Whether operations on names beside `path` stay on this host: a disk or memory file system
  // of a known kind (common/file_system_kind.h: ext2/3/4, xfs, btrfs, f2fs, bcachefs, zfs,
  // tmpfs, ramfs), where they cost no server a request. False for NFS, FUSE (a remote metadata
  // engine behind it, often) and any other kind.
  virtual bool OnLocalStorage(const std::string& path) {
    (void)path;
    return false;
  }
  virtual int MakeDirectory(const std::string& path) = 0;
  virtual int RemoveDirectory(const std::string& path) = 0;
  // `size` (optional) receives the size in bytes.
  virtual int Stat(const std::string& path, uint64_t* size = nullptr) = 0;
  virtual int Rename(const std::string& from, const std::string& to) = 0;
  virtual int Unlink(const std::string& path) = 0;
  // How CreateFile makes a file: fsynced after its data (`sync`), with mknod instead (mdtest
  // -k: `node`), an existing one not an error (`shared`), opened with O_DIRECT (`direct`), its
  // data written under a write lock on its bytes (mdtest's --posix.rangelocks: `range_lock`),
  // and, with data, read again into `read_back` (mdtest's --verify-write: its first
  // read_back.size() bytes, through the same open file, under a read lock with `range_lock`).
  struct CreateOptions {
    bool sync = false;
    bool node = false;
    bool shared = false;
    bool direct = false;
    bool range_lock = false;
    absl::Span<char> read_back = {};
  };
  // How ReadFile reads: through O_DIRECT (`direct`), under a read lock on the bytes it reads
  // (`range_lock`).
  struct ReadOptions {
    bool direct = false;
    bool range_lock = false;
  };
  // Creates a new file (any existing one is an error unless `shared`) and writes `data`.
  virtual int CreateFile(const std::string& path, absl::Span<const char> data, const CreateOptions& how) = 0;
  // Reads buffer.size() bytes from the start of the file, as `how` says; a short read is EIO
  // (as mdtest).
  virtual int ReadFile(const std::string& path, absl::Span<char> buffer, const ReadOptions& how) = 0;
  // Entries of `dir` (not . and ..) whose names start with `prefix`, or -errno; their full
  // paths are appended to `paths` when given, until it holds `max_paths`.
  virtual int64_t ListDirectory(const std::string& dir, const std::string& prefix, std::vector<std::string>* paths = nullptr,
                                size_t max_paths = SIZE_MAX) = 0;
  // mdtest -Y's sync after a phase: sync(2), every file system of the host (as mdtest's POSIX
  // backend; libnfs's writes are already the server's).
  virtual void Sync() { ::sync(); }

  // Brings `path` to at least `size` bytes before a run: filled with data when `fill` (reads
  // of holes measure nothing), else allocated as `allocation` says (fio's fallocate=; an NFS
  // file is only truncated to size: NFSv3 has no allocation). Returns whether anything changed. `cancelled`
  // (may be empty) is asked between chunks: a layout whose caller went away stops (kCancelled).
  virtual absl::StatusOr<bool> EnsureFile(const std::string& path, uint64_t size, bool fill, bool direct,
                                          const std::function<bool()>& cancelled = nullptr,
                                          v1::JobSpec::Fallocate allocation = v1::JobSpec::FALLOCATE_NATIVE) = 0;
  // fio's fill_device: the most a job could write to `path` — the size of the file system that
  // holds it (writes end at ENOSPC before that), or a block device's size.
  virtual absl::StatusOr<uint64_t> WritableSpace(const std::string& path) = 0;
  // fio's invalidate=1: drop the file's cached pages on this host.
  virtual absl::Status DropCachedPages(const std::string& path) = 0;
};

// A file system for paths at or under `roots`: local paths, or nfs:// URLs (one libnfs
// connection per root, made here, so a dead server fails now with its reason). Local paths'
// parent directories stay open, up to `kept_directories` of them (ConfinedTree).
absl::StatusOr<std::unique_ptr<FileSystem>> OpenFileSystem(const std::vector<std::string>& roots,
                                                           size_t kept_directories = ConfinedTree::kCachedDirectories);

// Removes a file a job made (fio unlink=1): a local path beneath the worker's roots with no
// symlink followed, or an nfs:// URL through libnfs. A file already gone is not an error.
absl::Status RemoveJobFile(const std::string& path);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_FILE_SYSTEM_H_
