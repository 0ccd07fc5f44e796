#include "nfs/nfs_tree.h"

#include <fcntl.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/confined_path.h"
#include "nfs/nfs_rpc.h"

namespace iofleet {
namespace {

void CopyAttributes(const fattr3& a, NfsObject* object) {
  object->fsid = a.fsid;
  object->fileid = a.fileid;
  object->size = a.size;
  object->directory = a.type == NF3DIR;
  object->symlink = a.type == NF3LNK;
}

// A handle to pass in arguments (libnfs does not change it).
nfs_fh3 Fh(const std::string& bytes) {
  nfs_fh3 fh;
  fh.data.data_len = static_cast<u_int>(bytes.size());
  fh.data.data_val = const_cast<char*>(bytes.data());
  return fh;
}

sattr3 ModeOnly(uint32_t mode) {
  sattr3 attributes;
  std::memset(&attributes, 0, sizeof(attributes));
  attributes.mode.set_it = 1;
  attributes.mode.set_mode3_u.mode = mode;
  return attributes;
}

// The name of a component, or -EXDEV for one that climbs ("." and ".." never come from paths
// the worker built; refusing them keeps every walk going down).
int CheckName(absl::string_view name) {
  if (name.empty()) return -EINVAL;
  if (name == "." || name == "..") return -EXDEV;
  return 0;
}

// The host part of a URL's server ("host" of "host:port"; an IPv6 literal stays whole).
std::string HostOf(const std::string& server) {
  if (!server.empty() && server[0] == '[') return server.substr(1, server.find(']') - 1);
  const size_t colon = server.find(':');
  return colon != std::string::npos && server.find(':', colon + 1) == std::string::npos ? server.substr(0, colon) : server;
}

// mountport=N from a URL's query; 0 when absent (ask the portmapper).
int MountPortOf(const std::string& query) {
  for (absl::string_view arg : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    int port = 0;
    if (absl::ConsumePrefix(&arg, "mountport=") && absl::SimpleAtoi(arg, &port)) return port;
  }
  return 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NfsTree>> NfsTree::Open(NfsConnection* connection) {
  const NfsUrl& url = connection->root();
  rpc_context* rpc = rpc_init_context();
  if (rpc == nullptr) return absl::ResourceExhaustedError("cannot create an RPC context");
  std::string error;
  const std::string host = HostOf(url.server);
  const int port = MountPortOf(url.query);
  int rc = RunRpc(
      rpc, connection->timeout_ms(),
      [&](rpc_cb cb, void* p) {
        return port > 0 ? rpc_connect_port_async(rpc, host.c_str(), port, MOUNT_PROGRAM, MOUNT_V3, cb, p)
                        : rpc_connect_program_async(rpc, host.c_str(), MOUNT_PROGRAM, MOUNT_V3, cb, p);
      },
      [](void*) {}, &error);
  int mount_status = -1;
  Handle root;
  if (rc == 0) {
    std::string export_path = connection->export_path();
    rc = RunRpc(
        rpc, connection->timeout_ms(), [&](rpc_cb cb, void* p) { return rpc_mount3_mnt_async(rpc, cb, export_path.data(), p); },
        [&](void* data) {
          const auto* result = static_cast<const mountres3*>(data);
          mount_status = result->fhs_status;
          if (mount_status == MNT3_OK) {
            const fhandle3& fh = result->mountres3_u.mountinfo.fhandle;
            root.bytes.assign(fh.fhandle3_val, fh.fhandle3_len);
          }
        },
        &error);
  }
  rpc_destroy_context(rpc);
  if (rc != 0 || mount_status != MNT3_OK || root.bytes.empty()) {
    return absl::UnavailableError(absl::StrCat("NFS MOUNT of ", url.server, ":", connection->export_path(), " for its root handle failed: ",
                                               rc != 0 ? error : absl::StrCat("MNT3 status ", mount_status)));
  }
  return std::unique_ptr<NfsTree>(new NfsTree(connection, std::move(root)));
}

int NfsTree::Lookup(const Handle& directory, const std::string& name, Handle* object, NfsObject* attributes) {
  if (const int bad = CheckName(name); bad != 0) return bad;
  LOOKUP3args args;
  args.what.dir = Fh(directory.bytes);
  args.what.name = const_cast<char*>(name.c_str());
  int status = NFS3_OK;
  bool have_attributes = false;
  const int rc = CallNfs3<LOOKUP3res>(*connection_, rpc_nfs3_lookup_async, args, [&](const LOOKUP3res& result) {
    status = result.status;
    if (status != NFS3_OK) return;
    const LOOKUP3resok& ok = result.LOOKUP3res_u.resok;
    object->bytes.assign(ok.object.data.data_val, ok.object.data.data_len);
    have_attributes = ok.obj_attributes.attributes_follow != 0;
    if (have_attributes) CopyAttributes(ok.obj_attributes.post_op_attr_u.attributes, attributes);
  });
  if (rc != 0) return rc;
  if (status != NFS3_OK) return StatusErrno(status);
  return have_attributes ? 0 : GetAttributes(*object, attributes);
}

int NfsTree::GetAttributes(const Handle& object, NfsObject* attributes) {
  GETATTR3args args;
  args.object = Fh(object.bytes);
  int status = NFS3_OK;
  const int rc = CallNfs3<GETATTR3res>(*connection_, rpc_nfs3_getattr_async, args, [&](const GETATTR3res& result) {
    status = result.status;
    if (status == NFS3_OK) CopyAttributes(result.GETATTR3res_u.resok.obj_attributes, attributes);
  });
  return rc != 0 ? rc : StatusErrno(status);
}

int NfsTree::Parent(const std::string& path, Handle* parent, std::string* leaf) {
  const size_t slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash + 1 >= path.size()) return -EINVAL;
  *leaf = path.substr(slash + 1);
  if (const int bad = CheckName(*leaf); bad != 0) return bad;
  const std::string directory = path.substr(0, slash);
  if (!cached_parent_.empty() && directory == cached_parent_) {
    *parent = cached_handle_;
    return 0;
  }
  Handle at = root_;
  for (absl::string_view part : absl::StrSplit(directory, '/', absl::SkipEmpty())) {
    Handle next;
    NfsObject object;
    if (const int rc = Lookup(at, std::string(part), &next, &object); rc != 0) return rc;
    // The worker made (or was given, resolved) every directory on the way: a symlink here was
    // put there since, and is not followed.
    if (object.symlink) return -ELOOP;
    if (!object.directory) return -ENOTDIR;
    at = std::move(next);
  }
  if (!directory.empty()) {  // the root needs no LOOKUP: nothing worth caching
    cached_parent_ = directory;
    cached_handle_ = at;
  }
  *parent = std::move(at);
  return 0;
}

void NfsTree::Forget(const std::string& path) {
  if (!cached_parent_.empty() && (cached_parent_ == path || absl::StartsWith(cached_parent_, path + "/"))) cached_parent_.clear();
}

int NfsTree::Resolve(const std::string& path, Handle* parent, std::string* leaf, Handle* object, NfsObject* attributes) {
  if (const int rc = Parent(path, parent, leaf); rc != 0) return rc;
  return Lookup(*parent, *leaf, object, attributes);
}

int NfsTree::MakeDirectory(const std::string& path, uint32_t mode) {
  Handle parent;
  std::string leaf;
  if (const int rc = Parent(path, &parent, &leaf); rc != 0) return rc;
  MKDIR3args args;
  args.where.dir = Fh(parent.bytes);
  args.where.name = leaf.data();
  args.attributes = ModeOnly(mode);
  return StatusOnly<MKDIR3res>(*connection_, rpc_nfs3_mkdir_async, args);
}

int NfsTree::RemoveDirectory(const std::string& path) {
  Handle parent;
  std::string leaf;
  if (const int rc = Parent(path, &parent, &leaf); rc != 0) return rc;
  Forget(path);  // a directory made again at this path is another object
  RMDIR3args args;
  args.object.dir = Fh(parent.bytes);
  args.object.name = leaf.data();
  return StatusOnly<RMDIR3res>(*connection_, rpc_nfs3_rmdir_async, args);
}

int NfsTree::Unlink(const std::string& path) {
  Handle parent;
  std::string leaf;
  if (const int rc = Parent(path, &parent, &leaf); rc != 0) return rc;
  REMOVE3args args;
  args.object.dir = Fh(parent.bytes);
  args.object.name = leaf.data();
  return StatusOnly<REMOVE3res>(*connection_, rpc_nfs3_remove_async, args);
}

int NfsTree::Rename(const std::string& from, const std::string& to) {
  Handle from_parent, to_parent;
  std::string from_leaf, to_leaf;
  if (const int rc = Parent(from, &from_parent, &from_leaf); rc != 0) return rc;
  if (const int rc = Parent(to, &to_parent, &to_leaf); rc != 0) return rc;
  Forget(from);
  RENAME3args args;
  args.from.dir = Fh(from_parent.bytes);
  args.from.name = from_leaf.data();
  args.to.dir = Fh(to_parent.bytes);
  args.to.name = to_leaf.data();
  return StatusOnly<RENAME3res>(*connection_, rpc_nfs3_rename_async, args);
}

int NfsTree::Stat(const std::string& path, NfsObject* object) {
  if (path == "/") return GetAttributes(root_, object);
  Handle parent, found;
  std::string leaf;
  return Resolve(path, &parent, &leaf, &found, object);
}

int NfsTree::Write(const Handle& file, absl::Span<const char> data, bool sync) {
  const uint64_t chunk = std::max<uint64_t>(4096, connection_->write_max());
  for (uint64_t offset = 0; offset < data.size();) {
    WRITE3args args;
    std::memset(&args, 0, sizeof(args));
    args.file = Fh(file.bytes);
    args.offset = offset;
    args.count = static_cast<count3>(std::min<uint64_t>(chunk, data.size() - offset));
    args.stable = UNSTABLE;
    args.data.data_len = args.count;
    args.data.data_val = const_cast<char*>(data.data() + offset);
    int status = NFS3_OK;
    count3 written = 0;
    const int rc = CallNfs3<WRITE3res>(*connection_, rpc_nfs3_write_async, args, [&](const WRITE3res& result) {
      status = result.status;
      if (status == NFS3_OK) written = result.WRITE3res_u.resok.count;
    });
    if (rc != 0) return rc;
    if (status != NFS3_OK) return StatusErrno(status);
    if (written == 0) return -ENOSPC;  // the call that wrote nothing says why: no room
    offset += written;
  }
  return sync ? Commit(file) : 0;
}

int NfsTree::Commit(const Handle& file) {
  COMMIT3args args;
  args.file = Fh(file.bytes);
  args.offset = 0;
  args.count = 0;
  return StatusOnly<COMMIT3res>(*connection_, rpc_nfs3_commit_async, args);
}

int NfsTree::Create(const Handle& parent, const std::string& leaf, bool exclusive, Handle* file, uint32_t mode) {
  CREATE3args args;
  std::memset(&args, 0, sizeof(args));
  args.where.dir = Fh(parent.bytes);
  args.where.name = const_cast<char*>(leaf.c_str());
  args.how.mode = exclusive ? GUARDED : UNCHECKED;
  args.how.createhow3_u.obj_attributes = ModeOnly(mode);
  int status = NFS3_OK;
  file->bytes.clear();
  const int rc = CallNfs3<CREATE3res>(*connection_, rpc_nfs3_create_async, args, [&](const CREATE3res& result) {
    status = result.status;
    if (status != NFS3_OK || result.CREATE3res_u.resok.obj.handle_follows == 0) return;
    const nfs_fh3& fh = result.CREATE3res_u.resok.obj.post_op_fh3_u.handle;
    file->bytes.assign(fh.data.data_val, fh.data.data_len);
  });
  return rc != 0 ? rc : StatusErrno(status);
}

int NfsTree::CreateFile(const std::string& path, absl::Span<const char> data, bool sync, bool node, bool shared, uint32_t mode,
                        absl::Span<char> read_back) {
  Handle parent, file;
  std::string leaf;
  if (const int rc = Parent(path, &parent, &leaf); rc != 0) return rc;
  // mknod(S_IFREG) on a kernel NFS mount is a CREATE3 and nothing else (NFSv3 makes regular
  // files only with CREATE): mdtest -k is that, with no data written.
  if (node) {
    data = {};
    sync = false;
  }
  if (const int rc = Create(parent, leaf, /*exclusive=*/!shared, &file, mode); rc != 0) return rc;
  // (mdtest's -y syncs a write: with no data, there is nothing more to do.)
  if (data.empty()) return 0;
  if (file.bytes.empty()) {  // the server did not return the handle
    NfsObject object;
    if (const int found = Lookup(parent, leaf, &file, &object); found != 0) return found;
  }
  if (const int rc = Write(file, data, sync); rc != 0) return rc;
  return read_back.empty() ? 0 : Read(file, read_back);
}

int NfsTree::ReadFile(const std::string& path, absl::Span<char> buffer) {
  Handle parent, file;
  std::string leaf;
  NfsObject object;
  if (const int rc = Resolve(path, &parent, &leaf, &file, &object); rc != 0) return rc;
  if (object.symlink) return -ELOOP;
  if (object.directory) return -EISDIR;
  return Read(file, buffer);
}

int NfsTree::Read(const Handle& file, absl::Span<char> buffer) {
  const uint64_t chunk = std::max<uint64_t>(4096, connection_->read_max());
  for (uint64_t offset = 0; offset < buffer.size();) {
    READ3args args;
    args.file = Fh(file.bytes);
    args.offset = offset;
    args.count = static_cast<count3>(std::min<uint64_t>(chunk, buffer.size() - offset));
    int status = NFS3_OK;
    uint64_t got = 0;
    const int rc = CallNfs3<READ3res>(*connection_, rpc_nfs3_read_async, args, [&](const READ3res& result) {
      status = result.status;
      if (status != NFS3_OK) return;
      const READ3resok& ok = result.READ3res_u.resok;
      got = std::min<uint64_t>({ok.count, ok.data.data_len, buffer.size() - offset});
      std::memcpy(buffer.data() + offset, ok.data.data_val, got);
    });
    if (rc != 0) return rc;
    if (status != NFS3_OK) return StatusErrno(status);
    if (got == 0) return -EIO;  // the file is shorter than mdtest wrote: as mdtest, an error
    offset += got;
  }
  return 0;
}

int NfsTree::List(const std::string& path, absl::FunctionRef<bool(absl::string_view)> entry) {
  Handle directory = root_;
  if (path != "/") {
    Handle parent;
    std::string leaf;
    NfsObject object;
    if (const int rc = Resolve(path, &parent, &leaf, &directory, &object); rc != 0) return rc;
    if (object.symlink) return -ELOOP;
    if (!object.directory) return -ENOTDIR;
  }
  READDIR3args args;
  std::memset(&args, 0, sizeof(args));
  args.dir = Fh(directory.bytes);
  args.count = 32768;
  bool eof = false, stop = false;
  while (!eof && !stop) {
    int status = NFS3_OK;
    bool any = false;
    const int rc = CallNfs3<READDIR3res>(*connection_, rpc_nfs3_readdir_async, args, [&](const READDIR3res& result) {
      status = result.status;
      if (status != NFS3_OK) return;
      const READDIR3resok& ok = result.READDIR3res_u.resok;
      std::memcpy(args.cookieverf, ok.cookieverf, NFS3_COOKIEVERFSIZE);
      eof = ok.reply.eof != 0;
      for (const entry3* e = ok.reply.entries; e != nullptr && !stop; e = e->nextentry) {
        any = true;
        args.cookie = e->cookie;
        const absl::string_view name = e->name;
        if (name != "." && name != ".." && !entry(name)) stop = true;
      }
    });
    if (rc != 0) return rc;
    if (status != NFS3_OK) return StatusErrno(status);
    if (!any && !eof) return -EIO;  // a server that neither lists nor ends: do not loop forever
  }
  return 0;
}

int NfsTree::Identify(const std::string& path, bool create, NfsObject* object) {
  Handle parent, file;
  std::string leaf;
  // The parent first: only a missing last component is made.
  if (const int walked = Parent(path, &parent, &leaf); walked != 0) return walked;
  int rc = Lookup(parent, leaf, &file, object);
  if (rc == -ENOENT && create) {
    // Not exclusive: another thread or worker making the same file at once is fine (O_CREAT).
    rc = Create(parent, leaf, /*exclusive=*/false, &file);
    if (rc == 0) rc = Lookup(parent, leaf, &file, object);
  }
  if (rc != 0) return rc;
  if (object->symlink) return -ELOOP;
  if (object->directory) return -EISDIR;
  return 0;
}

int NfsTree::OpenFile(const std::string& path, int flags, bool create, nfsfh** handle) {
  NfsObject expected;
  if (const int rc = Identify(path, create, &expected); rc != 0) return rc;
  nfs_context* context = connection_->context();
  if (const int rc = nfs_open(context, path.c_str(), flags & ~(O_CREAT | O_EXCL), handle); rc != 0) return rc;
  struct nfs_stat_64 st;
  int rc = nfs_fstat64(context, *handle, &st);
  if (rc == 0 && (st.nfs_dev != expected.fsid || st.nfs_ino != expected.fileid)) rc = -ELOOP;
  if (rc != 0) {
    nfs_close(context, *handle);
    *handle = nullptr;
  }
  return rc;
}

absl::Status MakeNfsDirectories(const NfsUrl& existing, const NfsUrl& directory, bool parents) {
  auto connection = NfsConnection::Connect(existing);
  if (!connection.ok()) return connection.status();
  auto tree = NfsTree::Open(connection->get());
  if (!tree.ok()) return tree.status();
  auto tail = (*connection)->PathOf(directory.ToString());
  if (!tail.ok()) return tail.status();
  std::string path;
  const std::vector<absl::string_view> parts = absl::StrSplit(*tail, '/', absl::SkipEmpty());
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::StrAppend(&path, "/", parts[i]);
    const bool last = i + 1 == parts.size();
    int rc = parents || last ? (*tree)->MakeDirectory(path) : -EEXIST;  // (a parent is looked at, not made)
    if (rc == -EEXIST) {
      // Already there: fine when it is a directory, not when it is a symlink to one.
      NfsObject object;
      rc = (*tree)->Stat(path, &object);
      if (rc == 0 && object.symlink) rc = -ELOOP;
      else if (rc == 0 && !object.directory) rc = -ENOTDIR;
    }
    if (rc == -ENOENT && !parents && !last) {
      return absl::NotFoundError(absl::StrCat(existing.Location(), path, " does not exist (as mdtest, only the test directory itself is made, not its parents)"));
    }
    if (rc == -ELOOP || rc == -EXDEV) return ConfinedPathError(rc, "mkdir", existing.Location() + path);
    if (rc != 0) return (*connection)->Error(rc, absl::StrCat("mkdir ", existing.Location(), path));
  }
  return absl::OkStatus();
}

}  // namespace iofleet
