// fio's log options (write_bw_log, write_iops_log, write_lat_log, write_hist_log) written on
// the controller from each worker's published intervals, in fio's formats, one file per worker
// where fio has one per job thread (a worker's numjobs threads are summed):
//   <prefix>_bw.<worker>.log, _iops, _lat, _clat, _slat: "msec, value, ddir, 0, 0" — KiB/s,
//   IOs/s, mean latency in ns over the window (fio's log_avg_msec form);
//   <prefix>_clat_hist.<worker>.log: "msec, ddir, bs, c0, ..., c1855" — the window's completion
//   latency counts in fio's 1856 plat buckets, which are exactly iofleet's histogram buckets.
// The window is the run's interval (set from log_avg_msec / log_hist_msec).
#ifndef IOFLEET_CONTROLLER_FIO_LOGS_H_
#define IOFLEET_CONTROLLER_FIO_LOGS_H_

#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/run_aggregator.h"
#include "proto/job.pb.h"

namespace iofleet {

class FioLogWriter {
 public:
  // `directory`: where the prefixes are resolved; `interval_ns`: the run's interval.
  FioLogWriter(v1::RunSpec spec, std::string directory, int64_t interval_ns);
  ~FioLogWriter();
  FioLogWriter(const FioLogWriter&) = delete;
  FioLogWriter& operator=(const FioLogWriter&) = delete;

  // Whether any job asks for a log.
  static bool Wanted(const v1::RunSpec& spec);
  // One worker-scope interval (published once per worker and interval).
  void Add(const PublishedInterval& interval);
  // Closes every file; the paths written.
  absl::StatusOr<std::vector<std::string>> Close();

  // fio's plat bucket count (FIO_IO_U_PLAT_NR).
  static constexpr int kFioBuckets = 1856;

 private:
  std::FILE* File(int job, int worker, const std::string& prefix, const std::string& kind);

  const v1::RunSpec spec_;
  const std::string directory_;
  const int64_t interval_ns_;
  std::map<std::tuple<int, int, std::string>, std::FILE*> files_;  // (job, worker, kind)
  std::vector<std::string> paths_;
  absl::Status status_;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_FIO_LOGS_H_
