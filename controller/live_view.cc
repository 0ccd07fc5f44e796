#include "controller/live_view.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cerrno>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "controller/direction_summary.h"
#include "histogram/latency_histogram.h"
#include "job/job_phases.h"
#include "job/mdtest_tree.h"

namespace iofleet {
namespace {

const char* ScopeName(PublishedInterval::Scope scope) {
  switch (scope) {
    case PublishedInterval::Scope::kCluster: return "cluster";
    case PublishedInterval::Scope::kJob: return "job";
    case PublishedInterval::Scope::kWorker: return "worker";
  }
  return "?";
}

LatencyFigures Figures(const v1::DirectionStats& stats) {
  static const std::vector<double> kLogged = {50, 90, 99, 99.9, 100};
  const v1::LatencyHistogramProto& latency = stats.latency();
  const std::vector<uint64_t> values = ValuesAtPercentiles(latency, kLogged);
  LatencyFigures f;
  f.mean = static_cast<uint64_t>(MeanNs(latency.count(), latency.sum_ns()));
  f.p50 = values[0];
  f.p90 = values[1];
  f.p99 = values[2];
  f.p999 = values[3];
  f.max = values[4];
  f.stddev = StddevNs(latency.count(), latency.sum_ns(), latency.sum_squares_ns2());
  return f;
}

int64_t NowUnixNs() { return absl::ToUnixNanos(absl::Now()); }

// Appends `value` as printf's "%.<precision>f" writes it (the same digits, correctly rounded),
// without printf's cost: the logs take thousands of these a second at a thousand workers.
void AppendFixed(double value, int precision, std::string* out) {
  char buffer[64];
  const std::to_chars_result written = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, precision);
  if (written.ec == std::errc()) {
    out->append(buffer, written.ptr);
  } else {
    absl::StrAppendFormat(out, "%.*f", precision, value);  // (beyond 64 characters: 1e60 and up)
  }
}

// Appends `text` as a CSV field: quoted (quotes doubled) when it holds a comma, quote or line
// break.
void AppendCsvField(absl::string_view text, std::string* out) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) {
    out->append(text.data(), text.size());
    return;
  }
  absl::StrAppend(out, "\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped
// (job names and paths come from users).
void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

}  // namespace

LiveView::LiveView(v1::RunSpec spec, std::vector<std::string> workers, std::string run_id, LiveViewOptions options)
    : spec_(std::move(spec)), phases_(SplitIntoPhases(spec_)), workers_(std::move(workers)), run_id_(std::move(run_id)), options_(std::move(options)),
      worker_lines_(options_.worker_lines.value_or(workers_.size() <= kWorkerIntervalLinesAuto)),
      tty_(::isatty(STDERR_FILENO) == 1) {}

LiveView::~LiveView() { (void)Finish(); }

const char* LiveView::CsvHeader() {
  return "run,scope,phase,job,host,direction,interval,start_unix_ns,end_unix_ns,complete,amended,workers_reporting,workers_expected,"
         "ops,bytes,errors,iops,bw_bytes,lat_mean_ns,lat_p50_ns,lat_p99_ns,lat_p999_ns,lat_max_ns,lat_p90_ns,lat_stddev_ns\n";
}

std::string LiveView::JsonLine(const PublishedInterval& in, int d) const {
  std::string line;
  AppendJsonLine(in, d, &line);
  return line;
}

std::string LiveView::CsvRow(const PublishedInterval& in, int d) const {
  std::string row;
  AppendCsvRow(in, d, &row);
  return row;
}

// Both append to the buffer Publish writes once per tick: at a thousand workers these are
// thousands of lines a second, so no line is built from temporaries of its own.
void LiveView::AppendJsonLine(const PublishedInterval& in, int d, std::string* out) const { AppendLogLines(in, d, out, nullptr); }

void LiveView::AppendCsvRow(const PublishedInterval& in, int d, std::string* out) const { AppendLogLines(in, d, nullptr, out); }

void LiveView::AppendLogLines(const PublishedInterval& in, int d, std::string* json, std::string* csv) const {
  // The figures once for both (a histogram walk each).
  const LatencyFigures figures = Figures(in.directions[d]);
  if (json != nullptr) AppendJsonLine(in, d, figures, json);
  if (csv != nullptr) AppendCsvRow(in, d, figures, csv);
}

void LiveView::AppendJsonLine(const PublishedInterval& in, int d, const LatencyFigures& figures, std::string* out) const {
  const v1::DirectionStats& stats = in.directions[d];
  const double seconds = static_cast<double>(std::max<int64_t>(1, in.end_unix_ns - in.start_unix_ns)) / 1e9;
  const v1::LatencyHistogramProto& lat = stats.latency();
  absl::StrAppend(out, "{\"run\":\"", run_id_, "\",\"scope\":\"", ScopeName(in.scope), "\",\"phase\":", in.phase);
  if (in.job >= 0) {
    out->append(",\"job\":");
    AppendJsonString(spec_.jobs(in.job).name(), out);
  }
  if (in.worker >= 0) {
    out->append(",\"host\":");
    AppendJsonString(workers_[in.worker], out);
  }
  absl::StrAppend(out, ",\"direction\":\"", DirectionName(d), "\",\"interval\":", in.index, ",\"start_unix_ns\":", in.start_unix_ns,
                  ",\"end_unix_ns\":", in.end_unix_ns, ",\"complete\":", in.complete ? "true" : "false",
                  ",\"amended\":", in.amended ? "true" : "false",
                  // When the controller published it: how long after the interval's end the cluster knew.
                  ",\"published_unix_ns\":", absl::ToUnixNanos(absl::Now()), ",\"workers_reporting\":", in.workers_reporting,
                  ",\"workers_expected\":", in.workers_expected, ",\"late_workers\":[");
  for (size_t i = 0; i < in.late_workers.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(workers_[in.late_workers[i]], out);
  }
  absl::StrAppend(out, "],\"ops\":", stats.ops(), ",\"bytes\":", stats.bytes(), ",\"errors\":", stats.errors());
  out->append(",\"iops\":");
  AppendFixed(static_cast<double>(stats.ops()) / seconds, 3, out);
  out->append(",\"bw_bytes\":");
  AppendFixed(static_cast<double>(stats.bytes()) / seconds, 3, out);
  absl::StrAppend(out, ",\"lat_ns\":{\"count\":", lat.count(), ",\"sum\":", lat.sum_ns(), ",\"mean\":", figures.mean);
  out->append(",\"stddev\":");
  AppendFixed(figures.stddev, 1, out);
  absl::StrAppend(out, ",\"p50\":", figures.p50, ",\"p90\":", figures.p90, ",\"p99\":", figures.p99, ",\"p99.9\":", figures.p999,
                  ",\"max\":", figures.max, "},\"slowest\":[");
  bool first = true;
  for (const v1::SlowRequest& r : stats.slowest()) {  // the interval's slowest requests, named
    absl::StrAppend(out, first ? "" : ",", "{\"lat_ns\":", r.latency_ns(), ",\"at_unix_ns\":", r.complete_unix_ns(), ",\"host\":");
    AppendJsonString(r.worker(), out);
    absl::StrAppend(out, ",\"thread\":", r.thread(), ",\"file\":");
    AppendJsonString(r.file(), out);
    absl::StrAppend(out, ",\"offset\":", r.offset(), "}");
    first = false;
  }
  out->append("],\"bins\":[");
  first = true;
  ForEachBucket(lat, [&](uint32_t index, uint64_t count) {
    // [lowest ns, highest ns, count]: the bucket's exact range, so readers need no layout.
    absl::StrAppend(out, first ? "" : ",", "[", HistogramLayout::BucketLower(index), ",", HistogramLayout::BucketUpper(index), ",", count, "]");
    first = false;
  });
  out->append("]}\n");
}

void LiveView::AppendCsvRow(const PublishedInterval& in, int d, const LatencyFigures& figures, std::string* out) const {
  const v1::DirectionStats& stats = in.directions[d];
  const double seconds = static_cast<double>(std::max<int64_t>(1, in.end_unix_ns - in.start_unix_ns)) / 1e9;
  absl::StrAppend(out, run_id_, ",", ScopeName(in.scope), ",", in.phase, ",");
  if (in.job >= 0) AppendCsvField(spec_.jobs(in.job).name(), out);
  out->push_back(',');
  if (in.worker >= 0) AppendCsvField(workers_[in.worker], out);
  absl::StrAppend(out, ",", DirectionName(d), ",", in.index, ",", in.start_unix_ns, ",", in.end_unix_ns, ",", in.complete ? 1 : 0, ",",
                  in.amended ? 1 : 0, ",", in.workers_reporting, ",", in.workers_expected, ",", stats.ops(), ",", stats.bytes(), ",",
                  stats.errors());
  out->push_back(',');
  AppendFixed(static_cast<double>(stats.ops()) / seconds, 3, out);
  out->push_back(',');
  AppendFixed(static_cast<double>(stats.bytes()) / seconds, 3, out);
  absl::StrAppend(out, ",", figures.mean, ",", figures.p50, ",", figures.p99, ",", figures.p999, ",", figures.max, ",", figures.p90, ",");
  AppendFixed(figures.stddev, 1, out);
  out->push_back('\n');
}

absl::Status LiveView::Start(RunAggregator* aggregator) {
  aggregator_ = aggregator;
  auto open = [](const std::string& path, std::FILE** file) -> absl::Status {
    if (path.empty()) return absl::OkStatus();
    *file = std::fopen(path.c_str(), "w");
    if (*file == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat("cannot write interval log ", path));
    return absl::OkStatus();
  };
  if (absl::Status s = open(options_.interval_log, &ndjson_); !s.ok()) return s;
  if (absl::Status s = open(options_.interval_csv, &csv_); !s.ok()) return s;
  if (csv_ != nullptr) std::fputs(CsvHeader(), csv_);
  if (!worker_lines_ && !options_.worker_lines.has_value() && (ndjson_ != nullptr || csv_ != nullptr) && options_.progress) {
    PrintLine(absl::StrCat("iofleet: ", workers_.size(), " workers: the interval logs hold the cluster's and the jobs' lines (--worker-intervals all: each worker's too)"));
  }
  if (options_.metrics != nullptr) {
    options_.metrics->Gauge("iofleet_cluster_run_info", "The run being measured (value 1)", {{"run", run_id_}, {"job_file", spec_.source()}}).Set(1);
    options_.metrics->Gauge("iofleet_cluster_workers_expected", "Workers in the run").Set(static_cast<double>(aggregator_->WorkerCount()));
  }
  // Workers' own intervals are written up as they arrive (TakeWorkerInterval), on the session's
  // thread; the loop publishes the cluster's and the jobs' as they fall due.
  aggregator_->ObserveWorkerIntervals([this](const PublishedInterval& in) { TakeWorkerInterval(in); });
  aggregator_->ObserveFullIntervals([this] {
    std::lock_guard<std::mutex> lock(wake_mu_);
    woken_ = true;
    wake_cv_.notify_one();
  });
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

prometheus::Labels LiveView::MetricLabels(const PublishedInterval& in, int d) const {
  return {{"run", run_id_}, {"job", spec_.jobs(std::max(in.job, 0)).name()}, {"direction", DirectionName(d)}};
}

void LiveView::TakeWorkerInterval(const PublishedInterval& in) {
  std::lock_guard<std::mutex> lock(worker_mu_);
  if (options_.fio_logs != nullptr) options_.fio_logs->Add(in);
  for (int d = 0; d < 5; ++d) {
    if (!HasActivity(in.directions[d])) continue;
    if (worker_lines_) AppendLogLines(in, d, ndjson_ != nullptr ? &worker_json_ : nullptr, csv_ != nullptr ? &worker_csv_ : nullptr);
    if (options_.metrics != nullptr) {
      // Counters from the worker scope, which is published once per worker and interval.
      const v1::DirectionStats& stats = in.directions[d];
      options_.metrics->Add(MetricLabels(in, d), stats.ops(), stats.bytes(), stats.errors(), stats.latency());
    }
  }
  std::vector<double>& by_worker = worker_ops_[{in.phase, in.index}];
  if (by_worker.empty()) by_worker.assign(workers_.size(), -1);
  if (in.worker < 0 || static_cast<size_t>(in.worker) >= by_worker.size()) return;
  double& ops = by_worker[in.worker];
  ops = std::max(ops, 0.0);
  for (const v1::DirectionStats& s : in.directions) ops += static_cast<double>(s.ops());
}

void LiveView::Loop() {
  // The tick publishes amendments and refreshes the progress line; an interval is published
  // when its last worker's report is in (woken_), or the moment its grace ends.
  const int64_t tick_ns = absl::ToInt64Nanoseconds(std::min(options_.interval / 4, absl::Milliseconds(250)));
  const int64_t grace_ns = absl::ToInt64Nanoseconds(options_.grace);
  std::unique_lock<std::mutex> lock(wake_mu_);
  while (!finishing_) {
    woken_ = false;
    lock.unlock();
    const int64_t now = NowUnixNs();
    Publish(now, grace_ns);
    const int64_t next = std::min(now + tick_ns, aggregator_->NextGraceEndUnixNs());
    lock.lock();
    const int64_t wait_ns = std::max<int64_t>(next - NowUnixNs(), 1'000'000);  // (a grace end just passed: 1 ms)
    wake_cv_.wait_for(lock, std::chrono::nanoseconds(wait_ns), [this] { return woken_ || finishing_; });
  }
}

absl::Status LiveView::Finish() {
  if (aggregator_ == nullptr) return absl::OkStatus();
  aggregator_->ObserveFullIntervals(nullptr);
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    finishing_ = true;
  }
  wake_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Whatever is still pending: the run is over, nothing more will come (a report after this
  // waits in the aggregator, unwritten, as one after the logs are closed would).
  aggregator_->ObserveWorkerIntervals(nullptr);
  Publish(INT64_MAX / 2, 0);
  {
    std::lock_guard<std::mutex> lock(stderr_mu_);
    if (line_open_) std::cerr << "\n";
    line_open_ = false;
  }
  absl::Status status;
  for (std::FILE** file : {&ndjson_, &csv_}) {
    if (*file != nullptr && std::fclose(*file) != 0 && status.ok()) status = absl::ErrnoToStatus(errno, "closing an interval log");
    *file = nullptr;
  }
  aggregator_ = nullptr;
  return status;
}

void LiveView::SetPhaseSteps(int job, uint64_t steps) {
  std::lock_guard<std::mutex> lock(steps_mu_);
  phase_steps_[job] = steps;
}

void LiveView::AppendLogLine(std::string line) {
  if (options_.interval_log.empty()) return;
  std::lock_guard<std::mutex> lock(extra_mu_);
  extra_lines_ += line;
}

void LiveView::PrintLine(const std::string& text) {
  std::lock_guard<std::mutex> lock(stderr_mu_);
  std::cerr << (line_open_ ? "\n" : "") << text << "\n";
  line_open_ = false;
}

void LiveView::Publish(int64_t now_unix_ns, int64_t grace_ns) {
  std::vector<PublishedInterval>& due = due_;
  due.clear();
  aggregator_->TakeDue(now_unix_ns, grace_ns, &due);
  // The progress line follows the newest phase that did something: the phases of a sequence
  // (RunSpec.jobs_in_sequence) share one start, and those not begun yet report empty intervals
  // beside the running one's (the line showed the last phase of the sequence, 0%).
  const PublishedInterval* newest_cluster = nullptr;
  const PublishedInterval* newest_active = nullptr;
  for (const PublishedInterval& in : due) {
    if (in.scope == PublishedInterval::Scope::kWorker) {  // (one that came while no observer was set)
      TakeWorkerInterval(in);
      continue;
    }
    for (int d = 0; d < 5; ++d) {
      if (!HasActivity(in.directions[d])) continue;
      AppendLogLines(in, d, ndjson_ != nullptr ? &json_lines_ : nullptr, csv_ != nullptr ? &csv_rows_ : nullptr);
    }
    if (options_.metrics != nullptr) {
      for (int d = 0; d < 5; ++d) {
        if (!HasActivity(in.directions[d])) continue;
        const prometheus::Labels labels = MetricLabels(in, d);
        const v1::DirectionStats& stats = in.directions[d];
        if (in.scope == PublishedInterval::Scope::kJob && !in.amended) {
          options_.metrics->SetQueueDepth(labels, stats.latency(), static_cast<double>(std::max<int64_t>(1, in.end_unix_ns - in.start_unix_ns)) / 1e9);
        }
      }
      if (in.scope == PublishedInterval::Scope::kCluster && !in.amended) {
        options_.metrics->Gauge("iofleet_cluster_workers_reporting", "Workers whose report for the latest interval is in")
            .Set(in.workers_reporting);
      }
    }
    if (in.scope == PublishedInterval::Scope::kJob && in.amended) {
      PrintLine(absl::StrCat("iofleet: interval ", in.index, " of job '", spec_.jobs(in.job).name(), "' amended: a late report arrived (",
                             in.workers_reporting, " of ", in.workers_expected, " workers now in)"));
    }
    if (in.scope == PublishedInterval::Scope::kCluster && !in.amended) {
      newest_cluster = &in;
      if (std::any_of(in.directions.begin(), in.directions.end(), [](const v1::DirectionStats& d) { return HasActivity(d); })) {
        newest_active = &in;
        phase_first_active_.emplace(in.phase, in.start_unix_ns);
      }
    }
  }
  if (newest_active != nullptr) newest_cluster = newest_active;
  {
    // The workers' lines written up since the last time, after the cluster's and the jobs'.
    std::lock_guard<std::mutex> lock(worker_mu_);
    json_lines_ += worker_json_;
    csv_rows_ += worker_csv_;
    worker_json_.clear();  // (their capacity stays)
    worker_csv_.clear();
  }
  if (ndjson_ != nullptr) {
    std::lock_guard<std::mutex> lock(extra_mu_);
    json_lines_ += extra_lines_;
    extra_lines_.clear();
  }
  // Whole lines, written at once: a reader (tail -f) never sees half a line.
  for (auto [file, lines] : {std::pair{ndjson_, &json_lines_}, std::pair{csv_, &csv_rows_}}) {
    if (file == nullptr) continue;
    std::fwrite(lines->data(), 1, lines->size(), file);
    std::fflush(file);
    lines->clear();  // (its capacity stays)
  }
  if (!options_.progress || newest_cluster == nullptr || now_unix_ns > INT64_MAX / 4) return;
  const std::pair<uint32_t, uint32_t> newest{newest_cluster->phase, newest_cluster->index};
  {
    std::lock_guard<std::mutex> lock(worker_mu_);
    last_worker_ops_ = std::move(worker_ops_[newest]);
    worker_ops_.erase(worker_ops_.begin(), worker_ops_.upper_bound(newest));
  }
  const std::string line = ProgressLine(*newest_cluster, now_unix_ns);
  std::lock_guard<std::mutex> lock(stderr_mu_);
  if (tty_) {
    std::cerr << "\r\033[K" << line << std::flush;
    line_open_ = true;
  } else if (absl::Now() - last_plain_line_ >= std::max(options_.interval, absl::Seconds(5)) || !newest_cluster->complete ||
             newest_cluster->phase != last_plain_phase_) {
    // Logs (CI): a plain line now and then, not one per interval — and at once when a worker
    // is late, which is when someone reading the log wants to know, or a new phase began.
    std::cerr << line << "\n";
    last_plain_line_ = absl::Now();
    last_plain_phase_ = newest_cluster->phase;
  }
}

std::string LiveView::ProgressLine(const PublishedInterval& cluster, int64_t now_unix_ns) const {
  // Intervals count from the phase's start instant.
  const int64_t phase_start = cluster.start_unix_ns - static_cast<int64_t>(cluster.index) * absl::ToInt64Nanoseconds(options_.interval);
  // Progress of the phase: its slowest job (the phase ends when that one does).
  double fraction = 1;
  for (int j = 0; j < spec_.jobs_size(); ++j) {
    if (phases_.phase_of[j] != cluster.phase) continue;
    const v1::JobSpec& job = spec_.jobs(j);
    double f;
    if (job.has_metadata()) {
      // mdtest phases: operations done of the phase's total, or time of the stonewall (-W).
      uint64_t steps = MdtestTree(job.metadata()).PhaseSteps();
      {
        std::lock_guard<std::mutex> lock(steps_mu_);
        if (auto it = phase_steps_.find(j); it != phase_steps_.end()) steps = it->second;
      }
      f = steps > 0 ? static_cast<double>(aggregator_->DoneSoFar(j).ops) / static_cast<double>(steps) : 1;
      if (job.metadata().stonewall_ns() > 0) {
        f = std::max(f, static_cast<double>(now_unix_ns - phase_start) / static_cast<double>(job.metadata().stonewall_ns()));
      }
    } else if (job.runtime_ns() > 0) {
      f = static_cast<double>(now_unix_ns - phase_start) / static_cast<double>(job.runtime_ns() + job.ramp_time_ns() + job.startdelay_ns());
    } else {
      const double total = static_cast<double>(job.io_size() ? job.io_size() : job.size()) * std::max(1u, job.numjobs()) *
                           static_cast<double>(aggregator_->WorkerCount()) * std::max(1u, job.loops());
      f = total > 0 ? static_cast<double>(aggregator_->DoneSoFar(j).bytes) / total : 1;
    }
    fraction = std::min(fraction, std::clamp(f, 0.0, 1.0));
  }
  // An mdtest phase counts from its first interval with activity: in a sequence it began when
  // the phase before it ended, not at the start instant all of them share.
  int64_t counted_from = phase_start;
  if (spec_.jobs_size() > 0 && spec_.jobs(0).has_metadata()) {
    if (auto it = phase_first_active_.find(cluster.phase); it != phase_first_active_.end()) counted_from = std::max(phase_start, it->second);
  }
  const double elapsed = static_cast<double>(now_unix_ns - counted_from) / 1e9;
  std::string line = absl::StrFormat("iofleet: %.1fs", elapsed);
  if (phases_.phases > 1) {
    absl::StrAppend(&line, absl::StrFormat(" phase %d/%d", cluster.phase + 1, phases_.phases));
    std::vector<std::string> names;  // the phase's jobs, e.g. "File creation" in mdtest
    for (int j = 0; j < spec_.jobs_size(); ++j) {
      if (phases_.phase_of[j] == cluster.phase) names.push_back(spec_.jobs(j).name());
    }
    if (names.size() <= 3) absl::StrAppend(&line, " (", absl::StrJoin(names, ", "), ")");
  }
  absl::StrAppend(&line, absl::StrFormat(" %3.0f%%", fraction * 100));
  if (fraction > 0.01 && fraction < 1) absl::StrAppend(&line, absl::StrFormat(" ETA %.0fs", elapsed * (1 - fraction) / fraction));
  const double seconds = static_cast<double>(std::max<int64_t>(1, cluster.end_unix_ns - cluster.start_unix_ns)) / 1e9;
  for (int d = 0; d < 5; ++d) {
    const v1::DirectionStats& stats = cluster.directions[d];
    if (!HasActivity(stats)) continue;
    absl::StrAppend(&line, " | ", DirectionName(d), " ", FormatCount(static_cast<double>(stats.ops()) / seconds), d == 4 ? " ops/s" : " IOPS");
    if (stats.bytes() > 0) absl::StrAppend(&line, " ", FormatBytes(static_cast<double>(stats.bytes()) / seconds), "/s");
    if (stats.latency().count() > 0) {  // none when the jobs do not measure it (disable_lat)
      absl::StrAppend(&line, " p99 ", FormatDurationNs(static_cast<double>(PercentileValue(SummarizeDirection(stats, 0, false, {99}).latency(), 99))));
    }
  }
  absl::StrAppend(&line, " | workers ", cluster.workers_reporting, "/", aggregator_->WorkerCount());  // (behind relays: theirs)
  // Stragglers: well below the median throughput in this interval, or late.
  std::vector<std::pair<double, int>> rates;  // all jobs of the phase
  for (size_t w = 0; w < last_worker_ops_.size(); ++w) {
    if (last_worker_ops_[w] >= 0) rates.push_back({last_worker_ops_[w], static_cast<int>(w)});
  }
  std::vector<std::string> stragglers;
  // A run's last interval is a stub (workers end within it at slightly different instants):
  // its rates say nothing about speed.
  const bool whole_interval = cluster.end_unix_ns - cluster.start_unix_ns >= absl::ToInt64Nanoseconds(options_.interval) / 2;
  if (rates.size() >= 2 && whole_interval) {
    std::vector<double> sorted;
    for (const auto& r : rates) sorted.push_back(r.first);
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    for (const auto& [ops, w] : rates) {
      if (median > 0 && ops < (1 - options_.straggler_fraction) * median) {
        stragglers.push_back(absl::StrFormat("%s (%.0f%% below median)", workers_[w], 100 * (1 - ops / median)));
      }
    }
  }
  for (size_t w : cluster.late_workers) stragglers.push_back(absl::StrCat(workers_[w], " (late)"));
  if (!stragglers.empty()) absl::StrAppend(&line, " | stragglers: ", absl::StrJoin(stragglers, ", "));
  return line;
}

}  // namespace iofleet
