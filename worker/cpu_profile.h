// --profile: where a worker host's CPUs go during a phase. `perf record` samples every CPU's
// stack at 99 Hz (an odd rate, so sampling does not lock step with the 100/250/1000 Hz timer
// ticks and periodic work), all CPUs rather than the worker's threads: what a request costs
// includes the kernel threads that do the work for it (loop and writeback workers, softirqs,
// a FUSE daemon, the NFS client's rpciod) — the part a per-process profile would miss. `perf
// stat` counts cycles, instructions and cache misses over the same span where the kernel
// exposes them. The samples are folded into flamegraph.pl's format here, on the host, so only
// the distinct stacks travel.
#ifndef IOFLEET_WORKER_CPU_PROFILE_H_
#define IOFLEET_WORKER_CPU_PROFILE_H_

#include <sys/types.h>

#include <istream>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/report.pb.h"

namespace iofleet {

class HostProfiler {
 public:
  static constexpr int kFrequencyHz = 99;

  // Starts sampling (perf from PATH, or $IOFLEET_PERF). Fails with perf's own words when it
  // cannot (not installed, perf_event_paranoid, no permission).
  static absl::StatusOr<std::unique_ptr<HostProfiler>> Start();
  // Stops perf if it still runs and removes its files.
  ~HostProfiler();
  HostProfiler(const HostProfiler&) = delete;
  HostProfiler& operator=(const HostProfiler&) = delete;

  // Stops sampling and folds what perf recorded: at most `max_stacks` distinct stacks (the most
  // frequent; the others summed into one "[other stacks]" entry), each frame at most 256 bytes.
  absl::StatusOr<v1::HostProfile> Finish(size_t max_stacks = 4000);

 private:
  HostProfiler() = default;
  std::string dir_;  // perf's files
  pid_t record_ = -1, stat_ = -1;
  double started_ = 0;
};

// `perf script -F comm,pid,ip,sym` output to folded stacks per process:
// {pid, "comm;outermost;...;innermost"} -> count (pid 0 when perf printed none).
std::map<std::pair<uint32_t, std::string>, uint64_t> FoldPerfScript(std::istream& in);

// `perf stat -x,` output (CSV lines "value,unit,event,...") into the profile's counters; events
// perf reports as <not supported> or <not counted> are left out and named in its problems.
void ParsePerfStat(const std::string& csv, v1::HostProfile* profile);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_CPU_PROFILE_H_
