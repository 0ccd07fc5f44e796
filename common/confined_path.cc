#include "common/confined_path.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errno_status.h"

namespace iofleet {
namespace {

struct Root {
  std::string path;
  int fd;  // O_PATH | O_DIRECTORY, kept for the life of the process
};

std::vector<Root>& Roots() {
  static auto* roots = new std::vector<Root>();
  return *roots;
}

// The first descriptor number above the standard streams and the roots' (0: roots never set).
int descriptor_floor = 0;
// Whether the calling thread has a descriptor table of its own (UseOwnDescriptorTable).
thread_local bool own_descriptor_table = false;

// The deepest root that lexically holds `path`, or nullptr.
const Root* RootOf(const std::string& path) {
  const Root* best = nullptr;
  for (const Root& root : Roots()) {
    const bool holds = root.path == "/" || path == root.path || absl::StartsWith(path, root.path + "/");
    if (holds && (best == nullptr || root.path.size() > best->path.size())) best = &root;
  }
  return best;
}

// `path` relative to `root` ("." for the root itself).
std::string RelativeTo(const Root& root, const std::string& path) {
  if (path == root.path) return ".";
  return path.substr(root.path == "/" ? 1 : root.path.size() + 1);
}

int OpenAt2(int dirfd, const std::string& relative, int flags, mode_t mode, uint64_t resolve) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  // O_TMPFILE includes O_DIRECTORY's bit: test it whole, or every directory open would pass a
  // mode, which openat2 refuses (EINVAL).
  how.mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0;
  how.resolve = resolve;
  const long fd = ::syscall(SYS_openat2, dirfd, relative.c_str(), &how, sizeof(how));
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

constexpr uint64_t kBeneath = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
constexpr uint64_t kBeneathNoSymlinks = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;

// A directory the worker built, opened with no symlink anywhere beneath its root.
int OpenWorkerDirectory(const std::string& path, int flags) {
  if (path.empty() || path[0] != '/') return -EINVAL;
  if (Roots().empty()) {
    const int fd = ::open(path.c_str(), flags | O_DIRECTORY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  const Root* root = RootOf(path);
  if (root == nullptr) return -EACCES;
  return OpenAt2(root->fd, RelativeTo(*root, path), flags | O_DIRECTORY, 0, kBeneathNoSymlinks);
}

int Result(int rc) { return rc == 0 ? 0 : -errno; }

}  // namespace

absl::Status ConfineOpensBeneath(const std::vector<std::string>& roots) {
  // A standard stream a launcher closed is opened on /dev/null first: otherwise a root would take
  // its number, or a later descriptor (a gRPC socket) one below the floor that a task's own table
  // copies, and a stray write to stderr would land in whatever file got number 2.
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = ::open("/dev/null", O_RDWR);  // (the lowest free number: this one)
    if (null < 0) return ErrnoStatus(errno, "open /dev/null for a closed standard stream");
  }
  for (const std::string& root : roots) {
    if (absl::StartsWith(root, "nfs://")) continue;
    const int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open allowed root ", root));
    Roots().push_back({root, fd});
  }
  descriptor_floor = 3;
  for (const Root& root : Roots()) descriptor_floor = std::max(descriptor_floor, root.fd + 1);
  return absl::OkStatus();
}

absl::Status UseOwnDescriptorTable() {
  if (descriptor_floor == 0) return absl::OkStatus();
  if (::syscall(SYS_close_range, static_cast<unsigned>(descriptor_floor), ~0U, CLOSE_RANGE_UNSHARE) != 0) {
    return ErrnoStatus(errno, "close_range(CLOSE_RANGE_UNSHARE)");
  }
  own_descriptor_table = true;
  for (int fd = 3; fd < descriptor_floor; ++fd) {
    const bool root = std::any_of(Roots().begin(), Roots().end(), [fd](const Root& r) { return r.fd == fd; });
    if (!root) ::close(fd);  // (this table's copy only; EBADF where nothing was open)
  }
  return absl::OkStatus();
}

int OpenConfined(const std::string& path, int flags, mode_t mode) {
  if (Roots().empty()) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    return fd >= 0 ? fd : -errno;
  }
  const Root* root = RootOf(path);
  if (root == nullptr) return -EACCES;
  return OpenAt2(root->fd, RelativeTo(*root, path), flags, mode, kBeneath);
}

void RaiseDescriptorLimit() {
  struct rlimit files {};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  files.rlim_cur = files.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &files);
}

ConfinedTree::~ConfinedTree() {
  for (const CachedDirectory& c : recency_) ::close(c.fd);
}

namespace {

// The process's soft limit on open descriptors (read when a tree is made).
rlim_t DescriptorLimit() {
  struct rlimit files {};
  return ::getrlimit(RLIMIT_NOFILE, &files) == 0 ? files.rlim_cur : rlim_t{1024};
}

// The descriptor number from which a tree closes a kept directory before keeping another. In
// the process's shared table, half the limit: the worker's sockets, its IO threads and the other
// tasks need the rest. In a table of the thread's own (UseOwnDescriptorTable: the standard
// streams, the roots, the tree's directories and the items its task has open), the limit is
// checked against that table alone, and all of it but a margin is the tree's: with the half, a
// task of mdtest -I 2 -z 4 -b 10 (11,111 directories) kept 9,872 of them under this VM's limit of
// 20,000 and opened the rest inside its phases' clock, its file removal at 0.82x mdtest's rate.
rlim_t DescriptorCeiling() {
  const rlim_t limit = DescriptorLimit();
  return own_descriptor_table && limit > 1024 ? limit - 256 : limit / 2;
}

bool IsName(absl::string_view name) { return !name.empty() && name != "." && name != ".."; }

// Directories a tree may keep open below `ceiling`, less room for the items its task has open
// at once.
size_t RoomForDirectories(rlim_t ceiling) { return ceiling > 256 ? static_cast<size_t>(ceiling - 128) : 128; }

}  // namespace

ConfinedTree::ConfinedTree(size_t kept_directories)
    : ceiling_(DescriptorCeiling()), kept_(std::max<size_t>(1, std::min(kept_directories, RoomForDirectories(ceiling_)))) {}

int ConfinedTree::Parent(const std::string& path, const char** leaf) {
  const size_t slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == std::string::npos) return -EINVAL;
  // The last component is acted on by the *at call itself: it must be a name.
  if (!IsName(absl::string_view(path).substr(slash + 1))) return -EINVAL;
  *leaf = path.c_str() + slash + 1;
  const absl::string_view parent = slash == 0 ? absl::string_view("/") : absl::string_view(path).substr(0, slash);
  if (last_ == nullptr || last_->path != parent) {
    auto it = cached_.find(parent);
    if (it == cached_.end()) {
      const int fd = OpenParent(parent);
      if (fd < 0) return fd;
      Remember(parent, fd);
      return fd;
    }
    recency_.splice(recency_.begin(), recency_, it->second);  // (iterators stay valid)
    last_ = &recency_.front();
  }
  return last_->fd;
}

int ConfinedTree::OpenParent(absl::string_view parent) {
  // One step from its own parent when that is open (a tree made from the top down: mdtest's tree
  // creation), with the same rules: beneath that directory, no symlink, a plain name.
  const size_t slash = parent.rfind('/');
  if (!Roots().empty() && slash != absl::string_view::npos && slash > 0 && IsName(parent.substr(slash + 1))) {
    if (auto it = cached_.find(parent.substr(0, slash)); it != cached_.end()) {
      return OpenAt2(it->second->fd, std::string(parent.substr(slash + 1)), O_PATH | O_DIRECTORY, 0, kBeneathNoSymlinks);
    }
  }
  return OpenWorkerDirectory(std::string(parent), O_PATH);
}

void ConfinedTree::Remember(absl::string_view parent, int fd) {
  // Full (or the table at its ceiling: DescriptorCeiling): the directory used longest ago makes
  // room.
  if (!recency_.empty() && (recency_.size() >= kept_ || static_cast<rlim_t>(fd) >= ceiling_)) {
    const CachedDirectory& oldest = recency_.back();
    ::close(oldest.fd);
    --kept_by_length_[oldest.path.size()];
    cached_.erase(absl::string_view(oldest.path));
    recency_.pop_back();
  }
  recency_.push_front(CachedDirectory{std::string(parent), fd});
  cached_.emplace(absl::string_view(recency_.front().path), recency_.begin());
  if (parent.size() >= kept_by_length_.size()) kept_by_length_.resize(parent.size() + 1, 0);
  ++kept_by_length_[parent.size()];
  last_ = &recency_.front();
}

int ConfinedTree::MakeDirectory(const std::string& path, mode_t mode) {
  const char* leaf;
  const int dir = Parent(path, &leaf);
  return dir < 0 ? dir : Result(::mkdirat(dir, leaf, mode));
}

int ConfinedTree::RemoveDirectory(const std::string& path) {
  // A directory kept open as a parent is forgotten first: once it is gone, a new one of the same
  // name (mdtest's next iteration, the next run) must not be written through the old one's
  // descriptor, which names a removed directory (ENOENT on every create in it).
  Forget(path);
  const char* leaf;
  const int dir = Parent(path, &leaf);
  return dir < 0 ? dir : Result(::unlinkat(dir, leaf, AT_REMOVEDIR));
}

void ConfinedTree::Forget(absl::string_view path) {
  // Most removals and renames name a directory never kept (a tree's leaf, an item): no kept path
  // of its length says so without hashing it (which cost a tree removal on tmpfs 3-4% of its rate).
  if (path.size() >= kept_by_length_.size() || kept_by_length_[path.size()] == 0) return;
  auto it = cached_.find(path);
  if (it == cached_.end()) return;
  const Recency::iterator entry = it->second;
  --kept_by_length_[path.size()];
  cached_.erase(it);
  ::close(entry->fd);
  recency_.erase(entry);
  last_ = recency_.empty() ? nullptr : &recency_.front();
}

int ConfinedTree::Unlink(const std::string& path) {
  const char* leaf;
  const int dir = Parent(path, &leaf);
  return dir < 0 ? dir : Result(::unlinkat(dir, leaf, 0));
}

int ConfinedTree::Rename(const std::string& from, const std::string& to) {
  // (As for a removal: the old name's kept descriptor would follow the directory to its new one.)
  Forget(from);
  const char* from_leaf;
  const char* to_leaf;
  int from_dir = Parent(from, &from_leaf);
  if (from_dir < 0) return from_dir;
  const size_t from_slash = from.rfind('/'), to_slash = to.rfind('/');
  if (to_slash == from_slash && to.compare(0, to_slash, from, 0, from_slash) == 0) {
    // The same directory (mdtest renames in place): one descriptor serves both names.
    if (!IsName(absl::string_view(to).substr(to_slash + 1))) return -EINVAL;
    return Result(::renameat(from_dir, from_leaf, from_dir, to.c_str() + to_slash + 1));
  }
  // Different directories: the source's descriptor is duplicated before the cache moves on.
  from_dir = ::fcntl(from_dir, F_DUPFD_CLOEXEC, 0);
  if (from_dir < 0) return -errno;
  const int to_dir = Parent(to, &to_leaf);
  const int rc = to_dir < 0 ? to_dir : Result(::renameat(from_dir, from_leaf, to_dir, to_leaf));
  ::close(from_dir);
  return rc;
}

int ConfinedTree::StatFileSystem(const std::string& path, struct statfs* fs) {
  const char* leaf;
  const int dir = Parent(path, &leaf);
  return dir < 0 ? dir : Result(::fstatfs(dir, fs));
}

int ConfinedTree::Stat(const std::string& path, struct stat* st) {
  if (!Roots().empty()) {
    if (const Root* root = RootOf(path); root != nullptr && root->path == path) return Result(::fstat(root->fd, st));
  }
  const char* leaf;
  const int dir = Parent(path, &leaf);
  return dir < 0 ? dir : Result(::fstatat(dir, leaf, st, AT_SYMLINK_NOFOLLOW));
}

int ConfinedTree::Open(const std::string& path, int flags, mode_t mode) {
  const char* leaf;
  const int dir = Parent(path, &leaf);
  if (dir < 0) return dir;
  const int fd = ::openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  return fd >= 0 ? fd : -errno;
}

int ConfinedTree::OpenDirectory(const std::string& path) { return OpenWorkerDirectory(path, O_RDONLY); }

int ConfinedTree::MakeNode(const std::string& path, mode_t mode) {
  const char* leaf;
  const int dir = Parent(path, &leaf);
  return dir < 0 ? dir : Result(::mknodat(dir, leaf, mode, 0));
}

std::string ConfinedPathReason(int error) {
  if (error == EXDEV) return "it leads outside the worker's allowed roots (a symlink or '..' pointing out)";
  if (error == ELOOP) {
    return "a part of the path is a symlink where the worker made a directory or file (the tree was changed under the run); "
           "refused, not followed";
  }
  if (error == EACCES && !Roots().empty()) return "permission denied, or it is not under the worker's allowed roots";
  return "";
}

absl::Status ConfinedPathError(int negative_errno, const std::string& what, const std::string& path) {
  const int err = -negative_errno;
  const std::string why = ConfinedPathReason(err);
  return ErrnoStatus(err, absl::StrCat(what, " ", path, why.empty() ? "" : ": ", why));
}

}  // namespace iofleet
