#include "tests/targets.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace iofleet::testing {
namespace {

// Runs a shell command; returns its first output line, or sets *failed.
std::string Shell(const std::string& command, bool* failed) {
  std::string output;
  // Bazel gives tests a short PATH; the mount tools live in sbin.
  FILE* pipe = ::popen(("PATH=/usr/local/bin:/usr/sbin:/sbin:/usr/bin:/bin; " + command + " 2>&1").c_str(), "r");
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

// The sockets JuiceFS's mount process makes for itself, /tmp/fuse_fd_comm.<pid>, and never
// removes (cmd/passfd.go).
std::vector<std::string> JuiceFsFdSockets() {
  std::vector<std::string> paths;
  glob_t found;
  if (::glob("/tmp/fuse_fd_comm.*", 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) paths.push_back(found.gl_pathv[i]);
  }
  ::globfree(&found);
  return paths;
}

// A port on 127.0.0.1 that nothing listens on now (the kernel's pick for port 0).
int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

}  // namespace

std::string JuiceFsBinary() {
  if (const char* built = std::getenv("IOFLEET_JUICEFS"); built != nullptr && ::access(built, X_OK) == 0) return built;
  bool failed = false;
  const std::string on_path = Shell("command -v juicefs", &failed);
  return failed ? "" : on_path;
}

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
  } else if (kind_ == "juicefs") {
    // shared/targets.md: an offline volume (file storage, sqlite metadata), mounted in the
    // background; `juicefs mount -d` returns once the mount is ready.
    const std::string juicefs = JuiceFsBinary();
    fd_sockets_before_ = JuiceFsFdSockets();
    backing_ = base_ + "/juicefs-volume";
    ::mkdir(backing_.c_str(), 0755);
    const std::string meta = "sqlite3://" + backing_ + "/meta.db";
    out = juicefs.empty() ? "no juicefs binary (tools/build_juicefs.sh builds one)" : "";
    failed = juicefs.empty();
    if (!failed) out = Shell(juicefs + " --no-agent format --storage file --bucket " + backing_ + "/data/ --trash-days 0 " + meta + " iofleet", &failed);
    const int port = FreeLoopbackPort();
    if (!failed) {
      out = Shell(juicefs + " --no-agent mount -d --no-usage-report --cache-dir " + backing_ + "/cache --log " + backing_ + "/mount.log" +
                      " --metrics 127.0.0.1:" + std::to_string(port) + " " + meta + " " + mount_point_,
                  &failed);
    }
    if (!failed) metrics_url_ = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
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
    else if (kind_ == "juicefs") Shell(JuiceFsBinary() + " umount " + mount_point_ + " || umount -l " + mount_point_, &failed);
    else Shell("umount " + mount_point_ + " || umount -l " + mount_point_, &failed);
  }
  if (kind_ == "juicefs") {
    // The mount process's socket, once the process is gone (it exits just after the unmount).
    for (const std::string& path : JuiceFsFdSockets()) {
      if (std::find(fd_sockets_before_.begin(), fd_sockets_before_.end(), path) != fd_sockets_before_.end()) continue;
      const std::string proc = "/proc/" + path.substr(path.rfind('.') + 1);
      for (int i = 0; i < 100 && ::access(proc.c_str(), F_OK) == 0; ++i) ::usleep(50 * 1000);
      ::unlink(path.c_str());
    }
  }
  if (!loop_device_.empty()) Shell("losetup -d " + loop_device_, &failed);
  if (!image_.empty()) ::unlink(image_.c_str());
  Shell("rm -rf " + mount_point_ + (backing_.empty() ? "" : " " + backing_), &failed);
}

LoopDevice::LoopDevice(const std::string& base, const std::string& size) {
  ::mkdir(base.c_str(), 0755);
  image_ = base + "/loop.img";
  bool failed = false;
  std::string out = Shell("truncate -s " + size + " " + image_, &failed);
  if (!failed) out = Shell("losetup -f --show --direct-io=on " + image_, &failed);
  if (failed) {
    error_ = "loop device: " + out;
  } else {
    device_ = out;
  }
}

LoopDevice::~LoopDevice() {
  bool failed = false;
  if (!device_.empty()) Shell("losetup -d " + device_, &failed);
  ::unlink(image_.c_str());
}

NfsServer::NfsServer(const std::string& base) : base_(base) {
  ::mkdir(base_.c_str(), 0755);
  export_dir_ = base_ + "/export";
  ::mkdir(export_dir_.c_str(), 0755);
  ::mkdir((base_ + "/recovery").c_str(), 0755);
  netns_ = "iofleet-nfs-" + std::to_string(::getpid());
  bool failed = false;
  // A test process that died without its destructors (an abort) left its namespace and server
  // behind: remove those whose process is gone.
  Shell("for ns in $(ip netns list | awk '{print $1}' | grep -E '^iofleet-nfs-[0-9]+$'); do "
        "[ -d /proc/${ns#iofleet-nfs-} ] || { ip netns pids $ns | xargs -r kill -9; ip netns del $ns; }; done",
        &failed);
  std::string out = Shell("command -v ganesha.nfsd && command -v rpcbind && command -v nfs-ls", &failed);
  if (failed) {
    error_ = "nfs-ganesha, rpcbind or libnfs-utils is not installed (tools/install_deps.sh installs them)";
    return;
  }
  out = Shell("ip netns add " + netns_ + " && ip -n " + netns_ + " link set lo up && ip -n " + netns_ +
                  " addr add 10.200.99.1/32 dev lo",  // ganesha wants an address that is not 127/8
              &failed);
  netns_made_ = true;
  if (failed) {
    error_ = "network namespace: " + out;
    return;
  }
  const std::string config = base_ + "/ganesha.conf";
  FILE* f = std::fopen(config.c_str(), "w");
  if (f == nullptr) {
    error_ = "cannot write " + config;
    return;
  }
  std::fprintf(f,
               "NFS_CORE_PARAM { NFS_Port = 2049; MNT_Port = 20048; Protocols = 3, 4; Enable_NLM = false;\n"
               "  Enable_RQUOTA = false; Enable_UDP = false; Plugins_Dir = /usr/lib/x86_64-linux-gnu/ganesha; }\n"
               "NFSv4 { Graceless = true; RecoveryRoot = %s/recovery; }\n"
               "EXPORT { Export_Id = 1; Path = %s; Pseudo = /export; Access_Type = RW; Squash = No_Root_Squash;\n"
               "  Protocols = 3, 4; Transports = TCP; SecType = sys; FSAL { Name = VFS; } }\n",
               base_.c_str(), export_dir_.c_str());
  std::fclose(f);
  // A private /run (rpcbind and ganesha keep sockets and state there) in a private mount
  // namespace; rpcbind is ganesha's child, so both go with one process group.
  const std::string script = "mount -t tmpfs tmpfs /run && { rpcbind -f & sleep 0.3; exec ganesha.nfsd -F -f " + config + " -L " +
                             base_ + "/ganesha.log -p " + base_ + "/ganesha.pid; }";
  server_ = ::fork();
  if (server_ == 0) {
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::setenv("PATH", "/usr/sbin:/sbin:/usr/bin:/bin", 1);
    ::execlp("ip", "ip", "netns", "exec", netns_.c_str(), "unshare", "-m", "--propagation", "private", "sh", "-c", script.c_str(),
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Port 2049 answers about half a second after launch.
  for (int i = 0; i < 100; ++i) {
    Shell("ip netns exec " + netns_ + " nfs-ls '" + url() + "'", &failed);
    if (!failed) return;
    ::usleep(100 * 1000);
  }
  error_ = "ganesha did not answer within 10 s; its log: " + Shell("tail -5 " + base_ + "/ganesha.log", &failed);
}

void NfsServer::Kill() {
  if (server_ <= 0) return;
  ::kill(-server_, SIGKILL);
  int status = 0;
  ::waitpid(server_, &status, 0);
  server_ = -1;
}

NfsServer::~NfsServer() {
  bool failed = false;
  if (server_ > 0) {
    ::kill(-server_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 50 && ::waitpid(server_, &status, WNOHANG) == 0; ++i) ::usleep(100 * 1000);  // ~2 s
    ::kill(-server_, SIGKILL);
    ::waitpid(server_, &status, 0);
  }
  if (netns_made_) {
    // Anything still in the namespace (a client a test left behind) goes with it.
    // (Never this process, which may have joined the namespace to be a client.)
    Shell("ip netns pids " + netns_ + " | grep -vx " + std::to_string(::getpid()) + " | xargs -r kill -9; ip netns del " + netns_, &failed);
  }
  Shell("rm -rf " + base_, &failed);
}

std::string MountedTarget::expected_fs_type() const { return kind_ == "bindfs" || kind_ == "juicefs" ? "fuse" : kind_; }

int RunInNfsServerNamespace(const std::string& base, const std::function<int()>& run) {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "SKIPPED: the NFS server's network namespace needs root\n");
    return 0;
  }
  NfsServer server(base);
  if (!server.error().empty()) {
    std::fprintf(stderr, "could not start the NFS server: %s\n", server.error().c_str());
    return 1;
  }
  const int home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int netns = ::open(("/run/netns/" + server.netns()).c_str(), O_RDONLY | O_CLOEXEC);
  if (home < 0 || netns < 0 || ::setns(netns, CLONE_NEWNET) != 0) {
    std::perror("join the NFS server's network namespace");
    return 1;
  }
  ::close(netns);
  ::setenv("IOFLEET_TEST_NFS_URL", server.url().c_str(), 1);
  ::setenv("IOFLEET_TEST_NFS_EXPORT", server.export_dir().c_str(), 1);
  const int result = run();
  if (::setns(home, CLONE_NEWNET) != 0) std::perror("leave the NFS server's network namespace");
  ::close(home);
  return result;
}

}  // namespace iofleet::testing
