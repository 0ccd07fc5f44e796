// Real filesystem targets for tests, following shared/targets.md: tmpfs, ext4 and xfs on loop
// devices, and a bindfs (FUSE) passthrough mount. Each is mounted when constructed and
// unmounted (and its loop device and image removed) when destroyed, also when a test fails.
#ifndef IOFLEET_TESTS_TARGETS_H_
#define IOFLEET_TESTS_TARGETS_H_

#include <string>

namespace iofleet::testing {

class MountedTarget {
 public:
  // kind: "tmpfs", "ext4", "xfs" or "bindfs". `base` is a scratch directory of the test's.
  MountedTarget(const std::string& kind, const std::string& base);
  ~MountedTarget();
  MountedTarget(const MountedTarget&) = delete;
  MountedTarget& operator=(const MountedTarget&) = delete;

  // Empty when mounting worked; else why it did not (the test says so and skips).
  const std::string& error() const { return error_; }
  const std::string& path() const { return mount_point_; }
  // What the worker's mount table should call it.
  std::string expected_fs_type() const;

 private:
  std::string kind_, base_, mount_point_, image_, loop_device_, backing_, error_;
  bool mounted_ = false;
};

}  // namespace iofleet::testing

#endif  // IOFLEET_TESTS_TARGETS_H_
