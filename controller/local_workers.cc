#include "controller/local_workers.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

constexpr char kReadyPrefix[] = "iofleet-worker listening on ";

bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Reads the worker's first stdout line ("iofleet-worker listening on 127.0.0.1:PORT").
absl::StatusOr<std::string> ReadReadyLine(int fd, pid_t pid, std::chrono::seconds timeout) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return absl::DeadlineExceededError(absl::StrCat("local worker (pid ", pid, ") did not report ready within ", timeout.count(), " s"));
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[256];
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) {
      return absl::UnavailableError(absl::StrCat("local worker (pid ", pid, ") exited before it was ready; see its messages above"));
    }
    line.append(buffer, static_cast<size_t>(n));
  }
  line = line.substr(0, line.find('\n'));
  if (!absl::StartsWith(line, kReadyPrefix)) {
    return absl::InternalError(absl::StrCat("local worker printed an unexpected line: ", line));
  }
  return line.substr(sizeof(kReadyPrefix) - 1);
}

}  // namespace

absl::StatusOr<std::string> LocalWorkers::FindWorkerBinary() {
  if (const char* env = std::getenv("IOFLEET_WORKER"); env != nullptr && *env != '\0') {
    if (IsExecutable(env)) return std::string(env);
    return absl::NotFoundError(absl::StrCat("IOFLEET_WORKER=", env, " is not an executable"));
  }
  char self[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    for (const std::string& candidate : {dir + "/iofleet-worker", dir + "/../worker/iofleet-worker"}) {
      if (IsExecutable(candidate)) return candidate;
    }
  }
  return absl::NotFoundError("cannot find iofleet-worker next to iofleet; set IOFLEET_WORKER or --worker-binary");
}

absl::Status LocalWorkers::Start(int count, const std::vector<std::string>& allowed_roots, std::string worker_binary) {
  if (worker_binary.empty()) {
    auto found = FindWorkerBinary();
    if (!found.ok()) return found.status();
    worker_binary = *found;
  }
  std::vector<std::string> argv_strings = {worker_binary, "--listen", "127.0.0.1:0", "--log-level", "warning"};
  for (const std::string& root : allowed_roots) {
    argv_strings.push_back("--allow-root");
    argv_strings.push_back(root);
  }
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();

  for (int i = 0; i < count; ++i) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
    const pid_t pid = ::fork();
    if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
    if (pid == 0) {
      // Child: die with the controller, report readiness on the pipe, keep stderr.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
      ::dup2(pipe_fds[1], STDOUT_FILENO);
      ::setpgid(0, 0);  // a Ctrl-C to the controller's terminal is the controller's to handle
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    pids_.push_back(pid);
    auto address = ReadReadyLine(pipe_fds[0], pid, std::chrono::seconds(15));
    ::close(pipe_fds[0]);
    if (!address.ok()) return address.status();
    addresses_.push_back(*address);
  }
  return absl::OkStatus();
}

LocalWorkers::~LocalWorkers() {
  for (pid_t pid : pids_) ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (pid_t pid : pids_) {
    while (::waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace iofleet
