#include "worker/steady_state.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {
namespace {

bool IsSlope(v1::SteadyState::Criterion c) {
  return c == v1::SteadyState::IOPS_SLOPE || c == v1::SteadyState::BW_SLOPE || c == v1::SteadyState::LAT_SLOPE;
}

const char* CriterionName(v1::SteadyState::Criterion c) {
  switch (c) {
    case v1::SteadyState::IOPS: return "iops";
    case v1::SteadyState::IOPS_SLOPE: return "iops_slope";
    case v1::SteadyState::BW: return "bw";
    case v1::SteadyState::BW_SLOPE: return "bw_slope";
    case v1::SteadyState::LAT: return "lat";
    case v1::SteadyState::LAT_SLOPE: return "lat_slope";
    default: return "?";
  }
}

uint64_t CheckInterval(const v1::SteadyState& spec) { return spec.check_interval_ns() ? spec.check_interval_ns() : 1'000'000'000; }

}  // namespace

SteadyState::SteadyState(const v1::SteadyState& spec)
    : spec_(spec), window_(static_cast<size_t>(std::max<uint64_t>(1, spec.duration_ns() / CheckInterval(spec)))) {}

bool SteadyState::Add(uint64_t ops, uint64_t bytes, uint64_t latency_sum_ns, uint64_t latency_count, uint64_t span_ns,
                      uint64_t since_start_ns) {
  if (attained_) return false;
  // Collection starts after the ramp (a span that straddles it is left out whole).
  if (since_start_ns < spec_.ramp_ns() + span_ns) return false;
  ops_ += ops;
  bytes_ += bytes;
  latency_sum_ns_ += latency_sum_ns;
  latency_count_ += latency_count;
  span_ns_ += span_ns;
  // A sample per check interval (a little short of it counts: spans are cut at the worker's
  // report boundaries, which may run a few microseconds short).
  if (span_ns_ + 1'000'000 < CheckInterval(spec_)) return false;
  const double seconds = static_cast<double>(span_ns_) / 1e9;
  double value = 0;
  switch (spec_.criterion()) {
    case v1::SteadyState::IOPS:
    case v1::SteadyState::IOPS_SLOPE: value = static_cast<double>(ops_) / seconds; break;
    case v1::SteadyState::BW:
    case v1::SteadyState::BW_SLOPE: value = static_cast<double>(bytes_) / seconds; break;
    default: value = latency_count_ ? static_cast<double>(latency_sum_ns_) / static_cast<double>(latency_count_) : 0; break;
  }
  ops_ = bytes_ = latency_sum_ns_ = latency_count_ = span_ns_ = 0;
  samples_.push_back(value);
  if (samples_.size() > window_) samples_.pop_front();
  if (samples_.size() < window_) return false;
  double sum = 0;
  for (const double y : samples_) sum += y;
  mean_ = sum / static_cast<double>(window_);
  if (IsSlope(spec_.criterion())) {
    // Least squares over x = 0..n-1, as fio's steadystate_slope.
    const double n = static_cast<double>(window_);
    double sum_x = 0, sum_x_sq = 0, sum_xy = 0;
    for (size_t i = 0; i < window_; ++i) {
      sum_x += static_cast<double>(i);
      sum_x_sq += static_cast<double>(i * i);
      sum_xy += static_cast<double>(i) * samples_[i];
    }
    const double denominator = sum_x_sq - sum_x * sum_x / n;
    const double slope = denominator > 0 ? (sum_xy - sum_x * sum / n) / denominator : 0;
    criterion_ = spec_.percent() ? (mean_ != 0 ? 100.0 * slope / mean_ : INFINITY) : slope;
    attained_ = std::fabs(criterion_) < spec_.limit();
  } else {
    double deviation = 0;
    for (const double y : samples_) deviation = std::max(deviation, std::fabs(y - mean_));
    criterion_ = spec_.percent() ? (mean_ != 0 ? 100.0 * deviation / mean_ : INFINITY) : deviation;
    attained_ = criterion_ < spec_.limit();
  }
  return attained_;
}

std::string SteadyState::Describe() const {
  const std::string limit = absl::StrCat(spec_.limit(), spec_.percent() ? "%" : "");
  const std::string window = absl::StrCat(window_, " samples of ", absl::StrFormat("%g", static_cast<double>(CheckInterval(spec_)) / 1e9), "s");
  const char* what = IsSlope(spec_.criterion()) ? "slope" : "largest deviation from the mean";
  if (samples_.size() < window_) {
    return absl::StrCat("steady state (", CriterionName(spec_.criterion()), ":", limit, ") not attained: the run ended with ", samples_.size(),
                        " of the window's ", window);
  }
  return absl::StrCat("steady state (", CriterionName(spec_.criterion()), ":", limit, ") ", attained_ ? "attained" : "not attained", ": ",
                      what, " ", absl::StrFormat("%.3g", criterion_), spec_.percent() ? "%" : "", " over ", window, ", mean ",
                      absl::StrFormat("%.4g", mean_));
}

}  // namespace iofleet
