// Benchmark: how late a worker's interval reports are, and what the IO threads do meanwhile.
// A real WorkerRun with the null engine (the harness's ceiling) cuts 10 ms intervals for 3 s,
// at the threads' full rate and rate-limited to 100k IOPS per thread; for every interval the
// time from its boundary to its report being published (wake-up plus the cut itself) is taken,
// and the median, p99 and worst are printed with the IOPS the threads reached.
//   bazel run -c opt //worker:interval_cut_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

#include "job/block_sizes.h"
#include "worker/file_layout.h"
#include "worker/path_policy.h"
#include "worker/worker_run.h"

namespace iofleet {
namespace {

int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Measure(const char* label, uint32_t threads, uint64_t rate_iops) {
  v1::PrepareRequest request;
  request.set_run_id("bench");
  request.set_worker_count(1);
  request.set_interval_ns(10'000'000);
  v1::JobSpec* job = request.mutable_spec()->add_jobs();
  job->set_name("null");
  job->set_rw(v1::RAND_READ);
  SetFixedBlockSize(job, 4096);
  job->set_size(1ull << 30);
  job->set_numjobs(threads);
  job->set_iodepth(1);
  job->set_ioengine("null");
  job->set_time_based(true);
  job->set_runtime_ns(3'000'000'000);
  if (rate_iops > 0) job->add_rate_iops(rate_iops);
  auto policy = PathPolicy::Create({"/tmp"});
  auto layout = LayOutRunFiles(request, *policy);
  if (!layout.ok()) {
    std::fprintf(stderr, "layout: %s\n", std::string(layout.status().message()).c_str());
    return;
  }
  std::mutex mu;
  std::vector<int64_t> lateness_ns;
  uint64_t ops = 0;
  WorkerRun run(request, std::move(*layout), [&](const v1::PrepareRequest&, const v1::IntervalReport& report) {
    const int64_t now = WallNowNs();
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& d : report.directions()) ops += d.ops();
    if (!report.final()) lateness_ns.push_back(now - report.end_unix_ns());
  });
  const int64_t start = WallNowNs() + 20'000'000;
  if (!run.Start(start).ok()) return;
  v1::IntervalReport report;
  bool ended = false;
  while (!ended) run.NextReport(std::chrono::milliseconds(100), &report, &ended);
  std::sort(lateness_ns.begin(), lateness_ns.end());
  auto at = [&](double q) { return lateness_ns.empty() ? 0.0 : lateness_ns[static_cast<size_t>(q * (lateness_ns.size() - 1))] / 1e3; };
  std::printf("%-34s %9.2fM IOPS   report after boundary: median %7.1f us  p99 %8.1f us  worst %8.1f us  (%zu intervals)\n", label,
              static_cast<double>(ops) / 3.0 / 1e6, at(0.5), at(0.99), at(1.0), lateness_ns.size());
}

}  // namespace
}  // namespace iofleet

int main() {
  iofleet::Measure("null, 1 thread, full rate", 1, 0);
  iofleet::Measure("null, 2 threads, full rate", 2, 0);
  iofleet::Measure("null, 1 thread, 100k IOPS", 1, 100'000);
  return 0;
}
