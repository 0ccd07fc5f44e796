// Real filesystem targets for tests, following shared/targets.md: tmpfs, ext4 and xfs on loop
// devices, a bindfs (FUSE) passthrough mount and, where its binary is installed, JuiceFS. Each is mounted when constructed and
// unmounted (and its loop device and image removed) when destroyed, also when a test fails.
#ifndef IOFLEET_TESTS_TARGETS_H_
#define IOFLEET_TESTS_TARGETS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace iofleet::testing {

// The juicefs binary the tests mount with: $IOFLEET_JUICEFS (tools/run_tests.sh sets it to what
// tools/build_juicefs.sh built), else `juicefs` on PATH; empty when there is none.
std::string JuiceFsBinary();

class MountedTarget {
 public:
  // kind: "tmpfs", "ext4", "xfs", "bindfs" or "juicefs" (needs JuiceFsBinary()).
  // `base` is a scratch directory of the test's.
  MountedTarget(const std::string& kind, const std::string& base);
  ~MountedTarget();
  MountedTarget(const MountedTarget&) = delete;
  MountedTarget& operator=(const MountedTarget&) = delete;

  // Empty when mounting worked; else why it did not (the test says so and skips).
  const std::string& error() const { return error_; }
  const std::string& path() const { return mount_point_; }
  // What the worker's mount table should call it.
  std::string expected_fs_type() const;
  // juicefs: its Prometheus endpoint (juicefs mount --metrics), http://127.0.0.1:PORT/metrics.
  const std::string& metrics_url() const { return metrics_url_; }

 private:
  std::string kind_, base_, mount_point_, image_, loop_device_, backing_, error_, metrics_url_;
  std::vector<std::string> fd_sockets_before_;  // juicefs: /tmp/fuse_fd_comm.* before the mount
  bool mounted_ = false;
};

// A loop device over a sparse image of `size` (truncate's syntax), with no file system: a
// block device for jobs with filename=/dev/... . Detached and its image removed when destroyed.
class LoopDevice {
 public:
  LoopDevice(const std::string& base, const std::string& size);
  ~LoopDevice();
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;

  // Empty when the device exists; else why not.
  const std::string& error() const { return error_; }
  const std::string& path() const { return device_; }

 private:
  std::string image_, device_, error_;
};

// An NFS server for tests, as shared/targets.md describes: rpcbind and nfs-ganesha (VFS) in a
// network namespace of its own (they bind every address, so never in the machine's), with only
// lo up, exporting a scratch directory over NFSv3/TCP. Clients — workers with ioengine=nfs, a
// controller with local workers — run inside the namespace too (`ip netns exec netns() ...`).
// Stopped, the namespace deleted and nothing left running when destroyed, also on failure.
class NfsServer {
 public:
  explicit NfsServer(const std::string& base);
  ~NfsServer();
  NfsServer(const NfsServer&) = delete;
  NfsServer& operator=(const NfsServer&) = delete;

  // Empty when the server answers; else why not (packages missing, no netns support...).
  const std::string& error() const { return error_; }
  const std::string& netns() const { return netns_; }
  // The exported directory on this machine (read it to check results; change it only via NFS).
  const std::string& export_dir() const { return export_dir_; }
  // nfs://127.0.0.1/<export_dir>, reachable from inside netns().
  std::string url() const { return "nfs://127.0.0.1" + export_dir_; }
  // Kills the server (and rpcbind) at once, as a crash would.
  void Kill();

 private:
  std::string base_, netns_, export_dir_, error_;
  pid_t server_ = -1;
  bool netns_made_ = false;
};

// For test binaries whose every case talks to one NFS server through libnfs: starts an
// NfsServer under `base`, moves this process into its namespace (so 127.0.0.1 is the server),
// sets IOFLEET_TEST_NFS_URL and IOFLEET_TEST_NFS_EXPORT, runs `run` (RUN_ALL_TESTS) and comes
// back so the server's clean-up can delete the namespace. Without root it skips (exit 0).
int RunInNfsServerNamespace(const std::string& base, const std::function<int()>& run);

}  // namespace iofleet::testing

#endif  // IOFLEET_TESTS_TARGETS_H_
