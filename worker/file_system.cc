#include "worker/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <nfsc/libnfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/confined_path.h"
#include "common/errno_status.h"
#include "common/write_all.h"
#include "common/file_system_kind.h"
#include "common/nfs_url.h"
#include "common/status_macros.h"
#include "nfs/nfs_connection.h"
#include "nfs/nfs_tree.h"

namespace iofleet {
namespace {

// O_DIRECT wants the memory aligned (to the device's logical block: 4096 covers them all), and
// an item's data is kept in ordinary vectors: a direct create or read goes through this
// thread's bounce buffer, grown to the largest size asked (a phase's -w or -e). Null when the
// memory cannot be had.
char* DirectBounce(size_t size) {
  constexpr size_t kAlign = 4096;
  struct Bounce {
    char* data = nullptr;
    size_t size = 0;
    ~Bounce() { std::free(data); }
  };
  thread_local Bounce bounce;
  if (bounce.size < size || bounce.data == nullptr) {
    const size_t rounded = std::max<size_t>(kAlign, (size + kAlign - 1) / kAlign * kAlign);
    char* grown = static_cast<char*>(std::aligned_alloc(kAlign, rounded));
    if (grown == nullptr) return nullptr;
    std::free(bounce.data);
    bounce.data = grown;
    bounce.size = rounded;
  }
  return bounce.data;
}

// mdtest's --posix.rangelocks (aiori-POSIX's xfer): a POSIX record lock on the first `length`
// bytes of the file, taken (F_WRLCK, F_RDLCK) waiting for any other holder (F_SETLKW), or
// released (F_UNLCK). 0 or an errno.
int LockRange(int fd, short type, size_t length) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = static_cast<off_t>(length);
  while (::fcntl(fd, type == F_UNLCK ? F_SETLK : F_SETLKW, &lock) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

// Reads buffer.size() bytes from offset 0 of `fd` into `buffer` (through the aligned bounce
// when `fd` is O_DIRECT: `direct`), under a read lock on them with `range_lock`. A file shorter
// than that is EIO (mdtest's check).
int ReadLocked(int fd, absl::Span<char> buffer, bool direct, bool range_lock) {
  if (buffer.empty()) return 0;
  char* into = direct ? DirectBounce(buffer.size()) : buffer.data();
  if (into == nullptr) return ENOMEM;
  int error = range_lock ? LockRange(fd, F_RDLCK, buffer.size()) : 0;
  size_t done = 0;
  while (error == 0 && done < buffer.size()) {
    const ssize_t n = ::pread(fd, into + done, buffer.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    else if (n == 0) error = EIO;
    else done += static_cast<size_t>(n);
  }
  if (error == 0 && range_lock) error = LockRange(fd, F_UNLCK, buffer.size());
  if (error == 0 && into != buffer.data()) std::memcpy(buffer.data(), into, buffer.size());
  return error;
}

// The process's umask, read once from /proc/self/status (umask(2) can only be read by setting
// it, which would race with the other threads' creations); 022 where it cannot be read.
uint32_t ProcessUmask() {
  static const uint32_t mask = [] {
    std::FILE* status = std::fopen("/proc/self/status", "re");
    if (status == nullptr) return 022u;
    char line[256];
    uint32_t found = 022;
    while (std::fgets(line, sizeof(line), status) != nullptr) {
      if (std::strncmp(line, "Umask:", 6) == 0) {
        found = static_cast<uint32_t>(std::strtoul(line + 6, nullptr, 8)) & 0777;
        break;
      }
    }
    std::fclose(status);
    return found;
  }();
  return mask;
}

// The data layout writes: 1 MiB of random bytes (the same for a given file size, so a file
// laid out twice holds the same data).
std::vector<char> LayoutChunk(uint64_t size) {
  std::vector<char> chunk(1 << 20);
  std::mt19937_64 rng(size);
  for (size_t i = 0; i + 8 <= chunk.size(); i += 8) {
    const uint64_t word = rng();
    std::memcpy(chunk.data() + i, &word, 8);
  }
  return chunk;
}

// Local paths: every call goes through a ConfinedTree, so each resolves beneath the worker's
// allowed roots with no symlink in the part the worker made (see common/confined_path.h).
class PosixFileSystem final : public FileSystem {
 public:
  explicit PosixFileSystem(size_t kept_directories) : tree_(kept_directories) {}
  void Ready(const std::string& path) override { tree_.OpenParentOf(path); }
  size_t ReadyDirectories() const override { return tree_.kept_directories(); }
  bool OnLocalStorage(const std::string& path) override {
    struct statfs fs {};
    return tree_.StatFileSystem(path, &fs) == 0 && FileSystemKindOf(static_cast<uint64_t>(fs.f_type)).local;
  }
  int MakeDirectory(const std::string& path) override { return -tree_.MakeDirectory(path, kMdtestDirectoryMode); }
  int RemoveDirectory(const std::string& path) override { return -tree_.RemoveDirectory(path); }
  int Stat(const std::string& path, uint64_t* size) override {
    struct stat st;
    if (const int rc = tree_.Stat(path, &st); rc != 0) return -rc;
    if (size == nullptr) return 0;
    *size = static_cast<uint64_t>(st.st_size);
    if (!S_ISBLK(st.st_mode)) return 0;
    // A block device's st_size is 0; its size is the device's (fio's size=100% of /dev/sdX, and
    // a job with filename= but no size=).
    const int fd = OpenConfined(path, O_RDONLY);
    if (fd < 0) return -fd;
    const int error = ::ioctl(fd, BLKGETSIZE64, size) == 0 ? 0 : errno;
    ::close(fd);
    return error;
  }
  int Rename(const std::string& from, const std::string& to) override { return -tree_.Rename(from, to); }
  int Unlink(const std::string& path) override { return -tree_.Unlink(path); }

  int CreateFile(const std::string& path, absl::Span<const char> data, const CreateOptions& how) override {
    if (how.node) {
      const int rc = tree_.MakeNode(path, S_IFREG | kMdtestNodeMode);
      return rc == 0 || (how.shared && rc == -EEXIST) ? 0 : -rc;
    }
    // As mdtest opens (aiori-POSIX's create): O_CREAT | O_RDWR, mode 0664, and O_DIRECT with
    // --posix.odirect. An existing file is not an error here (mdtest's neither); creation then
    // finds more items than it made, and says so. (The final component is never followed if it
    // is a symlink: O_NOFOLLOW.)
    const char* bytes = data.data();
    if (how.direct && !data.empty()) {
      char* bounce = DirectBounce(data.size());
      if (bounce == nullptr) return ENOMEM;
      std::memcpy(bounce, data.data(), data.size());
      bytes = bounce;
    }
    const int fd = tree_.Open(path, O_CREAT | O_RDWR | (how.direct ? O_DIRECT : 0), kMdtestFileMode);
    if (fd < 0) return -fd;
    // (From offset 0, going on after short writes: a full file system surfaces as ENOSPC. With
    // O_DIRECT a size the device cannot take, -w 3901 on ext4, is the kernel's EINVAL.) As
    // aiori-POSIX's write: under the lock (--posix.rangelocks), the data, then its fsync (-y),
    // then the lock's release; with no data (-w 0), none of it: mdtest's -y syncs a write.
    int error = 0;
    if (!data.empty()) {
      error = how.range_lock ? LockRange(fd, F_WRLCK, data.size()) : 0;
      if (error == 0) error = WriteAllAt(fd, absl::string_view(bytes, data.size()), 0);
      if (error == 0 && how.sync && ::fsync(fd) != 0) error = errno;
      if (how.range_lock && error == 0) error = LockRange(fd, F_UNLCK, data.size());
      // --verify-write: read back at once through the same descriptor, as mdtest's create does.
      if (error == 0 && !how.read_back.empty()) {
        error = ReadLocked(fd, how.read_back, how.direct, how.range_lock);
      }
    }
    if (::close(fd) != 0 && error == 0) error = errno;
    return error;
  }

  int ReadFile(const std::string& path, absl::Span<char> buffer, const ReadOptions& how) override {
    const int fd = tree_.Open(path, O_RDONLY | (how.direct ? O_DIRECT : 0));
    if (fd < 0) return -fd;
    const int error = ReadLocked(fd, buffer, how.direct, how.range_lock);
    ::close(fd);
    return error;
  }

  int64_t ListDirectory(const std::string& dir, const std::string& prefix, std::vector<std::string>* paths, size_t max_paths) override {
    const int fd = tree_.OpenDirectory(dir);
    if (fd < 0) return fd;
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
      const int error = errno;
      ::close(fd);
      return -error;
    }
    int64_t n = 0;
    while (dirent* e = ::readdir(d)) {
      const absl::string_view name = e->d_name;
      if (name == "." || name == ".." || !absl::StartsWith(name, prefix)) continue;
      ++n;
      if (paths != nullptr && paths->size() < max_paths) paths->push_back(absl::StrCat(dir, "/", name));
    }
    ::closedir(d);
    return n;
  }

  absl::StatusOr<uint64_t> WritableSpace(const std::string& path) override {
    if (const int fd = OpenConfined(path, O_RDONLY); fd >= 0) {
      struct stat st;
      uint64_t device_size = 0;
      const bool device = ::fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && ::ioctl(fd, BLKGETSIZE64, &device_size) == 0;
      ::close(fd);
      if (device) return device_size;
    }
    const std::string directory = path.substr(0, std::max<size_t>(path.rfind('/'), 1));
    const int fd = OpenConfined(directory, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return ConfinedPathError(fd, "open", directory);
    struct statvfs vfs;
    const int rc = ::fstatvfs(fd, &vfs);
    const int error = errno;
    ::close(fd);
    if (rc != 0) return ErrnoStatus(error, absl::StrCat("free space of ", directory));
    return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  }

  absl::StatusOr<bool> EnsureFile(const std::string& path, uint64_t size, bool fill, bool direct,
                                  const std::function<bool()>& cancelled, v1::JobSpec::Fallocate allocation) override {
    struct stat existing;
    bool block_device = false, character_device = false;
    if (const int probe = OpenConfined(path, O_PATH); probe >= 0) {
      block_device = ::fstat(probe, &existing) == 0 && S_ISBLK(existing.st_mode);
      character_device = !block_device && S_ISCHR(existing.st_mode);
      ::close(probe);
    }
    // A character device (fio's steadystate.fio writes /dev/null and reads /dev/zero): nothing to
    // lay out and no size to check; it takes IO at any offset.
    if (character_device) return false;
    if (block_device) {
      // A block device (filename=/dev/...): never written by layout; it must be big enough.
      const int fd = OpenConfined(path, O_RDONLY | (direct ? O_DIRECT : 0));
      if (fd < 0) return ConfinedPathError(fd, "open", path);
      uint64_t device_size = 0;
      const int rc = ::ioctl(fd, BLKGETSIZE64, &device_size);
      ::close(fd);
      if (rc != 0) return ErrnoStatus(errno, absl::StrCat("size of ", path));
      if (device_size < size) {
        return absl::OutOfRangeError(absl::StrCat(path, " holds ", device_size, " bytes, less than the ", size, " the job needs"));
      }
      return false;
    }
    const int fd = OpenConfined(path, O_RDWR | O_CREAT);
    if (fd < 0) return ConfinedPathError(fd, "create", path);
    struct stat st;
    absl::Status status;
    bool changed = false;
    if (::fstat(fd, &st) != 0) {
      status = ErrnoStatus(errno, absl::StrCat("stat ", path));
    } else if (static_cast<uint64_t>(st.st_size) < size) {
      changed = true;
      if (fill) {
        const std::vector<char> chunk = LayoutChunk(size);
        for (uint64_t offset = st.st_size; offset < size && status.ok();) {
          if (cancelled && cancelled()) {
            status = absl::CancelledError(absl::StrCat("lay out ", path, ": the controller went away"));
            break;
          }
          const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - offset));
          const ssize_t w = ::pwrite(fd, chunk.data(), n, static_cast<off_t>(offset));
          if (w <= 0) status = ErrnoStatus(w < 0 ? errno : ENOSPC, absl::StrCat("lay out ", path));
          else offset += static_cast<uint64_t>(w);
        }
      } else {
        // fio's fallocate=: an allocation the filesystem does not support is skipped, as fio
        // does (a full filesystem is not: ENOSPC fails the layout); the size comes from
        // ftruncate either way.
        int rc = 0;
        switch (allocation) {
          case v1::JobSpec::FALLOCATE_POSIX: rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size)); break;
          case v1::JobSpec::FALLOCATE_KEEP_SIZE: rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(size)) == 0 ? 0 : errno; break;
          case v1::JobSpec::FALLOCATE_NONE: break;
          case v1::JobSpec::FALLOCATE_NATIVE:
          default: rc = ::fallocate(fd, 0, 0, static_cast<off_t>(size)) == 0 ? 0 : errno; break;
        }
        if (rc == ENOSPC) {
          status = ErrnoStatus(rc, absl::StrCat("allocate ", path));
        } else if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
          status = ErrnoStatus(errno, absl::StrCat("size ", path));
        }
      }
    }
    ::close(fd);
    RETURN_IF_ERROR(status);
    if (direct) {
      // Fail at prepare, not mid-run, where the filesystem refuses O_DIRECT (tmpfs does).
      const int probe = OpenConfined(path, O_RDONLY | O_DIRECT);
      if (probe < 0) {
        return ErrnoStatus(-probe, absl::StrCat("open ", path, " with O_DIRECT (direct=1): the filesystem refuses it"));
      }
      ::close(probe);
    }
    return changed;
  }

  absl::Status DropCachedPages(const std::string& path) override {
    const int fd = OpenConfined(path, O_RDONLY);
    if (fd < 0) return ConfinedPathError(fd, "open", path);
    ::fdatasync(fd);
    const int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    if (rc != 0) return ErrnoStatus(rc, absl::StrCat("drop cached pages of ", path, " (invalidate=1)"));
    return absl::OkStatus();
  }

 private:
  ConfinedTree tree_;
};

// NFS roots through libnfs, one connection per root. Every path goes through the
// connection's NfsTree: walked by file handle with no symlink followed (nfs/nfs_tree.h), the
// counterpart of ConfinedTree. Paths are nfs:// URLs.
class NfsFileSystem final : public FileSystem {
 public:
  absl::Status Add(const std::string& root) {
    auto url = ParseNfsUrl(root);
    if (!url.ok()) return url.status();
    for (const Root& r : roots_) {
      if (url->IsUnder(r.connection->root())) return absl::OkStatus();
    }
    auto connection = NfsConnection::Connect(*url);
    if (!connection.ok()) return connection.status();
    auto tree = NfsTree::Open(connection->get());
    if (!tree.ok()) return tree.status();
    roots_.push_back(Root{std::move(*connection), std::move(*tree)});
    return absl::OkStatus();
  }

  // A kernel client applies the process umask to a new object's mode before it asks the server;
  // so does this one (mdtest on an NFS mount gets 0775 & ~umask).
  int MakeDirectory(const std::string& path) override {
    return Call(path, [](NfsTree& t, const std::string& p) { return t.MakeDirectory(p, kMdtestDirectoryMode & ~ProcessUmask()); });
  }
  int RemoveDirectory(const std::string& path) override {
    return Call(path, [](NfsTree& t, const std::string& p) { return t.RemoveDirectory(p); });
  }
  int Stat(const std::string& path, uint64_t* size) override {
    return Call(path, [size](NfsTree& t, const std::string& p) {
      NfsObject object;
      const int rc = t.Stat(p, &object);
      if (rc == 0 && size != nullptr) *size = object.size;
      return rc;
    });
  }
  int Rename(const std::string& from, const std::string& to) override {
    Root* root = nullptr;
    std::string a, b;
    if (!Resolve(from, &root, &a) || !Resolve(to, &root, &b)) return EXDEV;
    return -root->tree->Rename(a, b);
  }
  int Unlink(const std::string& path) override {
    return Call(path, [](NfsTree& t, const std::string& p) { return t.Unlink(p); });
  }
  // (libnfs has no O_DIRECT and takes no locks: a direct or locked create or read is refused,
  // as the controller refuses --posix.odirect and --posix.rangelocks with an nfs:// test directory.)
  int CreateFile(const std::string& path, absl::Span<const char> data, const CreateOptions& how) override {
    if (how.direct || how.range_lock) return EINVAL;
    const uint32_t mode = (how.node ? kMdtestNodeMode : kMdtestFileMode) & ~ProcessUmask();
    return Call(path, [&](NfsTree& t, const std::string& p) { return t.CreateFile(p, data, how.sync, how.node, how.shared, mode, how.read_back); });
  }
  int ReadFile(const std::string& path, absl::Span<char> buffer, const ReadOptions& how) override {
    if (how.direct || how.range_lock) return EINVAL;
    return Call(path, [&](NfsTree& t, const std::string& p) { return t.ReadFile(p, buffer); });
  }

  absl::StatusOr<uint64_t> WritableSpace(const std::string& path) override {
    return absl::UnimplementedError(absl::StrCat("fill_device on ", path, ": iofleet's NFS client does not ask the server for free space"));
  }

  int64_t ListDirectory(const std::string& dir, const std::string& prefix, std::vector<std::string>* paths, size_t max_paths) override {
    int64_t n = 0;
    const int error = Call(dir, [&](NfsTree& t, const std::string& p) {
      return t.List(p, [&](absl::string_view name) {
        if (!absl::StartsWith(name, prefix)) return true;
        ++n;
        if (paths != nullptr && paths->size() < max_paths) paths->push_back(absl::StrCat(dir, "/", name));
        return true;
      });
    });
    return error != 0 ? -error : n;
  }

  absl::StatusOr<bool> EnsureFile(const std::string& path, uint64_t size, bool fill, bool direct,
                                  const std::function<bool()>& cancelled, v1::JobSpec::Fallocate) override {
    (void)direct;  // libnfs has no client cache: every IO goes to the server anyway
    Root* root = nullptr;
    std::string inside;
    if (!Resolve(path, &root, &inside)) return absl::PermissionDeniedError(absl::StrCat(path, " is outside the NFS directories of the job"));
    nfs_context* context = root->connection->context();
    auto failed = [&](int rc, absl::string_view what) {
      if (rc == -ELOOP || rc == -EXDEV) return ConfinedPathError(rc, std::string(what), path);
      return ErrnoStatus(-rc, absl::StrCat(what, " ", path, " (", root->connection->LastError(), ")"));
    };
    nfsfh* handle = nullptr;
    int rc = root->tree->OpenFile(inside, O_RDWR, /*create=*/true, &handle);
    if (rc != 0) return failed(rc, "create");
    struct nfs_stat_64 st;
    absl::Status status;
    bool changed = false;
    if ((rc = nfs_fstat64(context, handle, &st)) != 0) {
      status = failed(rc, "stat");
    } else if (st.nfs_size < size) {
      changed = true;
      if (fill) {
        const std::vector<char> chunk = LayoutChunk(size);
        for (uint64_t offset = st.nfs_size; offset < size && status.ok();) {
          if (cancelled && cancelled()) {
            status = absl::CancelledError(absl::StrCat("lay out ", path, ": the controller went away"));
            break;
          }
          const uint64_t n = std::min<uint64_t>(chunk.size(), size - offset);
          const int w = nfs_pwrite(context, handle, offset, n, chunk.data());
          if (w <= 0) status = failed(w < 0 ? w : -ENOSPC, "lay out");
          else offset += static_cast<uint64_t>(w);
        }
        if (status.ok() && (rc = nfs_fsync(context, handle)) != 0) status = failed(rc, "commit");
      } else if ((rc = nfs_ftruncate(context, handle, size)) != 0) {
        status = failed(rc, "allocate");
      }
    }
    nfs_close(context, handle);
    RETURN_IF_ERROR(status);
    return changed;
  }

  // No client cache to drop (the server's stays: NFS has no call to drop it).
  absl::Status DropCachedPages(const std::string& path) override {
    (void)path;
    return absl::OkStatus();
  }

 private:
  struct Root {
    std::unique_ptr<NfsConnection> connection;
    std::unique_ptr<NfsTree> tree;
  };
  // The root that holds `url` (the same one as *root when that is set), and the path inside it.
  bool Resolve(const std::string& url, Root** root, std::string* inside) {
    for (Root& r : roots_) {
      auto path = r.connection->PathOf(url);
      if (!path.ok()) continue;
      if (*root != nullptr && *root != &r) return false;
      *root = &r;
      *inside = std::move(*path);
      return true;
    }
    return false;
  }
  // Runs a tree call (returning 0 or -errno) on the path inside its root; 0 or errno.
  template <typename F>
  int Call(const std::string& url, F call) {
    Root* root = nullptr;
    std::string inside;
    if (!Resolve(url, &root, &inside)) return EACCES;
    return -call(*root->tree, inside);
  }

  std::vector<Root> roots_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FileSystem>> OpenFileSystem(const std::vector<std::string>& roots, size_t kept_directories) {
  const bool nfs = std::any_of(roots.begin(), roots.end(), [](const std::string& r) { return IsNfsUrl(r); });
  if (!nfs) return std::make_unique<PosixFileSystem>(kept_directories);
  if (!std::all_of(roots.begin(), roots.end(), [](const std::string& r) { return IsNfsUrl(r); })) {
    return absl::InvalidArgumentError("a job cannot mix nfs:// URLs and local paths");
  }
  auto fs = std::make_unique<NfsFileSystem>();
  for (const std::string& root : roots) RETURN_IF_ERROR(fs->Add(root));
  return fs;
}

absl::Status RemoveJobFile(const std::string& path) {
  std::string directory = path;
  if (auto url = ParseNfsUrl(path); url.ok()) {
    NfsUrl parent = *url;
    parent.path = url->path.substr(0, std::max<size_t>(1, url->path.rfind('/')));
    directory = parent.ToString();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<FileSystem> fs, OpenFileSystem({directory}));
  const int error = fs->Unlink(path);
  if (error == 0 || error == ENOENT) return absl::OkStatus();
  return ConfinedPathError(-error, "unlink", path);
}

}  // namespace iofleet
