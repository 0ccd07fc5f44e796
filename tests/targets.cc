#include "tests/targets.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>

namespace iofleet::testing {
namespace {

// Runs a shell command; returns its first output line, or sets *failed.
std::string Shell(const std::string& command, bool* failed) {
  std::string output;
  // Bazel gives tests a short PATH; the mount tools live in sbin.
  FILE* pipe = ::popen(("PATH=/usr/sbin:/sbin:/usr/bin:/bin; " + command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    *failed = true;
    return "popen failed";
  }
  std::array<char, 512> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  *failed = ::pclose(pipe) != 0;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return output;
}

}  // namespace

MountedTarget::MountedTarget(const std::string& kind, const std::string& base) : kind_(kind), base_(base) {
  ::mkdir(base_.c_str(), 0755);
  mount_point_ = base_ + "/" + kind_;
  ::mkdir(mount_point_.c_str(), 0755);
  bool failed = false;
  std::string out;
  if (kind_ == "tmpfs") {
    out = Shell("mount -t tmpfs -o size=512m tmpfs " + mount_point_, &failed);
  } else if (kind_ == "ext4" || kind_ == "xfs") {
    image_ = base_ + "/" + kind_ + ".img";
    out = Shell("truncate -s 512M " + image_, &failed);
    if (!failed) {
      loop_device_ = Shell("losetup -f --show --direct-io=on " + image_, &failed);
      if (failed) {
        out = loop_device_;
        loop_device_.clear();
      }
    }
    if (!failed) out = Shell((kind_ == "ext4" ? "mkfs.ext4 -q -F " : "mkfs.xfs -q -f ") + loop_device_, &failed);
    if (!failed) out = Shell("mount " + loop_device_ + " " + mount_point_, &failed);
  } else if (kind_ == "bindfs") {
    backing_ = base_ + "/bindfs-backing";
    ::mkdir(backing_.c_str(), 0755);
    out = Shell("bindfs " + backing_ + " " + mount_point_, &failed);
  } else {
    failed = true;
    out = "unknown target kind";
  }
  if (failed) {
    error_ = kind_ + ": " + out;
  } else {
    mounted_ = true;
  }
}

MountedTarget::~MountedTarget() {
  bool failed = false;
  if (mounted_) {
    if (kind_ == "bindfs") Shell("fusermount -u " + mount_point_ + " || umount -l " + mount_point_, &failed);
    else Shell("umount " + mount_point_ + " || umount -l " + mount_point_, &failed);
  }
  if (!loop_device_.empty()) Shell("losetup -d " + loop_device_, &failed);
  if (!image_.empty()) ::unlink(image_.c_str());
  Shell("rm -rf " + mount_point_ + (backing_.empty() ? "" : " " + backing_), &failed);
}

std::string MountedTarget::expected_fs_type() const { return kind_ == "bindfs" ? "fuse" : kind_; }

}  // namespace iofleet::testing
