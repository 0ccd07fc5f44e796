// fio's latency_target, latency_window and latency_percentile for one job thread: the search
// for the deepest queue at which latency_percentile of the IOs of a window complete within the
// target. It starts at depth 1 and doubles while windows succeed, bisects between the last
// success and the first failure, and once the depth stops changing runs one more window at it,
// measured alone (what came before is not recorded, as fio resets its stats), then ends the job.
// With latency_percentile=100 one slow IO fails the window at once; at depth 1 that is an error,
// as fio's "max latency exceeded". fio's io_u.c lat_target_*, step for step.
#ifndef IOFLEET_WORKER_LATENCY_TARGET_H_
#define IOFLEET_WORKER_LATENCY_TARGET_H_

#include <cstdint>
#include <string>

#include "proto/job.pb.h"

namespace iofleet {

class LatencyTargetSearch {
 public:
  LatencyTargetSearch(const v1::JobSpec& job, uint64_t start_ns);

  static bool Wanted(const v1::JobSpec& job) { return job.latency_target_ns() > 0; }

  // The queue depth the thread may use now.
  uint32_t depth() const { return depth_; }

  enum class Action {
    kNone,
    kQuiesce,        // the depth went down: let what is in flight finish first
    kStartFinalRun,  // the depth is found: let what is in flight finish, record from now on
    kDone,           // the final window at the found depth succeeded: the job ends
    kFatal,          // an IO above the target at depth 1 with latency_percentile=100
  };
  // A data IO completed after `latency_ns` (issue to completion).
  Action Completed(uint64_t latency_ns, uint64_t now_ns);
  // Called as the loop goes round: judges a window once it has lasted latency_window.
  Action Check(uint64_t now_ns);

  // "depth 8 (99.9% of IOs within 500ms over windows of 5s)".
  std::string Describe() const;

 private:
  Action Success(uint64_t now_ns);
  Action Failure(uint64_t now_ns);
  void NewWindow(uint64_t now_ns);

  const uint32_t iodepth_;
  const uint64_t target_ns_, window_ns_;
  const double percentile_;
  uint32_t depth_ = 1, low_ = 1, high_;
  uint32_t stable_count_ = 0;
  bool final_run_ = false;
  uint64_t window_start_ns_ = 0, window_ios_ = 0, window_failed_ = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_LATENCY_TARGET_H_
