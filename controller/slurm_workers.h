// Workers started through Slurm (iofleet run|mdtest|compare --slurm), inside an allocation: one
// iofleet-worker per node of the job, as one job step (`srun --overlap --ntasks-per-node=1`),
// each dialling this controller back with the run's token in its environment and its task
// number (SLURM_PROCID) as its worker index, serving that one session. Stop() waits for the step
// to end (the workers exit when the controller ends their session), else ends it the way Slurm
// users end a daemon step — `scancel --signal=TERM JOB.STEP`, so the workers exit cleanly — and
// only if that does not end it, signals srun itself. The destructor stops it too: on success, on
// failure and after Ctrl-C; if the controller is killed, srun is signalled (PR_SET_PDEATHSIG)
// and Slurm ends the step.
#ifndef IOFLEET_CONTROLLER_SLURM_WORKERS_H_
#define IOFLEET_CONTROLLER_SLURM_WORKERS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/child_process.h"
#include "controller/worker_launcher.h"

namespace iofleet {

// The allocation this controller runs in, from Slurm's environment.
struct SlurmAllocation {
  std::string job_id;  // SLURM_JOB_ID
  int nodes = 0;       // SLURM_JOB_NUM_NODES (or SLURM_NNODES)
};
// kFailedPrecondition when not inside an allocation (no SLURM_JOB_ID), naming what to do.
absl::StatusOr<SlurmAllocation> CurrentSlurmAllocation(const std::function<const char*(const char*)>& getenv = nullptr);

struct SlurmLaunch {
  SlurmAllocation allocation;
  std::string controller;               // HOST:PORT the workers dial
  std::string token;                    // the run's token, handed over in the environment
  std::vector<std::string> allowed_roots;  // created on each node if missing
  std::string worker_binary;            // empty: beside this program (LocalWorkers::FindWorkerBinary)
};

class SlurmWorkers final : public WorkerLauncher {
 public:
  SlurmWorkers() = default;
  SlurmWorkers(const SlurmWorkers&) = delete;
  SlurmWorkers& operator=(const SlurmWorkers&) = delete;
  ~SlurmWorkers() override { Stop(); }

  // Starts the worker step; `on_exit` is called (from another thread) when srun ends — before
  // Stop(), that means the workers ended or never started (their messages are on stderr).
  absl::Status Start(const SlurmLaunch& launch, std::function<void()> on_exit);
  // srun has ended; its exit status as a message ("exit 1", "signal 9").
  bool exited() const;
  std::string exit_description() const;
  std::string EndedEarly() const override { return exited() ? "srun (" + exit_description() + ")" : ""; }
  // Ends the step (see above) and waits for srun; harmless when nothing was started.
  void Stop() override;

 private:
  // The step srun made for our workers (squeue), "JOB.STEP"; empty if not found.
  std::string FindStep() const;

  SlurmLaunch launch_;
  std::string step_name_;
  bool started_ = false;
  ChildProcess srun_;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_SLURM_WORKERS_H_
