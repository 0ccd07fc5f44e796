// Starting and stopping real iofleet processes from end-to-end tests: the binaries come from
// the test's runfiles; output goes to files the test can read; every process is killed when
// its handle goes away, so a failing test leaves nothing running.
#ifndef IOFLEET_TESTS_TEST_PROCESS_H_
#define IOFLEET_TESTS_TEST_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace iofleet::testing {

// Path of a binary of this workspace, e.g. Runfile("controller/iofleet").
std::string Runfile(const std::string& path);
std::string ReadFile(const std::string& path);

class TestProcess {
 public:
  // Starts argv[0] with stdout and stderr written to `output_prefix`.out/.err.
  TestProcess(std::vector<std::string> argv, const std::string& output_prefix);
  ~TestProcess();  // SIGKILL if still running
  TestProcess(const TestProcess&) = delete;
  TestProcess& operator=(const TestProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Exit code, or nullopt if still running after `timeout`; a death by signal is 128+signal.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  void Signal(int signal);
  std::string Stdout() const { return ReadFile(out_path_); }
  std::string Stderr() const { return ReadFile(err_path_); }
  // Waits until stdout or stderr contains `text` (at or after byte `from`).
  bool WaitForOutput(const std::string& text, std::chrono::milliseconds timeout, bool in_stderr = false, size_t from = 0) const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::string out_path_, err_path_;
};

// A real iofleet-worker on a free 127.0.0.1 port.
class TestWorker {
 public:
  TestWorker(const std::string& name, const std::vector<std::string>& extra_args);
  const std::string& address() const { return address_; }
  TestProcess& process() { return process_; }

 private:
  TestProcess process_;
  std::string address_;
};

std::string TempDir();

// Polls `condition` every 10 ms until it holds (true) or `timeout` passes (false): tests wait
// for what they need, never for a fixed time.
template <typename Condition>
bool WaitFor(Condition condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// How often `text` occurs in `content`, and in the file at `path` (0 when it cannot be read).
size_t CountIn(const std::string& content, const std::string& text);
size_t CountInFile(const std::string& path, const std::string& text);

// A TCP connection to an IPv4 HOST:PORT (tests talk to 127.0.0.1 only), or -1.
int ConnectTcp(const std::string& address);

// Whether anything (a symlink included, not followed) is at `path`.
bool PathExists(const std::string& path);
// Entries in a directory (not . and ..), or -1 if it cannot be read.
int DirectoryEntries(const std::string& dir);
// Their names, sorted (none if it cannot be read).
std::vector<std::string> DirectoryNames(const std::string& dir);

// Bytes a process read and wrote through system calls (files and sockets: /proc/PID/io rchar
// + wchar) during `window`. The "no orphan load" probe: an idle worker moves at most a few
// heartbeats' worth, a worker still doing IO moves megabytes.
uint64_t BytesMovedDuring(pid_t pid, std::chrono::milliseconds window);
inline constexpr uint64_t kIdleBytesPerSecond = 64 * 1024;

}  // namespace iofleet::testing

#endif  // IOFLEET_TESTS_TEST_PROCESS_H_
