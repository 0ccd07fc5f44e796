// Workers started over ssh (iofleet run|mdtest|compare --ssh HOSTS): one ssh per host runs
// iofleet-worker there — the installed one, or (--ssh-copy) this controller's own worker binary
// sent through the same connection into a temporary file that is removed when it exits — which
// dials this controller back. The run's token goes down the connection's stdin, never on a
// command line; the worker is worker number i of the run for the i-th host (its launch rank).
// The connection is the worker's lifeline (iofleet-worker --stdin-lifeline): when it closes —
// the run is over, Ctrl-C, the controller died — the worker exits.
#ifndef IOFLEET_CONTROLLER_SSH_WORKERS_H_
#define IOFLEET_CONTROLLER_SSH_WORKERS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/child_process.h"
#include "controller/worker_launcher.h"

namespace iofleet {

struct SshLaunch {
  std::vector<std::string> hosts;         // as ssh takes them: [user@]host
  std::string ssh_command = "ssh";        // split at spaces: "ssh -F ~/.ssh/bench_config -p 2222"
  std::string controller;                 // HOST:PORT the workers dial
  std::string token;                      // the run's token
  std::vector<std::string> allowed_roots; // created on each host if missing
  std::string remote_worker = "iofleet-worker";  // its path on the hosts (without copy_binary)
  std::string copy_binary;                // non-empty: this local file is sent and run instead
};

// The shell command run on a host (exposed for tests): reads the token line (and the binary,
// when copied) from stdin, then runs the worker.
std::string RemoteWorkerCommand(const SshLaunch& launch, size_t rank, uint64_t binary_size);

class SshWorkers final : public WorkerLauncher {
 public:
  SshWorkers() = default;
  ~SshWorkers() override { Stop(); }

  // Starts one ssh per host; `on_exit` is called (from another thread) whenever one ends.
  absl::Status Start(const SshLaunch& launch, std::function<void()> on_exit);
  std::string EndedEarly() const override;
  // Closes every connection's stdin (the workers leave), then waits for the ssh processes.
  void Stop() override;

 private:
  SshLaunch launch_;
  std::vector<std::unique_ptr<ChildProcess>> connections_;  // [host]
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_SSH_WORKERS_H_
