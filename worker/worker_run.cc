#include "worker/worker_run.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/resource.h>

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/confined_path.h"
#include "common/hostname.h"
#include "common/log.h"
#include "job/io_priority.h"
#include "job/job_phases.h"
#include "job/mdtest_tree.h"
#include "job/run_limits.h"
#include "worker/interval_cut.h"
#include "worker/metadata_task.h"
#include "worker/control_threads.h"
#include "worker/thread_placement.h"

namespace iofleet {
namespace {

constexpr std::chrono::nanoseconds kDefaultInterval = std::chrono::seconds(1);
// The slowest requests an interval report carries per direction (of the job's threads here).
constexpr size_t kSlowestPerReport = 5;

// The calling thread's CPU time and context switches so far (it exists for one job thread or
// mdtest task alone, so that is the thread's or task's cost).
void AddThreadUsage(JobThreadOutcome* outcome) {
  struct rusage usage;
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return;
  outcome->cpu_user_ns = static_cast<uint64_t>(usage.ru_utime.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(usage.ru_utime.tv_usec) * 1000;
  outcome->cpu_system_ns = static_cast<uint64_t>(usage.ru_stime.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(usage.ru_stime.tv_usec) * 1000;
  outcome->context_switches = static_cast<uint64_t>(usage.ru_nvcsw + usage.ru_nivcsw);
}

int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

WorkerRun::WorkerRun(v1::PrepareRequest request, RunLayout layout, ReportObserver observer, std::shared_ptr<ZoneRegistry> zones)
    : request_(std::move(request)),
      observer_(std::move(observer)),
      layout_(std::move(layout)),
      interval_(request_.interval_ns() ? std::chrono::nanoseconds(request_.interval_ns()) : kDefaultInterval),
      lease_(RequestedLease(request_)),
      last_heartbeat_(AwakeClock::Now()),
      zones_(zones ? std::move(zones) : std::make_shared<ZoneRegistry>()) {
  PrepareIntervalCuts();
  Arm();
}

WorkerRun::~WorkerRun() {
  Stop("worker shutting down", v1::STOP_CAUSE_SHUTDOWN);
  if (collector_.joinable()) collector_.join();
  for (std::thread& t : io_threads_) {
    if (t.joinable()) t.join();
  }
  {
    std::lock_guard<std::mutex> lock(arrivals_mu_);
    arrivals_done_ = true;
  }
  arrivals_cv_.notify_all();
  if (arrivals_thread_.joinable()) arrivals_thread_.join();
}

bool WorkerRun::LeaseExpired(AwakeClock::time_point now) const {
  return now - last_heartbeat_.load() > lease_;
}

bool WorkerRun::finished() const { return all_reports_produced_.load(); }

int64_t WorkerRun::ToUnixNs(Clock::time_point t) const {
  return start_unix_ns_ + std::chrono::duration_cast<std::chrono::nanoseconds>(t - start_).count();
}

void WorkerRun::Arm() {
  // Every thread sets itself up now (files opened, engine and buffers ready) and waits at the
  // start gate, so that at the instant nothing is left to do but go.
  std::lock_guard<std::mutex> lock(mu_);
  const auto& specs = request_.spec().jobs();
  jobs_.resize(specs.size());
  group_of_ = SplitIntoPhases(request_.spec()).group_of;  // a run is one phase: groups differ
  for (int j = 0; j < specs.size(); ++j) {
    job_stops_.push_back(std::make_unique<StopSignal>());
    stop_.Adopt(job_stops_.back().get());
    if (SteadyState::Wanted(specs[j])) steady_states_.try_emplace(SteadyStateKey(static_cast<size_t>(j)), specs[j].steadystate());
  }
  for (int j = 0; j < specs.size(); ++j) {
    JobState& state = jobs_[j];
    const uint32_t numjobs = specs[j].numjobs();
    state.task_items.assign(numjobs, 0);
    state.task_warnings.assign(numjobs, {});
    state.task_elapsed_ns.assign(numjobs, 0);
    // cmdprio: the job's priorities, each with its own completion latency (validated already).
    auto priorities = ResolveIoPriorities(specs[j]);
    state.priorities = priorities.ok() ? priorities->distinct : std::vector<uint32_t>{};
    for (uint32_t t = 0; t < numjobs; ++t) {
      state.threads.push_back(std::make_unique<ThreadStats>(static_cast<uint32_t>(state.priorities.size())));
      for (DirectionCounters& counters : state.threads.back()->directions) state.counters.push_back(&counters);
    }
  }
  if (request_.spec().block_stages()) SetUpBlockStages();
  if (request_.spec().profile()) {
    // Sampling from now, while the threads arm: perf takes a moment to start, and the start
    // instant must not wait for it (the first samples are of the set-up and the wait).
    absl::StatusOr<std::unique_ptr<HostProfiler>> profiler = HostProfiler::Start();
    if (profiler.ok()) {
      profiler_ = std::move(*profiler);
      if (host_.empty()) host_ = LocalHostname();
    } else {
      for (JobState& state : jobs_) state.notes.push_back(absl::StrCat("no CPU profile: ", profiler.status().message()));
    }
  }
  if (request_.spec().jobs_released()) {
    // The arrivals go out from a thread of their own: a task's thread works in a descriptor
    // table of its own (UseOwnDescriptorTable), where gRPC's descriptors are not.
    arrivals_thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "job-arrivals");
      PassArrivalsOn();
    });
  }
  if (request_.spec().jobs_in_sequence()) {
    // mdtest's phases on this worker's own barrier: a thread per task runs every job in turn
    // (jobs_[0] waits for the start instant; each later job's gate opens itself when the last
    // task arrives from the job before it).
    for (int j = 0; j < specs.size(); ++j) {
      if (j > 0) {
        sequence_gates_.push_back(std::make_unique<StartGate>());
        // Across workers: opened by the controller once every worker has arrived.
        std::function<void()> released;
        if (request_.spec().jobs_released()) released = [this, j] { Arrived(static_cast<uint32_t>(j)); };
        sequence_gates_.back()->OpenWhenArrived(specs[j].numjobs(), job_stops_[j].get(), std::move(released));
      }
      jobs_[j].gate = j == 0 ? &start_gate_ : sequence_gates_.back().get();
      jobs_[j].iteration_directories_after_gate = RemakesIterationDirectories(static_cast<size_t>(j));
    }
    for (uint32_t t = 0; t < specs[0].numjobs(); ++t) {
      io_threads_.emplace_back([this, t, jobs = specs.size(), rank = TaskRank(0, t)] {
        // Held on its CPU from the first phase to the last, as mpirun binds mdtest's ranks for
        // the whole run: each phase pinning and unpinning its task itself (RunMetadataTask)
        // began phases by moving it back to its CPU, caches cold, inside the phase's time.
        ScheduleThisThreadForWork();
        const std::optional<CpuPin> pin = CpuPin::Rank(rank);
        for (int j = 0; j < jobs; ++j) RunThread(static_cast<size_t>(j), t);
      });
    }
    return;
  }
  for (int j = 0; j < specs.size(); ++j) {
    jobs_[j].gate = &start_gate_;
    for (uint32_t t = 0; t < specs[j].numjobs(); ++t) {
      io_threads_.emplace_back([this, j, t] {
        ScheduleThisThreadForWork();
        RunThread(static_cast<size_t>(j), t);
      });
    }
  }
}

void WorkerRun::RunThread(size_t j, uint32_t t) {
  const v1::JobSpec& spec = request_.spec().jobs(static_cast<int>(j));
  JobThreadPlan plan{.job = &layout_.jobs[j],
                     .paths = layout_.paths[j][t],
                     .jobnum = t,
                     .rank = TaskRank(j, t),
                     .job_index = static_cast<uint32_t>(j),
                     .worker_index = request_.worker_index(),
                     .seed = (uint64_t{request_.worker_index()} << 40) ^ (uint64_t(j) << 20) ^ t ^ 0x10f1ee7,
                     .start_gate = jobs_[j].gate,
                     .iteration_directories_after_gate = jobs_[j].iteration_directories_after_gate,
                     .flows = &flows_,
                     .zones = zones_.get()};
  ThreadStats* stats = jobs_[j].threads[t].get();
  const StopSignal* job_stop = job_stops_[j].get();
  // Named for top -H, perf and ps: which threads are the job's (15 characters at most).
  pthread_setname_np(pthread_self(), plan.job->has_metadata() ? "mdtest-task" : "io-job");
  JobThreadOutcome outcome = plan.job->has_metadata() ? RunMetadataTask(plan, *job_stop, stats) : RunJobThread(plan, *job_stop, stats);
  AddThreadUsage(&outcome);  // IO threads and mdtest tasks alike
  std::lock_guard<std::mutex> inner(mu_);
  JobState& state = jobs_[j];
  ++state.threads_finished;
  state.last_end = std::max(state.last_end, outcome.end);
  if (!outcome.status.ok() && state.first_error.ok()) {
    state.first_error = outcome.status;
    if (request_.spec().jobs_in_sequence()) {
      // As mdtest, which stops at the first failure: the phases after it are not run.
      for (size_t k = j + 1; k < jobs_.size(); ++k) {
        if (job_stops_[k]->Stop()) jobs_[k].notes.push_back(absl::StrCat("not run: '", spec.name(), "' failed before it"));
      }
    }
  }
  state.task_items[plan.jobnum] = outcome.items;
  state.item_failures += outcome.item_failures;
  state.task_warnings[plan.jobnum] = std::move(outcome.item_warnings);
  state.iteration_directories_gone.insert(outcome.iteration_directories_gone.begin(), outcome.iteration_directories_gone.end());
  state.iteration_directories_left.insert(outcome.iteration_directories_left.begin(), outcome.iteration_directories_left.end());
  const int64_t own = std::chrono::duration_cast<std::chrono::nanoseconds>(outcome.end - JobStart(j)).count() - outcome.start_late_ns;
  state.task_elapsed_ns[plan.jobnum] = static_cast<uint64_t>(std::max<int64_t>(0, own));
  state.stonewalled |= outcome.stonewalled;
  state.start_late_ns = std::max(state.start_late_ns, outcome.start_late_ns);
  state.earliest_start_late_ns = std::min(state.earliest_start_late_ns, outcome.start_late_ns);
  state.cpu_user_ns += outcome.cpu_user_ns;
  state.cpu_system_ns += outcome.cpu_system_ns;
  state.context_switches += outcome.context_switches;
  state.zone_resets += outcome.zone_resets;
  for (const std::string& note : outcome.notes) {
    if (std::find(state.notes.begin(), state.notes.end(), note) == state.notes.end()) state.notes.push_back(note);
  }
  if (plan.job->exitall() && started_) ExitAll(j);
  // Only what the collector waits for wakes the threads waiting here: a job's last thread, or in
  // a sequence (mdtest's phases) the last job's (JobsToClose). A task that ends before the
  // others, or a phase that ends with the next one starting, wakes nobody: on a host whose CPUs
  // the tasks fill, the woken threads (the collector and the report readers, 10-15 us each) ran
  // on the CPUs of tasks in their timed loops (mdtest -I 20 -z 2 -b 10 on tmpfs: the tree
  // removal's 300 us lost 25-50 us in most runs). The collector then runs on this CPU, which
  // this thread is leaving (CpuHandOff), not on one whose thread works on.
  if (JobsToClose()) {
    collector_cpu_.SteerHere();
    changed_.notify_all();
  }
}

void WorkerRun::Arrived(uint32_t j) {
  // A job stopped before it began (one before it failed here, or the run was stopped) will not
  // run: the controller stops the rest of the sequence on every worker.
  const bool not_run = job_stops_[j]->stopped();
  {
    std::lock_guard<std::mutex> lock(arrivals_mu_);
    arrivals_.emplace_back(j, not_run);
  }
  arrivals_cv_.notify_all();
}

void WorkerRun::PassArrivalsOn() {
  std::unique_lock<std::mutex> lock(arrivals_mu_);
  while (true) {
    arrivals_cv_.wait(lock, [this] { return arrivals_done_ || (arrival_watcher_ && !arrivals_.empty()); });
    if (arrivals_done_) return;
    // Called with the lock held: a session that lets go of the run (WatchArrivals(nullptr))
    // waits for a call under way, and is never called after.
    for (const auto& [j, not_run] : arrivals_) arrival_watcher_(j, not_run);
    arrivals_.clear();
  }
}

void WorkerRun::WatchArrivals(ArrivalWatcher arrived) {
  {
    std::lock_guard<std::mutex> lock(arrivals_mu_);
    arrival_watcher_ = std::move(arrived);
  }
  arrivals_cv_.notify_all();  // (those that came before it go now)
}

absl::Status WorkerRun::Release(uint32_t job, int64_t start_unix_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& id = request_.run_id();
  if (!request_.spec().jobs_released()) {
    return absl::FailedPreconditionError(absl::StrCat("run ", id, ": its jobs start on this worker's own barrier, not on a release"));
  }
  if (job == 0 || job >= jobs_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("run ", id, ": no job ", job, " to release (jobs 1 to ", jobs_.size() - 1, " are)"));
  }
  if (!started_) return absl::FailedPreconditionError(absl::StrCat("run ", id, ": not started, so job ", job, " cannot be released"));
  StartGate& gate = *sequence_gates_[job - 1];
  if (!gate.all_arrived()) {
    return absl::FailedPreconditionError(absl::StrCat("run ", id, ": job ", job, " released before this worker's tasks all arrived at it"));
  }
  // The instant on the monotonic clock by the run's own mapping (Start's), so that the job's
  // time and the run's agree.
  const Clock::time_point instant = start_ + std::chrono::nanoseconds(start_unix_ns - start_unix_ns_);
  if (const std::optional<Clock::time_point> opened = gate.opened_at(); opened.has_value()) {
    if (*opened == instant) return absl::OkStatus();  // the same release again
    return absl::FailedPreconditionError(absl::StrCat("run ", id, ": job ", job, " was already released for another instant"));
  }
  gate.Open(instant);
  return absl::OkStatus();
}

bool WorkerRun::JobsToClose() const {
  bool any = false;
  for (const JobState& s : jobs_) {
    if (s.final_sent) continue;
    if (s.ended()) {
      any = true;
    } else if (request_.spec().jobs_in_sequence()) {
      return false;
    }
  }
  return any;
}

bool WorkerRun::RemakesIterationDirectories(size_t j) const {
  const auto& jobs = request_.spec().jobs();
  const v1::MetadataPhase& creation = jobs[static_cast<int>(j)].metadata();
  if (creation.op() != v1::MetadataPhase::TREE_CREATE) return false;
  for (size_t k = 0; k < j; ++k) {
    const v1::MetadataPhase& removal = jobs[static_cast<int>(k)].metadata();
    if (removal.op() != v1::MetadataPhase::TREE_REMOVE || removal.iteration() != creation.iteration()) continue;
    for (const std::string& dir : removal.test_dirs()) {
      if (std::find(creation.test_dirs().begin(), creation.test_dirs().end(), dir) != creation.test_dirs().end()) return true;
    }
  }
  return false;
}

uint32_t WorkerRun::TaskRank(size_t j, uint32_t t) const {
  return request_.worker_index() * request_.spec().jobs(static_cast<int>(j)).numjobs() + t;
}

WorkerRun::Clock::time_point WorkerRun::JobStart(size_t j) {
  // A job of a sequence that never opened (stopped before it) counts from the run's start.
  const std::optional<Clock::time_point> opened = jobs_[j].gate->opened_at();
  return opened.has_value() ? std::max(*opened, start_) : start_;
}

void WorkerRun::SetUpBlockStages() {
  const auto& specs = request_.spec().jobs();
  std::vector<BlockDevice> devices;
  std::vector<std::vector<uint32_t>> jobs_on;
  for (int j = 0; j < specs.size(); ++j) {
    // Each distinct target once: the job's files, or its directory (mdtest trees, files not
    // made yet), or the nearest existing directory above it.
    std::vector<std::string> targets;
    for (const auto& thread_paths : layout_.paths[static_cast<size_t>(j)]) {
      for (const std::string& path : thread_paths) {
        if (std::find(targets.begin(), targets.end(), path) == targets.end()) targets.push_back(path);
      }
    }
    if (!specs[j].metadata().has_dummy()) {  // mdtest trees (-a DUMMY: none, nothing touched)
      for (const std::string& dir : specs[j].metadata().test_dirs()) targets.push_back(dir);
    }
    if (targets.empty() && !specs[j].directory().empty()) targets.push_back(specs[j].directory());
    std::vector<std::string> none;
    for (std::string target : targets) {
      if (target.rfind("nfs://", 0) == 0) {
        none.push_back(absl::StrCat(target, ": the userspace NFS client has no block device on this host"));
        continue;
      }
      int fd = OpenConfined(target, O_PATH);
      while (fd == -ENOENT && target.size() > 1 && target.rfind('/') != std::string::npos) {
        target = target.substr(0, std::max<size_t>(1, target.rfind('/')));
        fd = OpenConfined(target, O_PATH);
      }
      if (fd < 0) {
        none.push_back(absl::StrCat(target, ": ", ConfinedPathReason(-fd)));
        continue;
      }
      absl::StatusOr<ResolvedDevices> resolved = ResolveBlockDevices(fd);
      ::close(fd);
      if (!resolved.ok()) {
        none.push_back(absl::StrCat(target, ": ", resolved.status().message()));
        continue;
      }
      if (resolved->devices.empty()) none.push_back(absl::StrCat(target, ": ", resolved->none_reason));
      for (const BlockDevice& device : resolved->devices) {
        size_t d = std::find(devices.begin(), devices.end(), device) - devices.begin();
        if (d == devices.size()) {
          devices.push_back(device);
          jobs_on.emplace_back();
        }
        if (std::find(jobs_on[d].begin(), jobs_on[d].end(), static_cast<uint32_t>(j)) == jobs_on[d].end()) jobs_on[d].push_back(static_cast<uint32_t>(j));
      }
    }
    // Paths of one file system say it once.
    std::sort(none.begin(), none.end());
    for (size_t i = 0; i < none.size() && i < 4; ++i) jobs_[static_cast<size_t>(j)].notes.push_back(absl::StrCat("block stages not traced for ", none[i]));
    if (none.size() > 4) jobs_[static_cast<size_t>(j)].notes.push_back(absl::StrCat("block stages not traced for ", none.size() - 4, " more targets"));
  }
  if (devices.empty()) return;
  absl::StatusOr<std::unique_ptr<BlockStageTracer>> tracer = BlockStageTracer::Attach(devices);
  if (!tracer.ok()) {
    for (size_t j = 0; j < jobs_.size(); ++j) jobs_[j].notes.push_back(absl::StrCat("block stages not traced: ", tracer.status().message()));
    return;
  }
  block_tracer_ = std::move(*tracer);
  block_jobs_ = std::move(jobs_on);
  host_ = LocalHostname();
}

void WorkerRun::ExitAll(size_t j) {
  const auto& specs = request_.spec().jobs();
  const v1::JobSpec& ended = specs[static_cast<int>(j)];
  static const char* const kWhat[] = {"group", "stonewall", "all"};
  for (size_t k = 0; k < job_stops_.size(); ++k) {
    if (ended.exit_what() == v1::JobSpec::EXIT_GROUP && group_of_[k] != group_of_[j]) continue;
    if (!job_stops_[k]->Stop() || k == j || jobs_[k].ended()) continue;
    jobs_[k].notes.push_back(absl::StrCat("stopped when job '", ended.name(), "' ended (exitall, exit_what=",
                                          kWhat[std::clamp<int>(ended.exit_what(), 0, 2)], ")"));
  }
}

size_t WorkerRun::SteadyStateKey(size_t job) const {
  return request_.spec().jobs(static_cast<int>(job)).group_reporting() ? jobs_.size() + group_of_[job] : job;
}

void WorkerRun::JudgeSteadyState(const std::vector<DueReport>& due, const std::vector<v1::IntervalReport>& reports) {
  // This pass's figures per key (a group's jobs are summed, as fio judges a reported group).
  struct Sum {
    uint64_t ops = 0, bytes = 0, latency_sum_ns = 0, latency_count = 0, span_ns = 0, since_start_ns = 0;
  };
  std::map<size_t, Sum> sums;
  for (size_t i = 0; i < due.size(); ++i) {
    const size_t key = SteadyStateKey(due[i].job);
    if (due[i].final || !steady_states_.count(key)) continue;
    Sum& sum = sums[key];
    for (const v1::DirectionStats& d : reports[i].directions()) {
      if (d.direction() == v1::SYNC) continue;
      sum.ops += d.ops();
      sum.bytes += d.bytes();
      // fio's lat criterion judges completion latency.
      sum.latency_sum_ns += static_cast<uint64_t>(d.completion_latency().sum_ns());
      sum.latency_count += d.completion_latency().count();
    }
    const v1::JobSpec& spec = request_.spec().jobs(static_cast<int>(due[i].job));
    sum.span_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(due[i].to - due[i].from).count());
    const int64_t since = reports[i].end_unix_ns() - start_unix_ns_ - static_cast<int64_t>(spec.startdelay_ns());
    sum.since_start_ns = static_cast<uint64_t>(std::max<int64_t>(0, since));
  }
  for (const auto& [key, sum] : sums) {
    SteadyState& ss = steady_states_.at(key);
    if (!ss.Add(sum.ops, sum.bytes, sum.latency_sum_ns, sum.latency_count, sum.span_ns, sum.since_start_ns)) continue;
    for (size_t k = 0; k < jobs_.size(); ++k) {
      if (SteadyStateKey(k) != key) continue;
      job_stops_[k]->Stop();
      jobs_[k].notes.push_back(ss.Describe());
    }
  }
}

bool WorkerRun::WaitArmed(const std::function<bool()>& given_up) {
  // (The threads of a sequence arm at its first job's gate.)
  size_t threads = 0;
  for (const v1::JobSpec& job : request_.spec().jobs()) {
    threads += job.numjobs();
    if (request_.spec().jobs_in_sequence()) break;
  }
  while (!start_gate_.WaitArmed(threads, std::chrono::milliseconds(100))) {
    if (given_up()) return false;
  }
  return true;
}

absl::StatusOr<int64_t> WorkerRun::Start(int64_t start_unix_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t lead = start_unix_ns - WallNowNs();
  if (started_) {
    if (start_unix_ns == start_unix_ns_) return lead;
    return absl::FailedPreconditionError(absl::StrCat("run ", request_.run_id(), " was already started for another instant"));
  }
  if (stop_.stopped()) return absl::FailedPreconditionError(absl::StrCat("run ", request_.run_id(), " was stopped: ", stop_reason_));
  started_ = true;
  start_unix_ns_ = start_unix_ns;
  // The wall-clock instant mapped onto the monotonic clock, which times everything after.
  start_ = Clock::now() + std::chrono::nanoseconds(lead);
  if (block_tracer_) {
    // What the block layer did before the instant (laying files out) is not the run's.
    absl::StatusOr<BlockStageTracer::Snapshot> baseline = block_tracer_->Read();
    if (baseline.ok()) {
      block_snapshot_ = std::move(*baseline);
    } else {
      for (JobState& state : jobs_) state.notes.push_back(absl::StrCat("block stages not traced: ", baseline.status().message()));
      block_tracer_.reset();
    }
  }
  start_gate_.Open(start_);  // the armed threads go
  collector_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "interval-cut");  // (for top -H, perf and ps)
    ScheduleThisThreadForWork();  // its cuts are due at the intervals' boundaries
    collector_cpu_.Register();
    CollectorLoop();
  });
  return lead;
}

void WorkerRun::Stop(const std::string& reason, v1::StopCause cause) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_.stopped()) return;
  stop_reason_ = reason;
  stop_cause_ = cause;
  stop_.Stop();
  if (started_ && !all_reports_produced_) Log(LogLevel::kInfo, absl::StrCat("run ", request_.run_id(), ": IO stopped early: ", reason));
  if (!started_) {
    all_reports_produced_ = true;  // nothing ran, nothing to report
    start_gate_.Close();           // the armed threads end
  }
  changed_.notify_all();
}

v1::IntervalReport WorkerRun::ReportInterval(size_t job_index, uint32_t interval_index, Clock::time_point from, Clock::time_point to,
                                             absl::Span<const DirectionCut> cuts) {
  JobState& state = jobs_[job_index];
  v1::IntervalReport report;
  report.set_run_id(request_.run_id());
  report.set_job_index(static_cast<uint32_t>(job_index));
  report.set_interval_index(interval_index);
  report.set_start_unix_ns(ToUnixNs(from));
  report.set_end_unix_ns(ToUnixNs(to));
  const v1::JobSpec& spec = request_.spec().jobs(static_cast<int>(job_index));
  for (int d = 0; d < kDirectionCount; ++d) {
    LatencyHistogram merged, submit, completion;
    std::vector<LatencyHistogram> by_priority(state.priorities.size());
    uint64_t bytes = 0, errors = 0;
    std::vector<v1::SlowRequest> slowest;
    for (size_t t = 0; t < state.threads.size(); ++t) {
      const DirectionCut& cut = cuts[t * kDirectionCount + static_cast<size_t>(d)];
      merged.Merge(cut.latency);
      submit.Merge(cut.submit);
      completion.Merge(cut.completion);
      for (size_t p = 0; p < cut.priority_completion.size() && p < by_priority.size(); ++p) by_priority[p].Merge(cut.priority_completion[p]);
      bytes += cut.bytes;
      errors += cut.errors;
      // Name the file and place the completion in wall-clock time.
      for (const SlowSample& s : cut.slowest) {
        v1::SlowRequest& request = slowest.emplace_back();
        request.set_latency_ns(s.latency_ns);
        request.set_complete_unix_ns(ToUnixNs(Clock::time_point(std::chrono::nanoseconds(s.complete_ns))));
        request.set_offset(s.offset);
        if (spec.has_metadata()) {
          request.set_file(MdtestTree(spec.metadata()).OperationPath(static_cast<uint32_t>(s.file), s.offset));  // task, item
        } else if (job_index < layout_.paths.size() && t < layout_.paths[job_index].size() && s.file < layout_.paths[job_index][t].size()) {
          request.set_file(layout_.paths[job_index][t][s.file]);
        }
        request.set_thread(static_cast<uint32_t>(t));
      }
    }
    if (merged.count() == 0 && bytes == 0 && errors == 0) continue;
    v1::DirectionStats* stats = report.add_directions();
    if (spec.disable_lat()) slowest.clear();  // ranked by a latency not measured
    std::sort(slowest.begin(), slowest.end(), [](const auto& a, const auto& b) { return a.latency_ns() > b.latency_ns(); });
    if (slowest.size() > kSlowestPerReport) slowest.resize(kSlowestPerReport);
    for (v1::SlowRequest& request : slowest) *stats->add_slowest() = std::move(request);
    stats->set_direction(static_cast<v1::Direction>(d + 1));
    stats->set_ops(merged.count());
    stats->set_bytes(bytes);
    stats->set_errors(errors);
    // A latency the job does not measure (disable_lat...) is left out; ops still count.
    if (!spec.disable_lat()) *stats->mutable_latency() = merged.ToProto();
    if (submit.count() > 0 && !spec.disable_slat()) *stats->mutable_submit_latency() = submit.ToProto();
    if (!spec.disable_clat()) *stats->mutable_completion_latency() = completion.ToProto();
    for (size_t p = 0; p < by_priority.size(); ++p) {
      if (by_priority[p].count() == 0 || spec.disable_clat()) continue;
      v1::PriorityLatency* priority = stats->add_priorities();
      priority->set_ioprio(state.priorities[p]);
      *priority->mutable_completion_latency() = by_priority[p].ToProto();
    }
  }
  return report;
}

void WorkerRun::Publish(v1::IntervalReport report) {
  if (observer_) observer_(request_, report);
  if (reports_.size() >= kMaxQueuedReports) {
    // Nobody reads them (a controller that stalls but holds its connection): stop rather than
    // keep them without bound. From here on only the jobs' final reports are queued; the
    // intervals in between are dropped, and the final reports say so.
    if (!stop_.stopped()) {
      Log(LogLevel::kWarning, absl::StrCat("run ", request_.run_id(), ": ", reports_.size(), " interval reports unread; stopping its IO"));
      stop_reason_ = absl::StrCat("the controller stopped reading interval reports (", reports_.size(), " queued)");
      stop_cause_ = v1::STOP_CAUSE_REPORTS_UNREAD;
      stop_.Stop();
    }
    if (!report.final()) {
      ++dropped_reports_;
      return;
    }
    if (dropped_reports_ > 0) report.add_notes(absl::StrCat(dropped_reports_, " interval report(s) were dropped: nobody read them"));
  }
  reports_.push_back(std::move(report));
}

void WorkerRun::CollectorLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  uint32_t interval = 0;
  Clock::time_point interval_start = start_;
  while (true) {
    const Clock::time_point boundary = start_ + interval_ * (interval + 1);
    // Wake at the boundary, or earlier when a job's last thread ends (its final report). The
    // jobs of a sequence end one after another with the next one running: their final reports
    // wait for the boundary or the sequence's end, so that neither this cut nor its delivery
    // (nor the controller's merge, on a one-host run) takes the CPUs the next phase's tasks
    // have just started on.
    changed_.wait_until(lock, boundary, [this] { return JobsToClose(); });
    collector_cpu_.Release();
    const Clock::time_point now = Clock::now();
    bool all_final = true;
    std::vector<DueReport> due;
    std::vector<DirectionCounters*> counters;
    for (size_t j = 0; j < jobs_.size(); ++j) {
      JobState& state = jobs_[j];
      if (state.final_sent) continue;
      // A job that ended before this boundary closes in this interval; one that ended after
      // it (or runs on) reports the interval normally and closes in the next, so that every
      // worker attributes the end of a job to the interval its end time falls in.
      const bool ended_in_interval = state.ended() &&
                                     (now < boundary || state.last_end < boundary);
      if (ended_in_interval) {
        // Every thread has exited: the counters are complete and this report closes the job.
        due.push_back({j, true, interval_start, std::max(std::max(state.last_end, interval_start), start_)});
      } else {
        all_final = false;
        if (now >= boundary) due.push_back({j, false, interval_start, boundary});
      }
      if (!due.empty() && due.back().job == j) counters.insert(counters.end(), state.counters.begin(), state.counters.end());
    }
    // Every due job's counters cut at once (one barrier for all: a membarrier interrupts every
    // CPU this process runs on), and the reports built, without the run's lock: RPCs never
    // wait for a cut.
    lock.unlock();
    const std::vector<DirectionCut> cuts = CutIntervals(counters);
    std::vector<v1::IntervalReport> cut;
    size_t offset = 0;
    for (const DueReport& d : due) {
      const size_t n = jobs_[d.job].counters.size();
      cut.push_back(ReportInterval(d.job, interval, d.from, d.to, absl::MakeConstSpan(cuts).subspan(offset, n)));
      offset += n;
    }
    if (block_tracer_ && !cut.empty()) {
      // The host's block layer over the same span, carried once per cut (by its first report).
      // The last one also counts the requests still held: their completion was never seen.
      absl::StatusOr<BlockStageTracer::Snapshot> snapshot = block_tracer_->Read(/*including_in_flight=*/all_final);
      if (snapshot.ok()) {
        for (v1::BlockDeviceStages& device : BlockStagesSince(*snapshot, block_snapshot_, block_tracer_->devices(), host_, block_jobs_, all_final)) {
          *cut.front().add_block_devices() = std::move(device);
        }
        block_snapshot_ = std::move(*snapshot);
      } else {
        // The next cut covers this one's span; the last one's loss is said.
        Log(LogLevel::kWarning, absl::StrCat("run ", request_.run_id(), ": block stages: ", snapshot.status().message()));
        if (all_final) cut.front().add_notes(absl::StrCat("block stages of the last interval lost: ", snapshot.status().message()));
      }
      // Detached as soon as the last job ended: nothing of the run stays in the kernel.
      if (all_final) block_tracer_.reset();
    }
    if (profiler_ && all_final && !cut.empty()) {
      // The phase's CPU profile, on its last report.
      absl::StatusOr<v1::HostProfile> profile = profiler_->Finish();
      profiler_.reset();
      if (profile.ok()) {
        profile->set_host(host_);
        for (size_t j = 0; j < jobs_.size(); ++j) profile->add_jobs(static_cast<uint32_t>(j));
        *cut.front().add_profiles() = std::move(*profile);
      } else {
        cut.front().add_notes(absl::StrCat("no CPU profile: ", profile.status().message()));
      }
    }
    lock.lock();
    if (!steady_states_.empty()) JudgeSteadyState(due, cut);
    for (size_t i = 0; i < due.size(); ++i) {
      if (!due[i].final) continue;
      JobState& state = jobs_[due[i].job];
      v1::IntervalReport& report = cut[i];
      report.set_final(true);
      // Run time counts from when the job's measured IO began (after startdelay and ramp_time).
      const v1::JobSpec& spec = request_.spec().jobs(static_cast<int>(due[i].job));
      // (A job of a sequence from its own start.)
      const Clock::time_point measured_from = JobStart(due[i].job) + std::chrono::nanoseconds(spec.startdelay_ns() + spec.ramp_time_ns());
      report.set_elapsed_ns(static_cast<uint64_t>(
          std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(state.last_end - measured_from).count())));
      if (!state.first_error.ok()) report.set_error(state.first_error.ToString());
      if (stop_.stopped()) {
        report.set_stop_reason(stop_reason_);
        report.set_stop_cause(stop_cause_);
      }
      for (const std::string& note : state.notes) report.add_notes(note);
      // fio's "; N zone resets" of a zbd job.
      if (spec.zones().mode() == v1::ZoneSpec::ZBD) report.add_notes(absl::StrCat("zonemode=zbd: ", state.zone_resets, " zone resets"));
      if (auto ss = steady_states_.find(SteadyStateKey(due[i].job)); ss != steady_states_.end() && !ss->second.attained()) {
        report.add_notes(ss->second.Describe());
      }
      report.set_cpu_user_ns(state.cpu_user_ns);
      report.set_cpu_system_ns(state.cpu_system_ns);
      report.set_context_switches(state.context_switches);
      for (uint64_t items : state.task_items) report.add_task_items(items);
      report.set_item_failures(state.item_failures);
      for (const auto& warnings : state.task_warnings) report.mutable_item_warnings()->Add(warnings.begin(), warnings.end());
      report.mutable_iteration_directories_gone()->Add(state.iteration_directories_gone.begin(), state.iteration_directories_gone.end());
      report.mutable_iteration_directories_left()->Add(state.iteration_directories_left.begin(), state.iteration_directories_left.end());
      if (spec.has_metadata()) {
        for (uint64_t ns : state.task_elapsed_ns) report.add_task_elapsed_ns(ns);
      }
      report.set_stonewalled(state.stonewalled);
      report.set_start_late_ns(state.start_late_ns);
      report.set_earliest_start_late_ns(state.earliest_start_late_ns == INT64_MAX ? 0 : state.earliest_start_late_ns);
      for (int b = 0; b < kDepthBuckets; ++b) {
        uint64_t depth = 0, submit = 0, complete = 0;
        for (const auto& thread : state.threads) {
          depth += thread->depth[b].load(std::memory_order_relaxed);
          submit += thread->submit[b].load(std::memory_order_relaxed);
          complete += thread->complete[b].load(std::memory_order_relaxed);
        }
        report.add_depth_counts(depth);
        report.add_submit_counts(submit);
        report.add_complete_counts(complete);
      }
      state.final_sent = true;
    }
    // Published together, with one wakeup: the session sends one cut's reports as one message.
    for (v1::IntervalReport& report : cut) Publish(std::move(report));
    if (!cut.empty()) changed_.notify_all();
    if (all_final) break;
    if (now >= boundary) {
      interval_start = boundary;
      ++interval;
    }
  }
  all_reports_produced_ = true;
  changed_.notify_all();
}

bool WorkerRun::NextReport(std::chrono::milliseconds timeout, v1::IntervalReport* report, bool* ended) {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait_for(lock, timeout, [&] { return !reports_.empty() || all_reports_produced_; });
  *ended = false;
  if (!reports_.empty()) {
    *report = std::move(reports_.front());
    reports_.pop_front();
    return true;
  }
  *ended = all_reports_produced_;
  return false;
}

WorkerRun::Delivered WorkerRun::DeliverReports(const std::function<bool(std::vector<v1::IntervalReport>)>& deliver,
                                               const std::function<bool()>& stop) {
  while (!stop()) {
    std::vector<v1::IntervalReport> ready;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait_for(lock, std::chrono::seconds(1), [this] { return !reports_.empty() || all_reports_produced_ || stop_delivering_; });
      if (stop_delivering_) break;
      if (reports_.empty() && all_reports_produced_) return Delivered::kAll;
      ready.reserve(reports_.size());
      for (v1::IntervalReport& report : reports_) ready.push_back(std::move(report));
      reports_.clear();
    }
    if (!ready.empty() && !deliver(std::move(ready))) return Delivered::kReaderGone;
  }
  return Delivered::kStopped;
}

void WorkerRun::StopDelivering() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_delivering_ = true;
  }
  changed_.notify_all();
}

}  // namespace iofleet
