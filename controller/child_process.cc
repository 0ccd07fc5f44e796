#include "controller/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/write_all.h"

extern char** environ;

namespace iofleet {
namespace {

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("signal ", WTERMSIG(status));
  return "ended";
}

}  // namespace

absl::Status ChildProcess::Start(Options options) {
  program_ = options.argv.at(0);
  std::vector<std::string> argv = options.argv;
  std::vector<char*> args = Pointers(argv);
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto& [name, value] : options.environment) replaced |= absl::StartsWith(*e, absl::StrCat(name, "="));
    if (!replaced) environment.push_back(*e);
  }
  for (const auto& [name, value] : options.environment) environment.push_back(absl::StrCat(name, "=", value));
  std::vector<char*> env = Pointers(environment);
  int in[2] = {-1, -1};
  if (options.stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::setpgid(0, 0);
    const int input = options.stdin_pipe ? in[0] : ::open("/dev/null", O_RDONLY);
    ::dup2(input, STDIN_FILENO);
    ::execvpe(args[0], args.data(), env.data());
    ::_exit(127);
  }
  if (options.stdin_pipe) {
    ::close(in[0]);
    stdin_fd_ = in[1];
  }
  pid_ = pid;
  reaper_ = std::thread([this, on_exit = std::move(options.on_exit)] {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_ = status;
    }
    cv_.notify_all();
    if (on_exit) on_exit();
  });
  return absl::OkStatus();
}

bool ChildProcess::Write(const std::string& data) {
  return stdin_fd_ >= 0 && WriteAll(stdin_fd_, data) == 0;
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

bool ChildProcess::exited() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_.has_value();
}

std::string ChildProcess::exit_description() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.has_value()) return "running";
  if (WIFEXITED(*status_) && WEXITSTATUS(*status_) == 127) return absl::StrCat("exit 127: cannot run ", program_, ", or the command it ran");
  return Describe(*status_);
}

bool ChildProcess::WaitExited(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return status_.has_value(); });
}

void ChildProcess::Signal(int signal) const {
  if (pid_ > 0 && !exited()) ::kill(pid_, signal);
}

void ChildProcess::Stop(std::chrono::milliseconds grace) {
  CloseStdin();
  if (pid_ < 0) return;
  if (!WaitExited(grace)) {
    ::kill(pid_, SIGTERM);
    if (!WaitExited(std::chrono::seconds(5))) ::kill(pid_, SIGKILL);
  }
  if (reaper_.joinable()) reaper_.join();
  pid_ = -1;
}

absl::StatusOr<std::string> RunForOutput(std::vector<std::string> argv, std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return absl::ErrnoToStatus(errno, "pipe");
  std::vector<char*> args = Pointers(argv);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::ErrnoToStatus(errno, "fork");
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string what = absl::StrJoin(argv, " ");
  if (timed_out) return absl::DeadlineExceededError(absl::StrCat(what, ": no answer within ", timeout.count(), " ms"));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return absl::UnavailableError(absl::StrCat(what, " failed (", Describe(status), ")"));
  return out;
}

}  // namespace iofleet
