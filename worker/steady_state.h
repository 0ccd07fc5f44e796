// fio's steadystate (ss), steadystate_duration, steadystate_ramp_time and
// steadystate_check_interval for one job — or one reporting group with group_reporting — on one
// worker: samples of IOPS, bandwidth or mean latency, one per check interval after the ramp, in a
// rolling window of the duration; once the window is full and its samples all lie within the
// limit of their mean (iops, bw, lat) or their least-squares slope is below it (iops_slope,
// bw_slope, lat_slope), steady state is attained and the job stops. fio's steadystate.c, sample
// for sample.
#ifndef IOFLEET_WORKER_STEADY_STATE_H_
#define IOFLEET_WORKER_STEADY_STATE_H_

#include <cstdint>
#include <deque>
#include <string>

#include "proto/job.pb.h"

namespace iofleet {

class SteadyState {
 public:
  explicit SteadyState(const v1::SteadyState& spec);

  // Whether the job asks for it at all.
  static bool Wanted(const v1::JobSpec& job) { return job.has_steadystate() && job.steadystate().duration_ns() > 0; }

  // What the job did over `span_ns` ending `since_start_ns` after its start: adds a sample once
  // the span adds up to a check interval. True when this attains steady state.
  bool Add(uint64_t ops, uint64_t bytes, uint64_t latency_sum_ns, uint64_t latency_count, uint64_t span_ns, uint64_t since_start_ns);

  bool attained() const { return attained_; }
  // "iops within 10% of their mean 12.3k over 30 samples of 1s (max deviation 4.1%)", or why not.
  std::string Describe() const;

 private:
  const v1::SteadyState spec_;
  const size_t window_;  // samples in the rolling window
  std::deque<double> samples_;
  // What has accumulated towards the next sample.
  uint64_t ops_ = 0, bytes_ = 0, latency_sum_ns_ = 0, latency_count_ = 0, span_ns_ = 0;
  bool attained_ = false;
  double criterion_ = 0;  // the last judged value: deviation or slope (in percent when the limit is)
  double mean_ = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_STEADY_STATE_H_
