#include "tests/test_process.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace iofleet::testing {

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir ? dir : "/tmp";
}

namespace {
// The entries of `dir` (not . and ..), sorted; false if it cannot be read.
bool ListDirectory(const std::string& dir, std::vector<std::string>* names) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return false;
  while (dirent* e = ::readdir(d)) {
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names->push_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names->begin(), names->end());
  return true;
}
}  // namespace

int DirectoryEntries(const std::string& dir) {
  std::vector<std::string> names;
  return ListDirectory(dir, &names) ? static_cast<int>(names.size()) : -1;
}

std::vector<std::string> DirectoryNames(const std::string& dir) {
  std::vector<std::string> names;
  ListDirectory(dir, &names);
  return names;
}

std::string Runfile(const std::string& path) {
  const char* root = std::getenv("TEST_SRCDIR");
  return std::string(root ? root : ".") + "/iofleet/" + path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TestProcess::TestProcess(std::vector<std::string> argv, const std::string& output_prefix)
    : out_path_(output_prefix + ".out"), err_path_(output_prefix + ".err") {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
}

TestProcess::~TestProcess() {
  if (pid_ > 0 && !exit_code_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::optional<int> TestProcess::Wait(std::chrono::milliseconds timeout) {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void TestProcess::Signal(int signal) {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, signal);
}

bool TestProcess::WaitForOutput(const std::string& text, std::chrono::milliseconds timeout, bool in_stderr, size_t from) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string output = in_stderr ? Stderr() : Stdout();
    if (output.size() > from && output.find(text, from) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TestWorker::TestWorker(const std::string& name, const std::vector<std::string>& extra_args)
    : process_(
          [&] {
            std::vector<std::string> argv = {Runfile("worker/iofleet-worker"), "--listen", "127.0.0.1:0"};
            argv.insert(argv.end(), extra_args.begin(), extra_args.end());
            return argv;
          }(),
          TempDir() + "/" + name) {
  const std::string prefix = "iofleet-worker listening on ";
  if (process_.WaitForOutput(prefix, std::chrono::seconds(10))) {
    std::string out = process_.Stdout();
    out = out.substr(out.find(prefix) + prefix.size());
    address_ = out.substr(0, out.find('\n'));
  }
}

uint64_t BytesMovedDuring(pid_t pid, std::chrono::milliseconds window) {
  auto moved = [pid] {
    std::istringstream io(ReadFile("/proc/" + std::to_string(pid) + "/io"));
    uint64_t total = 0;
    std::string key;
    uint64_t value = 0;
    while (io >> key >> value) {
      if (key == "rchar:" || key == "wchar:") total += value;
    }
    return total;
  };
  const uint64_t before = moved();
  std::this_thread::sleep_for(window);
  return moved() - before;
}

int ConnectTcp(const std::string& address) {
  const size_t colon = address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

size_t CountIn(const std::string& content, const std::string& text) {
  size_t count = 0;
  for (size_t at = content.find(text); !text.empty() && at != std::string::npos; at = content.find(text, at + text.size())) ++count;
  return count;
}

size_t CountInFile(const std::string& path, const std::string& text) { return CountIn(ReadFile(path), text); }

}  // namespace iofleet::testing
