#include "controller/fio_logs.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "job/block_sizes.h"

namespace iofleet {

FioLogWriter::FioLogWriter(v1::RunSpec spec, std::string directory, int64_t interval_ns)
    : spec_(std::move(spec)), directory_(std::move(directory)), interval_ns_(interval_ns) {}

FioLogWriter::~FioLogWriter() { (void)Close(); }

bool FioLogWriter::Wanted(const v1::RunSpec& spec) {
  for (const v1::JobSpec& job : spec.jobs()) {
    if (!job.write_bw_log().empty() || !job.write_iops_log().empty() || !job.write_lat_log().empty() || !job.write_hist_log().empty()) {
      return true;
    }
  }
  return false;
}

std::FILE* FioLogWriter::File(int job, int worker, const std::string& prefix, const std::string& kind) {
  auto key = std::make_tuple(job, worker, kind);
  if (auto it = files_.find(key); it != files_.end()) return it->second;
  // fio: "<prefix>_<kind>.<job number>.log"; here the number is the worker's (1-based).
  std::string path = absl::StrCat(prefix, "_", kind, ".", worker + 1, ".log");
  if (path[0] != '/') path = absl::StrCat(directory_, "/", path);
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr && status_.ok()) status_ = absl::ErrnoToStatus(errno, absl::StrCat("cannot write fio log ", path));
  files_[key] = file;
  if (file != nullptr) paths_.push_back(path);
  return file;
}

void FioLogWriter::Add(const PublishedInterval& in) {
  if (in.scope != PublishedInterval::Scope::kWorker || in.job < 0 || in.job >= spec_.jobs_size()) return;
  const v1::JobSpec& job = spec_.jobs(in.job);
  // The window's end in ms since the job's start, as fio stamps averaged entries.
  const int64_t job_start = in.start_unix_ns - static_cast<int64_t>(in.index) * interval_ns_;
  const long long msec = (in.end_unix_ns - job_start) / 1'000'000;
  const double seconds = std::max(1e-9, static_cast<double>(in.end_unix_ns - in.start_unix_ns) / 1e9);
  for (int ddir = 0; ddir < 3; ++ddir) {  // read, write, trim: fio's data directions
    const v1::DirectionStats& d = in.directions[ddir];
    if (d.ops() == 0 && d.bytes() == 0) continue;
    auto line = [&](const std::string& prefix, const std::string& kind, unsigned long long value) {
      if (prefix.empty()) return;
      // fio's columns: time, value, direction, block size, [offset with log_offset,] priority.
      // An averaged line has block size and offset 0 in fio too.
      if (std::FILE* f = File(in.job, in.worker, prefix, kind)) std::fprintf(f, "%lld, %llu, %d, 0, %s0\n", msec, value, ddir, job.log_offset() ? "0, " : "");
    };
    line(job.write_bw_log(), "bw", static_cast<unsigned long long>(static_cast<double>(d.bytes()) / 1024 / seconds + 0.5));
    line(job.write_iops_log(), "iops", static_cast<unsigned long long>(static_cast<double>(d.ops()) / seconds + 0.5));
    auto mean = [](const v1::LatencyHistogramProto& h) { return h.count() ? h.sum_ns() / h.count() : 0; };
    if (d.latency().count()) line(job.write_lat_log(), "lat", mean(d.latency()));
    if (d.completion_latency().count()) line(job.write_lat_log(), "clat", mean(d.completion_latency()));
    if (d.submit_latency().count()) line(job.write_lat_log(), "slat", mean(d.submit_latency()));
    if (!job.write_hist_log().empty() && d.completion_latency().count()) {
      if (std::FILE* f = File(in.job, in.worker, job.write_hist_log(), "clat_hist")) {
        std::vector<unsigned long long> counts(kFioBuckets, 0);
        // iofleet's bucket i is fio's plat bucket i (both: exact below 128 ns, then 64 per
        // power of two); fio's last bucket takes everything beyond its range.
        ForEachBucket(d.completion_latency(), [&](uint32_t index, uint64_t count) { counts[std::min<uint32_t>(index, kFioBuckets - 1)] += count; });
        std::fprintf(f, "%lld, %d, %llu", msec, ddir, static_cast<unsigned long long>(MaxBlockSize(job)));
        for (unsigned long long c : counts) std::fprintf(f, ", %llu", c);
        std::fputs("\n", f);
      }
    }
  }
}

absl::StatusOr<std::vector<std::string>> FioLogWriter::Close() {
  for (auto& [key, file] : files_) {
    if (file != nullptr && std::fclose(file) != 0 && status_.ok()) status_ = absl::ErrnoToStatus(errno, "closing a fio log");
    file = nullptr;
  }
  if (!status_.ok()) return status_;
  return paths_;
}

}  // namespace iofleet
