// What the controller spends on each worker's interval report once it has arrived (issue 14's
// 1,024-worker benchmark, without the sessions): RunAggregator::Add with the live view's NDJSON and
// CSV lines of the worker's own interval, then TakeDue and the cluster's and jobs' lines, as a run of WORKERS workers with JOBS null-engine jobs at a
// low rate makes them (two operations per report, two histogram buckets, two slow requests).
// A benchmark, not a test: it prints CPU time per report.
//   bazel run -c opt //controller:aggregation_bench -- [WORKERS [JOBS [INTERVALS]]]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/live_view.h"
#include "controller/run_aggregator.h"

namespace iofleet {
namespace {

int64_t CpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

v1::IntervalReport Report(uint32_t job, uint32_t interval, uint32_t worker, int64_t start_ns) {
  v1::IntervalReport report;
  report.set_run_id("r-bench");
  report.set_job_index(job);
  report.set_interval_index(interval);
  report.set_start_unix_ns(start_ns + int64_t{interval} * 1'000'000'000);
  report.set_end_unix_ns(report.start_unix_ns() + 1'000'000'000);
  v1::DirectionStats* d = report.add_directions();
  d->set_direction(v1::READ);
  d->set_ops(2);
  d->set_bytes(8192);
  v1::LatencyHistogramProto* h = d->mutable_latency();
  // Two latencies, a few microseconds apart from worker to worker: the cluster's histogram
  // gathers a few hundred buckets.
  const uint32_t low = 600 + (worker * 7 + job) % 150, high = low + 200 + (worker % 13);
  h->add_bucket_index(low);
  h->add_bucket_count(1);
  h->add_bucket_index(high);
  h->add_bucket_count(1);
  h->set_count(2);
  h->set_sum_ns(60000);
  h->set_sum_squares_ns2(2.1e9);
  h->set_min_ns(4000);
  h->set_max_ns(56000);
  for (int i = 0; i < 2; ++i) {
    v1::SlowRequest* slow = d->add_slowest();
    slow->set_latency_ns(56000 - i * 52000);
    slow->set_complete_unix_ns(report.start_unix_ns() + 500'000'000 * i);
    slow->set_file("(null)");
    slow->set_offset(4096ull * (worker + i));
  }
  return report;
}

int Main(int argc, char** argv) {
  const uint32_t workers = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 1024;
  const uint32_t jobs = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 8;
  const uint32_t intervals = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : 20;
  v1::RunSpec spec;
  for (uint32_t j = 0; j < jobs; ++j) {
    v1::JobSpec* job = spec.add_jobs();
    job->set_name(absl::StrCat("j", j + 1));
  }
  std::vector<std::string> addresses;
  for (uint32_t w = 0; w < workers; ++w) addresses.push_back(absl::StrCat("127.0.0.1:", 30000 + w));
  RunAggregator aggregator(spec, addresses);
  LiveView view(spec, addresses, "r-bench", LiveViewOptions{.progress = false});
  const int64_t start_ns = 1'800'000'000'000'000'000;
  for (uint32_t j = 0; j < jobs; ++j) aggregator.MarkStarted(j, start_ns);
  int64_t add_ns = 0, publish_ns = 0;
  size_t lines = 0, bytes = 0;
  std::vector<PublishedInterval> due;
  std::string json, csv;
  // As the live view takes the workers' own intervals: written up as they are added.
  auto write_up = [&](const PublishedInterval& in) {
    for (int d = 0; d < 5; ++d) {
      if (!HasActivity(in.directions[d])) continue;
      view.AppendLogLines(in, d, &json, &csv);
      ++lines;
    }
  };
  aggregator.ObserveWorkerIntervals(write_up);
  for (uint32_t i = 0; i < intervals; ++i) {
    // As the sessions deliver them: one message per worker, every job's report in it.
    std::vector<std::vector<v1::IntervalReport>> messages(workers);
    for (uint32_t w = 0; w < workers; ++w) {
      for (uint32_t j = 0; j < jobs; ++j) messages[w].push_back(Report(j, i, w, start_ns));
    }
    int64_t t0 = CpuNs();
    for (uint32_t w = 0; w < workers; ++w) aggregator.Add(w, std::move(messages[w]));
    int64_t t1 = CpuNs();
    due.clear();
    aggregator.TakeDue(start_ns + int64_t{i + 1} * 1'000'000'000 + 500'000'000, 2'000'000'000, &due);
    for (const PublishedInterval& in : due) write_up(in);
    bytes += json.size() + csv.size();
    json.clear();
    csv.clear();
    due.clear();  // (the published intervals freed here, as the live view does)
    int64_t t2 = CpuNs();
    add_ns += t1 - t0;
    publish_ns += t2 - t1;
  }
  const double reports = static_cast<double>(workers) * jobs * intervals;
  std::printf("%u workers x %u jobs x %u intervals: %.0f reports, %zu lines (%.1f MB)\n", workers, jobs, intervals, reports, lines,
              static_cast<double>(bytes) / 1e6);
  std::printf("add:     %6.2f us per report (with the worker's own NDJSON and CSV lines)\npublish: %6.2f us per report (TakeDue, the cluster's and jobs' lines)\n", add_ns / reports / 1e3,
              publish_ns / reports / 1e3);
  std::printf("per worker and second (one report per job): %.1f us\n", (add_ns + publish_ns) / (reports / jobs) / 1e3);
  return 0;
}

}  // namespace
}  // namespace iofleet

int main(int argc, char** argv) { return iofleet::Main(argc, argv); }
