// A run's stop request as its threads see it: an IO loop checks `stopped()` on its fast path
// (one relaxed load), and a thread with nothing to do until some instant (rate pacing,
// thinktime, the start instant) sleeps until then or until the stop, whichever comes first —
// woken by Stop(), not polling for it. A worker host carries hundreds of paced threads when
// many workers share it; a thread polling every few milliseconds costs a context switch each.
#ifndef IOFLEET_WORKER_STOP_SIGNAL_H_
#define IOFLEET_WORKER_STOP_SIGNAL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace iofleet {

class StopSignal {
 public:
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

  // Any thread; wakes every sleeper, and stops the signals this one adopted. Returns whether
  // this call stopped it (false: it already was).
  bool Stop() {
    std::vector<StopSignal*> children;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_.load(std::memory_order_relaxed)) return false;
      stopped_.store(true, std::memory_order_relaxed);
      children = children_;
    }
    woken_.notify_all();
    for (StopSignal* child : children) child->Stop();
    return true;
  }

  // `child` (which must outlive this) stops whenever this does, and can also be stopped alone:
  // one job of a run (fio's exitall) without the others.
  void Adopt(StopSignal* child) {
    bool stopped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      children_.push_back(child);
      stopped = stopped_.load(std::memory_order_relaxed);
    }
    if (stopped) child->Stop();
  }

  // Sleeps until `when` (steady clock); false when stopped before or meanwhile.
  bool SleepUntil(std::chrono::steady_clock::time_point when) const {
    std::unique_lock<std::mutex> lock(mu_);
    return !woken_.wait_until(lock, when, [this] { return stopped_.load(std::memory_order_relaxed); });
  }

 private:
  std::atomic<bool> stopped_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable woken_;
  std::vector<StopSignal*> children_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_STOP_SIGNAL_H_
