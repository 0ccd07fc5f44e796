// Local workers for the no-hosts case: starts `iofleet-worker` processes on free 127.0.0.1
// ports, learns each port from the line the worker prints when it is ready, and stops them
// when destroyed. The workers also die with the controller (PR_SET_PDEATHSIG).
#ifndef IOFLEET_CONTROLLER_LOCAL_WORKERS_H_
#define IOFLEET_CONTROLLER_LOCAL_WORKERS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace iofleet {

class LocalWorkers {
 public:
  LocalWorkers() = default;
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;
  ~LocalWorkers();  // SIGTERM, then SIGKILL after 3 s

  // Starts `count` workers allowed to do IO under `allowed_roots`. `worker_binary` empty:
  // found next to this program (see FindWorkerBinary).
  absl::Status Start(int count, const std::vector<std::string>& allowed_roots, std::string worker_binary);
  const std::vector<std::string>& addresses() const { return addresses_; }

  // $IOFLEET_WORKER, else iofleet-worker beside the running binary, else ../worker/ (the
  // Bazel output tree).
  static absl::StatusOr<std::string> FindWorkerBinary();

 private:
  std::vector<pid_t> pids_;
  std::vector<std::string> addresses_;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_LOCAL_WORKERS_H_
