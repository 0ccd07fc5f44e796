// One job thread (one of a job's `numjobs`) from start to end: opens its files with its own
// engine instance, waits for the common start instant, runs its passes with up to `iodepth`
// requests in flight, and records every request's lat, slat and clat (as fio defines them)
// into its ThreadStats. What to issue, what writes carry, when, and what to read back come
// from its parts (work_generator, write_buffers, rate_pacer, read_back); engine_queue holds
// its slots.
#ifndef IOFLEET_WORKER_JOB_THREAD_H_
#define IOFLEET_WORKER_JOB_THREAD_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <mutex>
#include <condition_variable>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "proto/job.pb.h"
#include "worker/emulated_zones.h"
#include "worker/flow_control.h"
#include "worker/stop_signal.h"
#include "worker/thread_stats.h"

namespace iofleet {

// Where a run's threads wait, armed (files open, engine and buffers ready), for the start
// instant: the worker says it is prepared only once every thread is here, the controller
// picks the instant only once every worker is, and a thread with nothing left to do but wait
// starts on time. Opened once with the instant, or closed (the run stopped before it started).
class StartGate {
 public:
  using Clock = std::chrono::steady_clock;

  // One thread's place at the gate: it counts as armed when it waits there, or when it ends
  // before reaching it (its setup failed). A null gate: no-op, Wait gives nullopt.
  class Ticket {
   public:
    explicit Ticket(StartGate* gate) : gate_(gate) {}
    ~Ticket() {
      if (gate_ == nullptr) return;
      if (!counted_) gate_->Arrive();
      if (meets_ && !finished_) gate_->Finish(nullptr);  // (left early: counted, never awaited)
    }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    // Armed: waits for the instant (nullopt: the gate was closed, the run is over). Without a
    // gate the instant is `fixed_start` (a plan made with its start already known). A thread
    // that `meets` says it will call Meet once the instant has come.
    std::optional<Clock::time_point> Wait(Clock::time_point fixed_start, bool meets = false) {
      if (gate_ == nullptr) return fixed_start;
      counted_ = true;
      meets_ = meets;
      gate_->Arrive(meets);
      return gate_->WaitOpen();
    }
    // StartGate::Meet (at once without a gate).
    void Meet(const StopSignal& stop) {
      if (gate_ != nullptr) gate_->Meet(stop);
    }
    // StartGate::Finish (at once without a gate, or for a thread that did not say it meets).
    void Finish(const StopSignal& stop) {
      if (gate_ == nullptr || !meets_ || finished_) return;
      finished_ = true;
      gate_->Finish(&stop);
    }

   private:
    StartGate* const gate_;
    bool counted_ = false;
    bool meets_ = false;
    bool finished_ = false;
  };

  void Open(Clock::time_point start) {
    std::lock_guard<std::mutex> lock(mu_);
    start_ = start;
    opened_.store(true, std::memory_order_release);  // (waiters of a released gate spin on it)
    cv_.notify_all();
  }
  // Makes this a barrier (before any thread arrives): it opens itself, at that moment, when
  // the `threads`-th thread arrives, as mdtest's ranks leave the barrier between two phases —
  // the jobs of a sequence (RunSpec.jobs_in_sequence) start the moment every task has ended
  // the previous one. Those waiting spin as StartGate::Meet does (a phase may last a few
  // milliseconds, and a thread put to sleep wakes tens of microseconds late and cold), for
  // kSpinAtMost, and sleep after that (a thousand tasks waiting on a long phase's last one
  // must not take its CPU). `stop` (outliving the gate) makes the waiters leave, not started.
  // Given `arrived` (across workers, RunSpec.jobs_released), the `threads`-th thread calls it
  // instead (outside the gate's lock), and the gate stays shut until Open names the instant the
  // controller chose for every worker. Its waiters sleep until then: what opens it is this
  // host's control plane (the arrival sent, the release received: gRPC's threads, the
  // session's), and tasks spinning on their CPUs kept those threads off them, so that with a
  // worker per CPU the release reached a worker after its instant (a 2-vCPU VM, two workers:
  // one worker's task began a tree removal 110-470 us after the other's, in 2 runs of 6). The
  // release names an instant ahead of its sending (ControllerMessage.release), time enough to
  // wake; from there they spin to it (RunMetadataTask).
  static constexpr std::chrono::milliseconds kSpinAtMost{20};
  void OpenWhenArrived(size_t threads, const StopSignal* stop, std::function<void()> arrived = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    opening_threads_ = threads;
    opening_stop_ = stop;
    on_arrived_ = std::move(arrived);
  }
  // Every thread OpenWhenArrived counts on has arrived.
  bool all_arrived() {
    std::lock_guard<std::mutex> lock(mu_);
    return opening_threads_ > 0 && arrived_ >= opening_threads_;
  }
  // When it opened (nullopt: not yet).
  std::optional<Clock::time_point> opened_at() {
    std::lock_guard<std::mutex> lock(mu_);
    return start_;
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // Waits up to `timeout` until `threads` threads are armed; true if they are. (Every thread
  // arrives, also one that ends early, so this ends however the run goes.)
  bool WaitArmed(size_t threads, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return arrived_ >= threads; });
  }

  // Once the instant has come, the threads that said at the gate they would meet (mdtest's
  // tasks) meet once more, spinning, and the last to arrive lets them all go: a phase starts
  // from a barrier on each worker, as mdtest's ranks start each phase from theirs. A task held
  // up past the instant (preempted, woken late) then holds up the others on its worker
  // instead of starting behind them, which in a phase of a few operations (a tree of five
  // directories: 30-50 us) was most of the phase's time, one run in five. Ends early when
  // `stop` is given.
  void Meet(const StopSignal& stop) {
    size_t meeting;
    {
      std::lock_guard<std::mutex> lock(mu_);  // (final: every Wait came before the gate opened)
      meeting = meeting_;
    }
    met_.fetch_add(1, std::memory_order_acq_rel);
    SpinUntil([&] { return met_.load(std::memory_order_acquire) >= meeting; }, stop);
  }
  // The threads that met say, once their timed work is done, that they have finished, and wait
  // (asleep: nothing of theirs is timed any more) until all of them have: what a task does after
  // its clock (counting what a creation made, removing the directories the trees were in) then
  // never runs beside another task's timed operations. A readdir holds the directory's lock
  // against creations in it, an rmdir that fails on a non-empty directory its parent's against
  // the last tree's removal. Ends early when `stop` (if given) is.
  void Finish(const StopSignal* stop) {
    std::unique_lock<std::mutex> lock(mu_);
    ++finished_;
    cv_.notify_all();
    if (stop == nullptr) return;
    while (finished_ < meeting_ && !stop->stopped()) cv_.wait_for(lock, std::chrono::milliseconds(10));
  }

 private:
  // Spins until `done()` (true) or `stop`, or, given `at_most`, until that long has passed
  // (false). With more tasks than CPUs the one awaited may need this CPU: after a few
  // microseconds of pausing, each look gives the CPU away first.
  template <typename Done>
  static bool SpinUntil(const Done& done, const StopSignal& stop,
                        std::optional<Clock::duration> at_most = std::nullopt) {
    const Clock::time_point since = at_most.has_value() ? Clock::now() : Clock::time_point();
    for (uint32_t spins = 0;; ++spins) {
      if (done()) return true;
      if (stop.stopped()) return false;
      if (spins < 1000) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        continue;
      }
      if (at_most.has_value() && Clock::now() - since >= *at_most) return false;
      std::this_thread::yield();
    }
  }
  void Arrive(bool meets = false) {
    std::function<void()> arrived;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++arrived_;
      meeting_ += meets;
      if (opening_threads_ > 0 && arrived_ == opening_threads_) {
        if (on_arrived_) {
          arrived = on_arrived_;  // (a copy: WaitOpen goes on asking whether it was given)
        } else {
          start_ = Clock::now();
          opened_.store(true, std::memory_order_release);
        }
      }
      cv_.notify_all();
    }
    if (arrived) arrived();
  }
  std::optional<Clock::time_point> WaitOpen() {
    if (opening_stop_ != nullptr) {  // (set before any thread arrives)
      const auto opened = [this] { return opened_.load(std::memory_order_acquire); };
      if (on_arrived_ || !SpinUntil(opened, *opening_stop_, kSpinAtMost)) {  // (released: asleep at once)
        // Asleep from now: woken by the opening, or looking at the stop every 10 ms.
        std::unique_lock<std::mutex> lock(mu_);
        while (!start_.has_value() && !opening_stop_->stopped()) {
          cv_.wait_for(lock, std::chrono::milliseconds(10));
        }
      }
      std::lock_guard<std::mutex> lock(mu_);
      return start_;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return start_.has_value() || closed_; });
    return start_;
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Clock::time_point> start_;
  bool closed_ = false;
  size_t arrived_ = 0;
  size_t meeting_ = 0;          // threads that will Meet
  std::atomic<size_t> met_{0};  // threads that did
  size_t finished_ = 0;         // of those, the ones done with their timed work (Finish)
  // OpenWhenArrived: how many threads open it, and the stop its waiters heed (null: an
  // ordinary gate, opened by Open).
  size_t opening_threads_ = 0;
  const StopSignal* opening_stop_ = nullptr;
  std::function<void()> on_arrived_;  // OpenWhenArrived's, if given: a released gate (called by the last to arrive)
  std::atomic<bool> opened_{false};
};

struct JobThreadPlan {
  const v1::JobSpec* job = nullptr;
  std::vector<std::string> paths;  // the files this thread works on (nrfiles)
  uint32_t jobnum = 0;  // index among the job's threads on this worker
  uint32_t rank = 0;    // index among the job's threads on all workers (mdtest's task number)
  uint32_t job_index = 0;     // the job's place in the run (verify headers name it)
  uint32_t worker_index = 0;  // this worker's place in the run
  uint64_t seed = 0;    // random offsets and mixes; distinct per worker and thread
  std::chrono::steady_clock::time_point start;  // the run's common start instant (when no gate)
  // When set, the start instant comes through it (the thread arms first, then waits).
  StartGate* start_gate = nullptr;
  // mdtest's tree creation in a sequence (RunSpec.jobs_in_sequence) after a tree removal of the
  // same iteration directories (a task count sweep, -f/-l/-s, runs each count's iterations under
  // the same names): it makes them once its gate has opened, when that removal has ended in
  // every task (of every worker, in a sequence the controller releases).
  bool iteration_directories_after_gate = false;
  // The run's flows on this worker (fio flow=); none when the job has no flow weight.
  FlowRegistry* flows = nullptr;
  // The run's emulated zones on this worker (zonemode=zbd), shared by the jobs of one file.
  ZoneRegistry* zones = nullptr;
};

// How a job thread ended.
struct JobThreadOutcome {
  absl::Status status;  // the first IO error (path, offset, op, errno), else OK
  std::chrono::steady_clock::time_point end;
  std::vector<std::string> notes;  // from the engine: features refused, fallbacks taken
  // CPU the thread used from its start to its end (getrusage RUSAGE_THREAD).
  uint64_t cpu_user_ns = 0, cpu_system_ns = 0, context_switches = 0;
  // Metadata tasks: items done, and whether the stonewall time stopped the task.
  uint64_t items = 0;
  bool stonewalled = false;
  // Metadata tasks with warn_failed_items: operations on items that failed and were gone past
  // (counted in `items` too), and mdtest's warning for each of the first (MdtestWarning: one
  // entry a failure).
  uint64_t item_failures = 0;
  std::vector<std::string> item_warnings;
  // Tree removal: the iteration directories this task removed or found gone, and those it could
  // not remove (others' trees may still have been in them then).
  std::vector<std::string> iteration_directories_gone, iteration_directories_left;
  // How long after its start instant the thread began (0 if it never did: stopped before).
  int64_t start_late_ns = 0;
  // zonemode=zbd: zones the thread emptied (fio's "zone resets").
  uint64_t zone_resets = 0;
};

// Runs until the job's work is done, its runtime has passed, or `stop` becomes true.
JobThreadOutcome RunJobThread(const JobThreadPlan& plan, const StopSignal& stop,
                              ThreadStats* stats);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_JOB_THREAD_H_
