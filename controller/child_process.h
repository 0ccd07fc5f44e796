// A program this controller starts and watches — srun for --slurm, one ssh per host for --ssh:
// started with its own process group (a Ctrl-C on the terminal is the controller's to
// handle), signalled if the controller dies (PR_SET_PDEATHSIG), reaped by a thread of its own
// that reports its end. And RunForOutput, for the short commands around them (squeue, scancel).
#ifndef IOFLEET_CONTROLLER_CHILD_PROCESS_H_
#define IOFLEET_CONTROLLER_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace iofleet {

class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> argv;  // argv[0] found on PATH
    // Variables added to (or replacing those in) this process's environment.
    std::vector<std::pair<std::string, std::string>> environment;
    // Its stdin: /dev/null, or a pipe this object holds the writing end of (Write, CloseStdin).
    bool stdin_pipe = false;
    std::function<void()> on_exit;  // called from the reaper thread when it has ended
  };
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Closes its stdin, then SIGTERM, SIGKILL after `kill_after` if it has not ended by then.
  ~ChildProcess() { Stop(std::chrono::seconds(5)); }

  absl::Status Start(Options options);
  // Writes to its stdin (stdin_pipe); false if it cannot (it ended).
  bool Write(const std::string& data);
  void CloseStdin();
  bool exited() const;
  // How it ended ("exit 0", "signal 15", "exit 127: cannot run ssh"), or "running".
  std::string exit_description() const;
  bool WaitExited(std::chrono::milliseconds timeout);
  void Signal(int signal) const;
  // CloseStdin, then SIGTERM if it has not ended within `grace`, SIGKILL 5 s later; reaps it.
  void Stop(std::chrono::milliseconds grace);

 private:
  std::string program_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  std::thread reaper_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<int> status_;  // waitpid's, once it has ended
};

// Runs `argv` (argv[0] on PATH) and returns its stdout: an error if it cannot start, fails, or
// takes longer than `timeout` (then it is killed).
absl::StatusOr<std::string> RunForOutput(std::vector<std::string> argv, std::chrono::milliseconds timeout);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_CHILD_PROCESS_H_
