#include "worker/per_op_csv.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/confined_path.h"
#include "common/errno_status.h"

namespace iofleet {

absl::StatusOr<std::unique_ptr<PerOperationCsv>> PerOperationCsv::Create(const std::string& path, double bytes_per_operation, bool append) {
  const int fd = OpenConfined(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return ErrnoStatus(-fd, absl::StrCat("--savePerOpDataCSV: cannot create ", path));
  std::unique_ptr<PerOperationCsv> csv(new PerOperationCsv(path, fd, bytes_per_operation));
  struct stat st;
  if (!append || (::fstat(fd, &st) == 0 && st.st_size == 0)) csv->Write("time,runtime,tp\n");
  if (!csv->status_.ok()) return csv->status_;
  return csv;
}

PerOperationCsv::PerOperationCsv(std::string path, int fd, double bytes_per_operation)
    : path_(std::move(path)), fd_(fd), bytes_per_operation_(bytes_per_operation) {
  buffered_.reserve(kBufferedOperations);
}

PerOperationCsv::~PerOperationCsv() {
  if (fd_ >= 0) ::close(fd_);
}

void PerOperationCsv::Flush() {
  std::string text;
  text.reserve(buffered_.size() * 48);
  for (const auto& [start, duration] : buffered_) {
    // (A duration of 0 gives mdtest's "inf".)
    absl::StrAppendFormat(&text, "%.8e,%.8e,%e\n", start, duration, bytes_per_operation_ / duration);
  }
  buffered_.clear();
  Write(text);
}

void PerOperationCsv::Write(const std::string& text) {
  for (size_t done = 0; status_.ok() && done < text.size();) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status_ = ErrnoStatus(n < 0 ? errno : EIO, absl::StrCat("--savePerOpDataCSV: writing ", path_));
      break;
    }
    done += static_cast<size_t>(n);
  }
}

absl::Status PerOperationCsv::Close() {
  if (fd_ < 0) return status_;
  if (!buffered_.empty()) Flush();
  if (::close(fd_) != 0 && status_.ok()) status_ = ErrnoStatus(errno, absl::StrCat("--savePerOpDataCSV: closing ", path_));
  fd_ = -1;
  return status_;
}

}  // namespace iofleet
