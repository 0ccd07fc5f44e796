#include "controller/slurm_workers.h"

#include <chrono>
#include <cstdlib>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/child_process.h"
#include "controller/local_workers.h"

namespace iofleet {
namespace {

// The variable the run's token travels in, from srun's environment to each worker's
// (iofleet-worker --token-env): never on a command line, where ps would show it.
constexpr char kTokenVariable[] = "IOFLEET_RUN_TOKEN";

}  // namespace

absl::StatusOr<SlurmAllocation> CurrentSlurmAllocation(const std::function<const char*(const char*)>& getenv) {
  auto get = [&](const char* name) -> const char* { return getenv ? getenv(name) : std::getenv(name); };
  const char* job = get("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') {
    return absl::FailedPreconditionError(
        "--slurm starts the workers inside a Slurm allocation, and there is none here (SLURM_JOB_ID is not set): run it in an sbatch "
        "script, or under salloc -N NODES");
  }
  SlurmAllocation allocation{.job_id = job};
  const char* nodes = get("SLURM_JOB_NUM_NODES");
  if (nodes == nullptr) nodes = get("SLURM_NNODES");
  if (nodes == nullptr || !absl::SimpleAtoi(nodes, &allocation.nodes) || allocation.nodes < 1 || allocation.nodes > 100000) {
    return absl::FailedPreconditionError(absl::StrCat("--slurm: the allocation's node count (SLURM_JOB_NUM_NODES) is ",
                                                      nodes == nullptr ? "not set" : absl::StrCat("'", nodes, "'"), ", not a number of nodes"));
  }
  return allocation;
}

absl::Status SlurmWorkers::Start(const SlurmLaunch& launch, std::function<void()> on_exit) {
  launch_ = launch;
  std::string worker_binary = launch.worker_binary;
  if (worker_binary.empty()) {
    absl::StatusOr<std::string> found = LocalWorkers::FindWorkerBinary();
    if (!found.ok()) return found.status();
    worker_binary = *found;
  }
  // Named, so Stop() finds this step among the job's.
  step_name_ = absl::StrFormat("iofleet-workers-%08x", std::random_device()());
  started_ = true;
  const std::string nodes = absl::StrCat(launch.allocation.nodes);
  // srun, squeue and scancel: Slurm's, found on PATH.
  std::vector<std::string> command = {"srun", "--overlap", "--nodes", nodes, "--ntasks", nodes, "--ntasks-per-node", "1", "--kill-on-bad-exit=0",
              "--job-name", step_name_, "--input", "none", "--label", worker_binary, "--controller", launch.controller,
              "--token-env", kTokenVariable, "--create-roots", "--sessions", "1", "--log-level", "warning"};
  for (const std::string& root : launch.allowed_roots) {
    command.push_back("--allow-root");
    command.push_back(root);
  }
  return srun_.Start(ChildProcess::Options{.argv = std::move(command),
                                            .environment = {{kTokenVariable, launch.token}},
                                            .on_exit = std::move(on_exit)});
}

bool SlurmWorkers::exited() const { return srun_.exited(); }

std::string SlurmWorkers::exit_description() const { return srun_.exit_description(); }

std::string SlurmWorkers::FindStep() const {
  // Steps of our job, "JOB.STEP NAME" each.
  absl::StatusOr<std::string> steps =
      RunForOutput({"squeue", "--noheader", "--steps", "--jobs", launch_.allocation.job_id, "--format", "%i %j"}, std::chrono::seconds(10));
  if (!steps.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*steps, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (fields.size() == 2 && fields[1] == step_name_) return std::string(fields[0]);
  }
  return "";
}

void SlurmWorkers::Stop() {
  if (!started_) return;
  // The workers exit by themselves once their session is over (--sessions 1): srun then ends.
  if (!srun_.exited() && !srun_.WaitExited(std::chrono::seconds(3))) {
    // As Slurm users end a daemon step: SIGTERM to every task (the workers end their runs and
    // exit 0). Killing srun instead would make Slurm SIGKILL them.
    if (const std::string step = FindStep(); !step.empty()) {
      (void)RunForOutput({"scancel", "--signal=TERM", step}, std::chrono::seconds(10));
    }
    // Then srun itself (it cancels the step), and at last SIGKILL.
    srun_.Stop(std::chrono::seconds(15));
  }
  srun_.Stop(std::chrono::seconds(0));  // reaps it
  started_ = false;
}

}  // namespace iofleet
