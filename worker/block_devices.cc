#include "worker/block_devices.h"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <linux/magic.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errno_status.h"

namespace iofleet {
namespace {

namespace fs = std::filesystem;

// The first line of a sysfs attribute, trimmed; "" when it cannot be read.
std::string ReadAttribute(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

// "[mq-deadline] kyber none" -> "mq-deadline"; "none" when the device has no choice.
std::string ActiveScheduler(const std::string& line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open != std::string::npos && close != std::string::npos) return line.substr(open + 1, close - open - 1);
  return line;
}

absl::StatusOr<std::pair<uint32_t, uint32_t>> ParseDev(const std::string& text, const fs::path& file) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(text, ':');
  uint32_t major = 0, minor = 0;
  if (!absl::SimpleAtoi(parts.first, &major) || !absl::SimpleAtoi(parts.second, &minor)) {
    return absl::InternalError(absl::StrCat(file.string(), ": not a device number: '", text, "'"));
  }
  return std::make_pair(major, minor);
}

// Adds the devices that get the requests for the block device at sysfs directory `dir`.
absl::Status Resolve(const fs::path& dir, int depth, std::vector<BlockDevice>* out) {
  if (depth > 8) return absl::FailedPreconditionError(absl::StrCat(dir.string(), ": devices stacked more than 8 deep"));
  std::error_code error;
  fs::path disk = dir;
  // A partition's requests are its disk's (the block layer remaps the sectors).
  if (fs::exists(dir / "partition", error)) disk = dir.parent_path();
  // Device-mapper and md pass bios on to the devices beneath them.
  const fs::path slaves = disk / "slaves";
  if (fs::is_directory(slaves, error) && !fs::is_empty(slaves, error)) {
    for (const fs::directory_entry& slave : fs::directory_iterator(slaves, error)) {
      absl::Status status = Resolve(fs::canonical(slave.path(), error), depth + 1, out);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  const std::string dev_text = ReadAttribute(disk / "dev");
  if (dev_text.empty()) return absl::NotFoundError(absl::StrCat(disk.string(), "/dev: cannot be read"));
  absl::StatusOr<std::pair<uint32_t, uint32_t>> dev = ParseDev(dev_text, disk / "dev");
  if (!dev.ok()) return dev.status();
  BlockDevice device;
  device.major = dev->first;
  device.minor = dev->second;
  device.name = disk.filename().string();
  device.scheduler = ActiveScheduler(ReadAttribute(disk / "queue" / "scheduler"));
  device.backing = ReadAttribute(disk / "loop" / "backing_file");
  device.io_stats = ReadAttribute(disk / "queue" / "iostats") == "1";
  if (fs::is_directory(disk / "mq", error)) {
    for (const fs::directory_entry& queue : fs::directory_iterator(disk / "mq", error)) {
      uint32_t tags = 0, number = 0;
      if (!absl::SimpleAtoi(queue.path().filename().string(), &number)) continue;
      device.hardware_queues = std::max(device.hardware_queues, number + 1);
      if (absl::SimpleAtoi(ReadAttribute(queue.path() / "nr_tags"), &tags)) device.tags = std::max(device.tags, tags);
    }
  }
  for (const BlockDevice& known : *out) {
    if (known == device) return absl::OkStatus();
  }
  out->push_back(std::move(device));
  return absl::OkStatus();
}

// Why a file system without a device number has no block device.
std::string NoDeviceReason(int fd) {
  struct statfs sfs {};
  if (::fstatfs(fd, &sfs) != 0) return "its file system has no block device";
  switch (sfs.f_type) {
    case TMPFS_MAGIC: return "tmpfs has no block device";
    case NFS_SUPER_MAGIC: return "NFS has no block device on this host (its requests go over the network)";
    case 0x65735546: return "a FUSE file system has no block device on this host (its daemon does the IO)";
    case 0x9123683E: return "btrfs has no single block device (its devices are not traced)";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs has no block device of its own";
    default: return absl::StrCat("its file system (type 0x", absl::Hex(sfs.f_type), ") has no block device");
  }
}

}  // namespace

absl::StatusOr<std::vector<BlockDevice>> ResolveDeviceNumber(uint32_t major, uint32_t minor, const std::string& sys_root) {
  const fs::path link = fs::path(sys_root) / "dev" / "block" / absl::StrCat(major, ":", minor);
  std::error_code error;
  const fs::path dir = fs::canonical(link, error);
  if (error) return absl::NotFoundError(absl::StrCat("device ", major, ":", minor, ": ", link.string(), ": ", error.message()));
  std::vector<BlockDevice> devices;
  absl::Status status = Resolve(dir, 0, &devices);
  if (!status.ok()) return status;
  return devices;
}

absl::StatusOr<ResolvedDevices> ResolveBlockDevices(int fd, const std::string& sys_root) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat");
  const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
  ResolvedDevices resolved;
  if (::major(dev) == 0) {
    resolved.none_reason = NoDeviceReason(fd);
    return resolved;
  }
  absl::StatusOr<std::vector<BlockDevice>> devices = ResolveDeviceNumber(::major(dev), ::minor(dev), sys_root);
  if (!devices.ok()) return devices.status();
  resolved.devices = std::move(*devices);
  return resolved;
}

}  // namespace iofleet
