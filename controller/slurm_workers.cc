#include "controller/slurm_workers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "controller/local_workers.h"

extern char** environ;

namespace iofleet {
namespace {

// The variable the run's token travels in, from srun's environment to each worker's
// (iofleet-worker --token-env): never on a command line, where ps would show it.
constexpr char kTokenVariable[] = "IOFLEET_RUN_TOKEN";

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Runs `argv` (found on PATH) and returns its stdout; an error if it cannot start, fails, or
// takes longer than `timeout` (then it is killed): squeue and scancel, which wait for slurmctld.
absl::StatusOr<std::string> Output(std::vector<std::string> argv, std::chrono::milliseconds timeout) {
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
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(absl::StrCat(what, " failed (", WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status)) : "killed", ")"));
  }
  return out;
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("signal ", WTERMSIG(status));
  return "ended";
}

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
  const std::string nodes = absl::StrCat(launch.allocation.nodes);
  command_ = {launch.srun, "--overlap", "--nodes", nodes, "--ntasks", nodes, "--ntasks-per-node", "1", "--kill-on-bad-exit=0",
              "--job-name", step_name_, "--input", "none", "--label", worker_binary, "--controller", launch.controller,
              "--token-env", kTokenVariable, "--create-roots", "--sessions", "1", "--log-level", "warning"};
  for (const std::string& root : launch.allowed_roots) {
    command_.push_back("--allow-root");
    command_.push_back(root);
  }
  std::vector<std::string> argv = command_;
  std::vector<char*> args = Pointers(argv);
  // srun's environment is ours plus the token (srun hands its environment to the tasks).
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!absl::StartsWith(*e, absl::StrCat(kTokenVariable, "="))) environment.push_back(*e);
  }
  environment.push_back(absl::StrCat(kTokenVariable, "=", launch.token));
  std::vector<char*> env = Pointers(environment);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return absl::ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    // srun ends the step if the controller dies; a Ctrl-C on the terminal is the controller's
    // to handle (it stops the step in order).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::setpgid(0, 0);
    ::execvpe(args[0], args.data(), env.data());
    ::_exit(127);
  }
  pid_ = pid;
  reaper_ = std::thread([this, on_exit = std::move(on_exit)] {
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

bool SlurmWorkers::exited() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_.has_value();
}

std::string SlurmWorkers::exit_description() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.has_value()) return "running";
  if (WIFEXITED(*status_) && WEXITSTATUS(*status_) == 127) return absl::StrCat("exit 127: cannot run ", launch_.srun);
  return Describe(*status_);
}

bool SlurmWorkers::WaitExited(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return status_.has_value(); });
}

std::string SlurmWorkers::FindStep() const {
  // Steps of our job, "JOB.STEP NAME" each.
  absl::StatusOr<std::string> steps =
      Output({"squeue", "--noheader", "--steps", "--jobs", launch_.allocation.job_id, "--format", "%i %j"}, std::chrono::seconds(10));
  if (!steps.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*steps, '\n', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (fields.size() == 2 && fields[1] == step_name_) return std::string(fields[0]);
  }
  return "";
}

void SlurmWorkers::Stop() {
  if (pid_ < 0) return;
  // The workers exit by themselves once their session is over (--sessions 1): srun then ends.
  if (!exited() && !WaitExited(std::chrono::seconds(3))) {
    // As Slurm users end a daemon step: SIGTERM to every task (the workers end their runs and
    // exit 0). Killing srun instead would make Slurm SIGKILL them.
    if (const std::string step = FindStep(); !step.empty()) {
      (void)Output({"scancel", "--signal=TERM", step}, std::chrono::seconds(10));
    }
    if (!WaitExited(std::chrono::seconds(15))) {
      ::kill(pid_, SIGTERM);  // srun cancels the step
      if (!WaitExited(std::chrono::seconds(10))) ::kill(pid_, SIGKILL);
    }
  }
  if (reaper_.joinable()) reaper_.join();
  pid_ = -1;
}

}  // namespace iofleet
