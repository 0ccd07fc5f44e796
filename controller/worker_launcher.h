// Workers this controller starts on other hosts through a launcher — srun (--slurm), ssh
// (--ssh) — which then dial back in. The session owns one and stops it at the end (also after
// a failure or Ctrl-C), once every worker has been told its session is over.
#ifndef IOFLEET_CONTROLLER_WORKER_LAUNCHER_H_
#define IOFLEET_CONTROLLER_WORKER_LAUNCHER_H_

#include <string>

namespace iofleet {

class WorkerLauncher {
 public:
  virtual ~WorkerLauncher() = default;
  // What has ended although its workers should still be there, for the message when workers
  // are missing ("srun (exit 1)", "ssh node3 (exit 255)"); empty when nothing has.
  virtual std::string EndedEarly() const = 0;
  // Ends the workers (they leave by themselves once their session is over; this makes sure)
  // and waits for the launcher's processes.
  virtual void Stop() = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_WORKER_LAUNCHER_H_
