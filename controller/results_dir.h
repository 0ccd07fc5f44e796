// A run's results directory, DIR/<UTC time>-<job name>/: the job as given and as resolved, the
// JSON result, the text report, the interval logs and every worker's host facts. It is built
// as DIR/.<name>.partial while the run goes on, each file written atomically, and renamed to
// its final name at the end — also when the run ended early, with a PARTIAL file saying why.
// A controller killed outright leaves the .partial directory, whose name says so.
#ifndef IOFLEET_CONTROLLER_RESULTS_DIR_H_
#define IOFLEET_CONTROLLER_RESULTS_DIR_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace iofleet {

// A name as a file name in a results directory: anything but [A-Za-z0-9._-] turns into '_',
// at most 64 bytes; `empty` when nothing is left.
std::string ResultsFileName(const std::string& name, const std::string& empty);

class ResultsDirectory {
 public:
  // Makes DIR (if needed) and the working directory for a run named after `job_name` that
  // starts at `start`; a name already taken gets a -2, -3... suffix.
  static absl::StatusOr<ResultsDirectory> Create(const std::string& base, absl::Time start, const std::string& job_name);

  // A path inside the working directory (for files written while the run goes on).
  std::string PathOf(const std::string& file) const { return working_ + "/" + file; }
  // Writes one file atomically.
  absl::Status Write(const std::string& file, const std::string& text) const;
  // Writes `files` (name, contents), then PARTIAL when the run had `problems` or a non-zero
  // `exit_code`, and gives the directory its final name.
  struct Saved {
    std::string path;
    bool partial = false;
  };
  absl::StatusOr<Saved> Complete(const std::vector<std::pair<std::string, std::string>>& files, std::vector<std::string> problems,
                                 int exit_code);
  // The interval logs a run wrote elsewhere (--interval-log / --interval-csv; empty: none),
  // added to `files` to be kept here too as intervals.ndjson / intervals.csv.
  static void AddIntervalLogs(const std::string& ndjson, const std::string& csv, std::vector<std::pair<std::string, std::string>>* files);

  // Removes the working directory (nothing was measured: bad input, no workers).
  void Discard();

 private:
  ResultsDirectory(std::string working, std::string final_path) : working_(std::move(working)), final_(std::move(final_path)) {}
  std::string working_, final_;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_RESULTS_DIR_H_
