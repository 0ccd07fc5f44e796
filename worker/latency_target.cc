#include "worker/latency_target.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {

LatencyTargetSearch::LatencyTargetSearch(const v1::JobSpec& job, uint64_t start_ns)
    : iodepth_(std::max(1u, job.iodepth())),
      target_ns_(job.latency_target_ns()),
      window_ns_(job.latency_window_ns()),
      percentile_(job.latency_percentile() > 0 ? job.latency_percentile() : 100.0),
      high_(std::max(1u, job.iodepth())) {
  NewWindow(start_ns);
}

void LatencyTargetSearch::NewWindow(uint64_t now_ns) {
  window_start_ns_ = now_ns;
  window_ios_ = 0;
  window_failed_ = 0;
}

LatencyTargetSearch::Action LatencyTargetSearch::Completed(uint64_t latency_ns, uint64_t now_ns) {
  ++window_ios_;
  if (latency_ns <= target_ns_) return Action::kNone;
  if (percentile_ < 100.0) {
    ++window_failed_;
    return Action::kNone;
  }
  if (depth_ == 1) return Action::kFatal;
  return Failure(now_ns);
}

LatencyTargetSearch::Action LatencyTargetSearch::Check(uint64_t now_ns) {
  if (now_ns - window_start_ns_ < window_ns_ || window_ios_ == 0) return Action::kNone;
  const double success = 100.0 * static_cast<double>(window_ios_ - window_failed_) / static_cast<double>(window_ios_);
  return success >= percentile_ ? Success(now_ns) : Failure(now_ns);
}

LatencyTargetSearch::Action LatencyTargetSearch::Success(uint64_t now_ns) {
  const uint32_t before = depth_;
  low_ = depth_;
  if (depth_ + 1 == high_ && ++stable_count_ >= 3) {
    // fio: stuck one below a failing depth; after three successes in a row try that one again.
    ++high_;
    stable_count_ = 0;
  }
  // Double until a window fails, then bisect towards the failing depth.
  depth_ = high_ != iodepth_ ? (depth_ + high_) / 2 : depth_ * 2;
  depth_ = std::min(depth_, iodepth_);
  Action action = Action::kNone;
  if (depth_ == before) {
    if (final_run_) return Action::kDone;
    final_run_ = true;
    action = Action::kStartFinalRun;
  }
  NewWindow(now_ns);
  return action;
}

LatencyTargetSearch::Action LatencyTargetSearch::Failure(uint64_t now_ns) {
  NewWindow(now_ns);
  if (depth_ == 1) return Action::kNone;  // nothing shallower to try
  high_ = depth_;
  if (depth_ == low_) --low_;
  depth_ = std::max(1u, (depth_ + low_) / 2);
  return Action::kQuiesce;
}

std::string LatencyTargetSearch::Describe() const {
  return absl::StrCat("latency_target: depth ", depth_, " (", absl::StrFormat("%g", percentile_), "% of IOs within ",
                      absl::StrFormat("%g", static_cast<double>(target_ns_) / 1000.0), "us over windows of ",
                      absl::StrFormat("%g", static_cast<double>(window_ns_) / 1e6), "ms)", final_run_ ? "" : ", search not finished");
}

}  // namespace iofleet
