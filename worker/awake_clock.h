// The worker's time as far as it could observe it: steady time minus the stretches in which the
// process was starved of CPU. On a saturated host (hundreds of workers on a few cores) a
// thread can be scheduled seconds late; a lease renewal that sat unread in the socket
// meanwhile was not the controller's silence. Leases are measured on this clock, so a worker
// stops its IO when it could have heard its controller for a whole lease and did not — not
// when it could not run. The lease watchdog feeds it: a sleep that lasts longer than asked
// (beyond a little scheduling slack) adds the excess to the starved total.
#ifndef IOFLEET_WORKER_AWAKE_CLOCK_H_
#define IOFLEET_WORKER_AWAKE_CLOCK_H_

#include <atomic>
#include <chrono>

namespace iofleet {

class AwakeClock {
 public:
  using Steady = std::chrono::steady_clock;
  using time_point = Steady::time_point;

  static time_point Now() { return Steady::now() - std::chrono::nanoseconds(starved_ns_.load(std::memory_order_relaxed)); }

  // A sleep of `asked` took `took`: what it overslept beyond the slack was starvation.
  static void NoteSleep(Steady::duration asked, Steady::duration took) {
    const auto excess = took - asked - kSlack;
    if (excess > Steady::duration::zero()) {
      starved_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(excess).count(), std::memory_order_relaxed);
    }
  }

  // All the starvation noted so far.
  static std::chrono::nanoseconds Starved() { return std::chrono::nanoseconds(starved_ns_.load(std::memory_order_relaxed)); }

 private:
  // Ordinary scheduling delay is not starvation.
  static constexpr std::chrono::milliseconds kSlack{50};
  static inline std::atomic<int64_t> starved_ns_{0};
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_AWAKE_CLOCK_H_
