// mdtest's --savePerOpDataCSV file of one task and phase (hpc/ior utilities.c's OpTimer): a
// header, then a line per operation of its start since the phase began, its duration (both
// in seconds) and the bytes per second it moved ("tp": the phase's bytes per operation, or 1,
// over the duration), each line as mdtest prints it ("%.8e,%.8e,%e").
//
// Operations are kept in a bounded buffer and written out when it fills (inside the phase, as
// mdtest's 1,000,000-operation buffer is) and when the file is closed: a task of a million
// operations never holds more than kBufferedOperations of them.
#ifndef IOFLEET_WORKER_PER_OP_CSV_H_
#define IOFLEET_WORKER_PER_OP_CSV_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace iofleet {

class PerOperationCsv {
 public:
  static constexpr size_t kBufferedOperations = 65536;  // 1 MiB of them

  // Creates (or empties) `path`, beneath the worker's allowed roots (OpenConfined), and writes
  // the header. `bytes_per_operation`: the "tp" column's numerator (mdtest: -w or -e, else 1).
  // `append`: the lines go on after those already there (a wear-out after its stonewalled pass;
  // the header only if the file is new).
  static absl::StatusOr<std::unique_ptr<PerOperationCsv>> Create(const std::string& path, double bytes_per_operation, bool append = false);
  ~PerOperationCsv();
  PerOperationCsv(const PerOperationCsv&) = delete;
  PerOperationCsv& operator=(const PerOperationCsv&) = delete;

  // One operation, `start_s` after the phase began, lasting `duration_s`. The first write
  // error is kept (Close returns it) and nothing more is written.
  void Add(double start_s, double duration_s) {
    buffered_.emplace_back(start_s, duration_s);
    if (buffered_.size() == kBufferedOperations) Flush();
  }
  // Writes what is buffered and closes the file; the first error met, naming the file.
  absl::Status Close();
  const std::string& path() const { return path_; }

 private:
  PerOperationCsv(std::string path, int fd, double bytes_per_operation);
  void Flush();
  void Write(const std::string& text);

  const std::string path_;
  int fd_;
  const double bytes_per_operation_;
  std::vector<std::pair<double, double>> buffered_;
  absl::Status status_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_PER_OP_CSV_H_
