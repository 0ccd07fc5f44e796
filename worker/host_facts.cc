#include "worker/host_facts.h"

#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/file_system_kind.h"
#include "common/hostname.h"
#include "absl/strings/str_split.h"
#include "common/nfs_url.h"
#include "nfs/nfs_connection.h"

namespace iofleet {
namespace {

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

// "key=value" from a comma-separated option list, or "".
std::string Option(const std::string& options, absl::string_view key) {
  for (absl::string_view option : absl::StrSplit(options, ',')) {
    if (absl::StartsWith(option, absl::StrCat(key, "="))) return std::string(option.substr(key.size() + 1));
  }
  return "";
}

// "sda" for "/dev/sda3", "nvme0n1" for "/dev/nvme0n1p2", "loop0" for "/dev/loop0".
std::string WholeDisk(const std::string& source, const std::string& sys_block) {
  if (!absl::StartsWith(source, "/dev/")) return "";
  std::string name = source.substr(5);
  std::ifstream probe(sys_block + "/" + name + "/queue/scheduler");
  if (probe) return name;
  // A partition: strip the trailing partition number (and nvme's "p").
  while (!name.empty() && absl::ascii_isdigit(name.back())) name.pop_back();
  if (!name.empty() && name.back() == 'p' && name.find("nvme") == 0) name.pop_back();
  std::ifstream parent(sys_block + "/" + name + "/queue/scheduler");
  return parent ? name : "";
}

}  // namespace

v1::HostFacts CollectHostFacts() {
  v1::HostFacts facts;
  facts.set_hostname(LocalHostname());
  struct utsname u;
  if (::uname(&u) == 0) facts.set_kernel(absl::StrCat(u.sysname, " ", u.release));
  facts.set_cpus(std::thread::hardware_concurrency());
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (absl::StartsWith(line, "model name")) {
      facts.set_cpu_model(std::string(absl::StripAsciiWhitespace(line.substr(line.find(':') + 1))));
      break;
    }
  }
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (absl::StartsWith(line, "MemTotal:")) {
      std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
      uint64_t kib = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) facts.set_memory_bytes(kib * 1024);
      break;
    }
  }
  return facts;
}

namespace {

// An nfs:// target is reached by libnfs, not a mount: what the connection negotiated.
v1::TargetFacts DescribeNfsTarget(const std::string& path) {
  v1::TargetFacts target;
  target.set_path(path);
  target.set_fs_type("nfs (libnfs userspace client)");
  auto url = ParseNfsUrl(path);
  if (!url.ok()) return target;
  target.set_mount_source(absl::StrCat(url->server, ":", url->path));
  target.set_nfs_version("3");
  target.set_proto("tcp");
  target.set_actimeo("none (no client cache)");
  target.set_mount_options(url->query.empty() ? "vers=3" : absl::StrCat("vers=3,", url->query));
  if (auto connection = NfsConnection::Connect(*url, 10000); connection.ok()) {
    target.set_rsize(absl::StrCat((*connection)->read_max()));
    target.set_wsize(absl::StrCat((*connection)->write_max()));
  }
  return target;
}

// statfs(2)'s f_type as the name mountinfo would give ("" when unknown or unreadable).
std::string FilesystemTypeOf(const std::string& path) {
  struct statfs fs;
  if (::statfs(path.c_str(), &fs) != 0) return "";
  return std::string(FileSystemKindOf(static_cast<uint64_t>(fs.f_type)).name);
}

}  // namespace

v1::TargetFacts DescribeTarget(const std::string& path, const std::string& mountinfo_path, const std::string& sys_block) {
  if (IsNfsUrl(path)) return DescribeNfsTarget(path);
  v1::TargetFacts target;
  target.set_path(path);
  if (struct statfs fs; ::statfs(path.c_str(), &fs) == 0) {
    // As mdtest reports them: blocks times f_bsize.
    target.set_fs_bytes(static_cast<uint64_t>(fs.f_blocks) * static_cast<uint64_t>(fs.f_bsize));
    target.set_fs_free_bytes(static_cast<uint64_t>(fs.f_bfree) * static_cast<uint64_t>(fs.f_bsize));
    target.set_fs_inodes(fs.f_files);
    target.set_fs_free_inodes(fs.f_ffree);
  }
  std::ifstream mountinfo(mountinfo_path);
  size_t best = 0;
  bool found = false;
  for (std::string line; std::getline(mountinfo, line);) {
    // id parent major:minor root mount-point mount-options [optional...] - fstype source super-options
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    if (fields.size() < 10) continue;
    const std::string& mount_point = fields[4];
    const bool contains = path == mount_point || mount_point == "/" || absl::StartsWith(path, mount_point + "/");
    if (!contains || (found && mount_point.size() < best)) continue;
    auto dash = std::find(fields.begin() + 6, fields.end(), "-");
    if (dash == fields.end() || dash + 2 >= fields.end()) continue;
    best = mount_point.size();
    found = true;
    target.set_mount_point(mount_point);
    target.set_fs_type(*(dash + 1));
    target.set_mount_source(*(dash + 2));
    target.set_mount_options(absl::StrCat(fields[5], dash + 3 < fields.end() ? "," + *(dash + 3) : ""));
  }
  if (!found) {
    // The mount is not visible from here (a chroot, some containers): the filesystem's magic
    // number still names its type.
    target.set_fs_type(FilesystemTypeOf(path));
    return target;
  }
  const std::string& options = target.mount_options();
  if (absl::StartsWith(target.fs_type(), "nfs")) {
    target.set_nfs_version(Option(options, "vers"));
    target.set_rsize(Option(options, "rsize"));
    target.set_wsize(Option(options, "wsize"));
    target.set_proto(Option(options, "proto"));
    const std::string actimeo = Option(options, "actimeo");
    target.set_actimeo(!actimeo.empty() ? actimeo
                                         : absl::StrCat(Option(options, "acregmin"), "-", Option(options, "acregmax"), "/",
                                                        Option(options, "acdirmin"), "-", Option(options, "acdirmax")));
  } else if (absl::StartsWith(target.fs_type(), "fuse")) {
    const size_t dot = target.fs_type().find('.');
    target.set_fuse_daemon(dot == std::string::npos ? target.mount_source() : target.fs_type().substr(dot + 1));
  }
  const std::string disk = WholeDisk(target.mount_source(), sys_block);
  if (!disk.empty()) {
    const std::string queue = sys_block + "/" + disk + "/queue/";
    target.set_device(disk);
    // "[mq-deadline] kyber none": the bracketed one is active.
    const std::string schedulers = ReadLine(queue + "scheduler");
    const size_t open = schedulers.find('['), close = schedulers.find(']');
    target.set_scheduler(open != std::string::npos && close > open ? schedulers.substr(open + 1, close - open - 1) : schedulers);
    target.set_nr_requests(ReadLine(queue + "nr_requests"));
    target.set_read_ahead_kb(ReadLine(queue + "read_ahead_kb"));
    target.set_rotational(ReadLine(queue + "rotational"));
    target.set_queue_depth(ReadLine(sys_block + "/" + disk + "/device/queue_depth"));
  }
  return target;
}

}  // namespace iofleet
