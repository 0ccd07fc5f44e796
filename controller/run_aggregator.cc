#include "controller/run_aggregator.h"

#include "controller/block_stages.h"
#include "controller/host_profiles.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "histogram/latency_histogram.h"
#include "job/block_sizes.h"
#include "job/fio_job_file.h"

namespace iofleet {
namespace {

// Problems about malformed histograms named in the report; the rest are counted.
constexpr size_t kMalformedNamed = 10;

}  // namespace

RunAggregator::RunAggregator(v1::RunSpec spec, std::vector<std::string> workers)
    : spec_(std::move(spec)), phases_(SplitIntoPhases(spec_)), workers_(std::move(workers)) {
  per_job_worker_.assign(spec_.jobs_size(), std::vector<WorkerJob>(workers_.size()));
  job_slowest_.assign(spec_.jobs_size(), DirectionTotals{});
  per_job_intervals_.resize(spec_.jobs_size());
  per_phase_intervals_.resize(phases_.phases);
  job_start_unix_ns_.assign(spec_.jobs_size(), 0);
}

void RunAggregator::SetRelayedWorkers(std::vector<uint32_t> relayed) {
  std::lock_guard<std::mutex> lock(mu_);
  relayed_ = std::move(relayed);
}

void RunAggregator::MarkStarted(size_t job, int64_t start_unix_ns) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (job >= job_start_unix_ns_.size()) return;
    job_start_unix_ns_[job] = start_unix_ns;
  }
  if (phase_observer_.started) phase_observer_.started(phases_.phase_of[job], start_unix_ns);
}

void RunAggregator::AddTotals(const Totals& from, Totals* into) {
  for (int d = 0; d < kDirectionCount; ++d) {
    if (HasActivity(from.directions[d])) AddDirectionStats(from.directions[d], &into->directions[d]);
  }
}

void RunAggregator::AddDirections(const v1::IntervalReport& report, Totals* totals, DirectionTotals* job_slowest) {
  for (const v1::DirectionStats& stats : report.directions()) {
    const int index = static_cast<int>(stats.direction()) - 1;
    if (index < 0 || index >= kDirectionCount) continue;  // a direction from a newer worker
    AddDirectionStats(stats, &totals->directions[index], SlowestRequests::kLeftOut);
    AddSlowest(stats, &(*job_slowest)[index]);
  }
}

void RunAggregator::FoldSums(ClusterInterval& interval) {
  for (int d = 0; d < kDirectionCount; ++d) {
    if (interval.sums[d].empty()) continue;
    interval.sums[d].AddTo(&interval.totals.directions[d]);
    interval.sums[d] = DirectionSum();
  }
}

DirectionTotals RunAggregator::TotalsWithSums(const ClusterInterval& interval) {
  DirectionTotals totals = interval.totals.directions;
  for (int d = 0; d < kDirectionCount; ++d) interval.sums[d].AddTo(&totals[d]);
  return totals;
}

void RunAggregator::Add(size_t worker_index, std::vector<v1::IntervalReport> reports) {
  std::lock_guard<std::mutex> lock(mu_);
  bool full = false;  // a job interval now has every worker's report
  for (v1::IntervalReport& report : reports) full |= AddLocked(worker_index, std::move(report));
  if (full && full_observer_) full_observer_();
}

void RunAggregator::AddBlockDevicesLocked(size_t worker_index, const v1::IntervalReport& report) {
  // At most this many host/device records over a run (a host has a handful of devices).
  constexpr int kMaxBlockDevices = 65536;
  const uint32_t phase = phases_.phase_of[report.job_index()];
  v1::BlockStagesInterval& interval = block_intervals_[{phase, report.interval_index()}];
  if (interval.directions_size() == 0) {
    interval.set_phase(phase);
    interval.set_index(report.interval_index());
    interval.set_start_unix_ns(report.start_unix_ns());
  }
  interval.set_start_unix_ns(std::min(interval.start_unix_ns(), report.start_unix_ns()));
  interval.set_end_unix_ns(std::max(interval.end_unix_ns(), report.end_unix_ns()));
  for (const v1::BlockDeviceStages& device : report.block_devices()) {
    if (absl::Status valid = ValidateBlockDevice(device); !valid.ok()) {
      if (++malformed_histograms_ <= kMalformedNamed) {
        malformed_problems_.push_back(absl::StrCat("worker ", workers_[worker_index], " sent a malformed block-stage record: ", valid.message(), "; left out"));
      }
      continue;
    }
    if (block_devices_.size() >= kMaxBlockDevices) break;
    MergeBlockDevice(device, &block_devices_);
    MergeBlockDirections(device.directions(), interval.mutable_directions());
  }
}

bool RunAggregator::AddLocked(size_t worker_index, v1::IntervalReport report) {
  if (report.job_index() >= per_job_worker_.size() || worker_index >= workers_.size()) return false;
  // Malformed histograms are left out and named among the report's problems; slow requests name
  // their worker from here on.
  CheckReportFromWire(workers_[worker_index], [&](const v1::DirectionStats& stats, const char* what, const absl::Status& why) {
    if (++malformed_histograms_ > kMalformedNamed) return;
    malformed_problems_.push_back(absl::StrCat(
        "worker ", workers_[worker_index], " sent a malformed ", what, " histogram (job ", spec_.jobs(report.job_index()).name(),
        ", interval ", report.interval_index(), ", direction ", DirectionName(static_cast<int>(stats.direction()) - 1), "): ",
        why.message(), "; its latencies are left out of the results, its operation and byte counts are kept"));
  }, &report);
  if (report.block_devices_size() > 0) AddBlockDevicesLocked(worker_index, report);
  for (const v1::HostProfile& profile : report.profiles()) {
    if (absl::Status valid = ValidateHostProfile(profile); !valid.ok()) {
      if (++malformed_histograms_ <= kMalformedNamed) malformed_problems_.push_back(absl::StrCat("worker ", workers_[worker_index], " sent ", valid.message(), "; left out"));
    } else if (profiles_.size() < 4096) {
      *profiles_.Add() = profile;
    }
  }
  WorkerJob& worker_job = per_job_worker_[report.job_index()][worker_index];
  AddDirections(report, &worker_job.totals, &job_slowest_[report.job_index()]);
  worker_job.last_end_unix_ns = std::max(worker_job.last_end_unix_ns, report.end_unix_ns());
  if (report.final()) {
    worker_job.final = true;
    worker_job.elapsed_ns = report.elapsed_ns();
    worker_job.error = report.error();
    worker_job.stop_reason = report.stop_reason();
    worker_job.stop_cause = report.stop_cause();
    worker_job.notes.assign(report.notes().begin(), report.notes().end());
    worker_job.cpu_user_ns = report.cpu_user_ns();
    worker_job.cpu_system_ns = report.cpu_system_ns();
    worker_job.context_switches = report.context_switches();
    worker_job.depth_counts.assign(report.depth_counts().begin(), report.depth_counts().end());
    worker_job.task_items.assign(report.task_items().begin(), report.task_items().end());
    worker_job.task_elapsed_ns.assign(report.task_elapsed_ns().begin(), report.task_elapsed_ns().end());
    worker_job.item_failures = report.item_failures();
    // (A worker names at most 100 a task; kept within bounds whatever it sends.)
    auto keep = [](const google::protobuf::RepeatedPtrField<std::string>& lines, std::vector<std::string>* out) {
      out->assign(lines.begin(), lines.begin() + std::min<int>(lines.size(), static_cast<int>(kMdtestNamedFailuresPerWorker)));
    };
    keep(report.item_warnings(), &worker_job.item_warnings);
    keep(report.iteration_directories_gone(), &worker_job.iteration_directories_gone);
    keep(report.iteration_directories_left(), &worker_job.iteration_directories_left);
    worker_job.stonewalled = report.stonewalled();
    worker_job.start_late_ns = report.start_late_ns();
    worker_job.earliest_start_late_ns = report.earliest_start_late_ns();
    worker_job.submit_counts.assign(report.submit_counts().begin(), report.submit_counts().end());
    worker_job.complete_counts.assign(report.complete_counts().begin(), report.complete_counts().end());
  }
  ClusterInterval& interval = per_job_intervals_[report.job_index()][report.interval_index()];
  for (const v1::DirectionStats& stats : report.directions()) {
    const int index = static_cast<int>(stats.direction()) - 1;
    if (index >= 0 && index < kDirectionCount) interval.sums[index].Add(stats);
  }
  if (interval.workers.empty()) {
    interval.start_unix_ns = report.start_unix_ns();
    interval.end_unix_ns = report.end_unix_ns();
  } else {
    interval.start_unix_ns = std::min(interval.start_unix_ns, report.start_unix_ns());
    interval.end_unix_ns = std::max(interval.end_unix_ns, report.end_unix_ns());
  }
  // A report with nothing in it for an interval this worker already reported (a relay's final,
  // after its workers' last intervals) changes nothing.
  const bool first_of_worker = interval.workers.insert(worker_index);
  const bool adds = first_of_worker || report.directions_size() > 0;
  interval.additions += adds;
  if (worker_index >= interval.by_worker.size()) interval.by_worker.resize(workers_.size());
  WorkerInterval& by_worker = interval.by_worker[worker_index];
  for (const v1::DirectionStats& stats : report.directions()) {
    by_worker.ops += stats.ops();
    by_worker.bytes += stats.bytes();
  }
  // The workers' reports it carries (behind a relay, those of the interval's that it sent up
  // late come in further reports of the interval).
  interval.reports_owed_in -= by_worker.reports.expected();
  const uint32_t carried = by_worker.reports.Add(report, worker_index < relayed_.size() ? relayed_[worker_index] : 0);
  interval.reports_in += carried;
  interval.reports_owed_in += by_worker.reports.expected();
  // The phase-wide view of the same span: all jobs of the phase, all workers. (Its totals are
  // its jobs' intervals merged when it is published: a few merges a second, not one per report
  // into the same few histograms.)
  ClusterInterval& phase_interval = per_phase_intervals_[phases_.phase_of[report.job_index()]][report.interval_index()];
  if (phase_interval.start_unix_ns == 0 || report.start_unix_ns() < phase_interval.start_unix_ns) {
    phase_interval.start_unix_ns = report.start_unix_ns();
  }
  phase_interval.end_unix_ns = std::max(phase_interval.end_unix_ns, report.end_unix_ns());
  phase_interval.workers.insert(worker_index);
  phase_interval.additions += adds;
  // The report is this worker's interval of the job: published as it is, once, to the observer
  // now or at the next TakeDue (not kept: a thousand workers' intervals with histograms are
  // gigabytes by the end).
  PublishedInterval observed;
  PublishedInterval& own = worker_observer_ ? observed : worker_intervals_.emplace_back();
  own.scope = PublishedInterval::Scope::kWorker;
  own.job = static_cast<int>(report.job_index());
  own.phase = phases_.phase_of[report.job_index()];
  own.worker = static_cast<int>(worker_index);
  own.index = report.interval_index();
  own.start_unix_ns = report.start_unix_ns();
  own.end_unix_ns = report.end_unix_ns();
  own.workers_reporting = own.workers_expected = 1;
  for (v1::DirectionStats& stats : *report.mutable_directions()) {
    const int index = static_cast<int>(stats.direction()) - 1;
    if (index >= 0 && index < kDirectionCount) own.directions[index] = std::move(stats);
  }
  if (worker_observer_) worker_observer_(own);
  // (Full now, by this report's workers: a repeat, or a relay's empty final, fills nothing.)
  return carried > 0 && interval.workers.size() == workers_.size() && interval.reports_in >= interval.reports_owed_in;
}

bool RunAggregator::Expected(size_t job, size_t w, const ClusterInterval& interval) const {
  const WorkerJob& worker_job = per_job_worker_[job][w];
  return !(worker_job.final && worker_job.last_end_unix_ns <= interval.start_unix_ns);
}

RunAggregator::Done RunAggregator::DoneSoFar(size_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  Done done;
  if (job >= per_job_worker_.size()) return done;
  for (const WorkerJob& w : per_job_worker_[job]) {
    for (const v1::DirectionStats& d : w.totals.directions) {
      done.bytes += d.bytes();
      done.ops += d.ops();
    }
  }
  return done;
}

std::optional<PublishedInterval> RunAggregator::Due(ClusterInterval& interval, size_t reports, size_t expected_reports, size_t additions,
                                                   int64_t now_unix_ns, int64_t grace_ns, int64_t* next_grace_end) {
  const bool complete = reports >= expected_reports;
  const int64_t grace_end = interval.end_unix_ns + grace_ns;
  const bool fresh = interval.published_reports == 0 && (complete || grace_end <= now_unix_ns);
  const bool amended = interval.published_reports > 0 && additions > interval.published_reports;
  if (!fresh && !amended) {
    if (interval.published_reports == 0) *next_grace_end = std::min(*next_grace_end, grace_end);
    return std::nullopt;
  }
  interval.published_reports = additions;
  PublishedInterval published;
  published.start_unix_ns = interval.start_unix_ns;
  published.end_unix_ns = interval.end_unix_ns;
  published.complete = complete;
  published.amended = amended;
  published.workers_reporting = static_cast<uint32_t>(interval.workers.size());
  published.directions = interval.totals.directions;
  return published;
}

void RunAggregator::TakeDue(int64_t now_unix_ns, int64_t grace_ns, std::vector<PublishedInterval>* due) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PublishedInterval>& out = *due;
  const size_t first = out.size();
  int64_t next_grace_end = INT64_MAX;  // of the intervals still waiting for reports
  // The phase view is counted in reports (one per worker and job), so it is complete when
  // every job's view is.
  std::vector<std::map<uint32_t, std::pair<size_t, size_t>>> phase_counts(phases_.phases);  // [phase][index] -> (in, expected)
  std::vector<std::map<uint32_t, std::vector<size_t>>> phase_late(phases_.phases);
  for (size_t j = 0; j < per_job_intervals_.size(); ++j) {
    const uint32_t phase = phases_.phase_of[j];
    for (auto& [index, interval] : per_job_intervals_[j]) {
      // Published with every expected report in, and none since: nothing about it can change
      // (a worker not expected has ended the job before the interval), so it is not looked at
      // again — TakeDue runs several times a second over every interval of a long run.
      if (interval.settled && interval.additions == interval.published_reports) {
        auto& counts = phase_counts[phase][index];  // every expected report in: as many as are in
        counts.first += interval.reports_in;
        counts.second += interval.reports_in;
        continue;
      }
      // Counted in workers' reports: a session that has not reported owes its workers' (a
      // relay's, all of them), one that has owes what it said it would.
      std::vector<size_t> late;
      size_t expected = interval.reports_owed_in;
      for (size_t w = 0; w < workers_.size(); ++w) {
        if (interval.workers.count(w) != 0 || !Expected(j, w, interval)) continue;
        expected += Weight(w);
        late.push_back(w);
      }
      auto& counts = phase_counts[phase][index];
      counts.first += interval.reports_in;
      counts.second += expected;
      for (size_t w : late) {
        auto& l = phase_late[phase][index];
        if (std::find(l.begin(), l.end(), w) == l.end()) l.push_back(w);
      }
      // (Folded on every look, published or not: the phases' publication below reads every
      // job interval's totals.)
      FoldSums(interval);
      std::optional<PublishedInterval> published =
          Due(interval, interval.reports_in, expected, interval.additions, now_unix_ns, grace_ns, &next_grace_end);
      if (!published) continue;
      published->scope = PublishedInterval::Scope::kJob;
      published->job = static_cast<int>(j);
      published->phase = phase;
      published->index = index;
      published->workers_reporting = static_cast<uint32_t>(interval.reports_in);
      published->workers_expected = static_cast<uint32_t>(expected);
      published->late_workers = late;
      interval.settled = published->complete;
      out.push_back(*std::move(published));
    }
  }
  for (uint32_t phase = 0; phase < phases_.phases; ++phase) {
    for (auto& [index, interval] : per_phase_intervals_[phase]) {
      const auto [in, expected] = phase_counts[phase][index];
      std::optional<PublishedInterval> published = Due(interval, in, expected, interval.additions, now_unix_ns, grace_ns, &next_grace_end);
      if (!published) continue;
      // Workers, not sessions: one is reporting when it reported any of the phase's jobs; behind
      // a relay (which counts each job apart) as many as for the job with the most.
      Totals totals;
      std::vector<std::pair<uint32_t, uint32_t>> by_session(workers_.size());  // (reporting, expected)
      for (size_t j = 0; j < per_job_intervals_.size(); ++j) {
        if (phases_.phase_of[j] != phase) continue;
        auto job_interval = per_job_intervals_[j].find(index);
        if (job_interval == per_job_intervals_[j].end()) continue;
        AddTotals(job_interval->second.totals, &totals);
        const std::vector<WorkerInterval>& sessions = job_interval->second.by_worker;
        for (size_t w = 0; w < sessions.size(); ++w) {
          if (!sessions[w].reports.in) continue;
          by_session[w].first = std::max(by_session[w].first, sessions[w].reports.carried);
          by_session[w].second = std::max(by_session[w].second, sessions[w].reports.expected());
        }
      }
      published->directions = std::move(totals.directions);
      published->scope = PublishedInterval::Scope::kCluster;
      published->phase = phase;
      published->index = index;
      published->late_workers = phase_late[phase][index];
      uint64_t workers_in = 0, workers_owed = 0;
      for (const auto& [reporting, owed] : by_session) {
        workers_in += reporting;
        workers_owed += owed;
      }
      // (Late for one job but in for another: counted once.)
      for (size_t w : published->late_workers) workers_owed += interval.workers.count(w) == 0 ? Weight(w) : 0;
      published->workers_reporting = static_cast<uint32_t>(workers_in);
      published->workers_expected = static_cast<uint32_t>(workers_owed);
      out.push_back(*std::move(published));
    }
  }
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(), [](const PublishedInterval& a, const PublishedInterval& b) {
    return std::tie(a.phase, a.index) < std::tie(b.phase, b.index);
  });
  // The workers' own, in the order they came (each worker's in order): thousands a second,
  // not worth sorting.
  out.reserve(out.size() + worker_intervals_.size());
  for (PublishedInterval& own : worker_intervals_) out.push_back(std::move(own));
  worker_intervals_.clear();  // (its capacity stays)
  next_grace_end_unix_ns_ = next_grace_end;
}

template <typename T>
std::vector<T> RunAggregator::PerTask(size_t job, std::vector<T> WorkerJob::*field) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<T> values;
  if (job >= per_job_worker_.size()) return values;
  for (const WorkerJob& w : per_job_worker_[job]) values.insert(values.end(), (w.*field).begin(), (w.*field).end());
  return values;
}

std::vector<uint64_t> RunAggregator::TaskItems(size_t job) const { return PerTask(job, &WorkerJob::task_items); }
std::vector<uint64_t> RunAggregator::TaskElapsedNs(size_t job) const { return PerTask(job, &WorkerJob::task_elapsed_ns); }

uint64_t RunAggregator::ItemFailures(size_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t failures = 0;
  if (job < per_job_worker_.size()) {
    for (const WorkerJob& w : per_job_worker_[job]) failures += w.item_failures;
  }
  return failures;
}

std::vector<std::string> RunAggregator::ItemWarnings(size_t job) const { return PerTask(job, &WorkerJob::item_warnings); }

std::vector<std::string> RunAggregator::IterationDirectoriesLeft(size_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> gone;
  std::vector<std::string> left;
  if (job < per_job_worker_.size()) {
    for (const WorkerJob& w : per_job_worker_[job]) gone.insert(w.iteration_directories_gone.begin(), w.iteration_directories_gone.end());
    for (const WorkerJob& w : per_job_worker_[job]) {
      for (const std::string& path : w.iteration_directories_left) {
        if (gone.count(path) == 0 && std::find(left.begin(), left.end(), path) == left.end()) left.push_back(path);
      }
    }
  }
  return left;
}

bool RunAggregator::Stonewalled(size_t job) const {
  std::lock_guard<std::mutex> lock(mu_);
  bool any = false;
  if (job < per_job_worker_.size()) {
    for (const WorkerJob& w : per_job_worker_[job]) any |= w.stonewalled;
  }
  return any;
}

int64_t RunAggregator::LastReportUnixNs(size_t worker_index) const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t last = 0;
  for (const auto& job_workers : per_job_worker_) {
    if (worker_index < job_workers.size()) last = std::max(last, job_workers[worker_index].last_end_unix_ns);
  }
  return last;
}

std::optional<int64_t> RunAggregator::StartLateNs(size_t worker_index, const std::vector<size_t>& jobs) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<int64_t> late;
  for (size_t job : jobs) {
    if (job >= per_job_worker_.size() || worker_index >= per_job_worker_[job].size()) continue;
    const WorkerJob& w = per_job_worker_[job][worker_index];
    if (w.final) late = std::max(late.value_or(w.start_late_ns), w.start_late_ns);
  }
  return late;
}

bool RunAggregator::WorkerComplete(size_t worker_index) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t j = 0; j < per_job_worker_.size(); ++j) {
    if (job_start_unix_ns_[j] != 0 && !per_job_worker_[j][worker_index].final) return false;
  }
  return true;
}

void RunAggregator::FillReport(v1::RunReport* report) const {
  std::lock_guard<std::mutex> lock(mu_);
  report->clear_block_devices();
  report->clear_block_intervals();
  for (const v1::BlockDeviceStages& device : block_devices_) *report->add_block_devices() = device;
  std::sort(report->mutable_block_devices()->begin(), report->mutable_block_devices()->end(),
            [](const auto& a, const auto& b) { return std::tie(a.host(), a.device()) < std::tie(b.host(), b.device()); });
  for (const auto& [key, interval] : block_intervals_) {
    if (interval.directions_size() > 0) *report->add_block_intervals() = interval;
  }
  // What the workers on `host` did in `jobs`: fn(their totals of one job), for the profiles' and
  // the block devices' application side.
  auto for_each_on_host = [&](const std::string& host, const google::protobuf::RepeatedField<uint32_t>& jobs, const auto& fn) {
    for (uint32_t j : jobs) {
      if (j >= per_job_worker_.size()) continue;
      for (size_t w = 0; w < per_job_worker_[j].size() && w < static_cast<size_t>(report->workers_size()); ++w) {
        if (report->workers(static_cast<int>(w)).hostname() == host) fn(per_job_worker_[j][w].totals.directions);
      }
    }
  };
  // --profile: each host's profile with the operations its workers completed in its jobs
  // (counters per IO).
  *report->mutable_profiles() = profiles_;
  for (v1::HostProfile& profile : *report->mutable_profiles()) {
    uint64_t operations = 0;
    for_each_on_host(profile.host(), profile.jobs(), [&](const DirectionTotals& totals) {
      for (size_t d = 0; d < 3; ++d) operations += totals[d].ops();  // read, write, trim
      operations += totals[4].ops();                                  // metadata operations
    });
    profile.set_operations(operations);
  }
  // Beside each device's stages, the application's view on that host: the jobs on the device,
  // their workers there.
  for (v1::BlockDeviceStages& device : *report->mutable_block_devices()) {
    for (v1::BlockStageDirection& d : *device.mutable_directions()) {
      const size_t index = d.direction() == "read" ? 0 : d.direction() == "write" ? 1 : d.direction() == "trim" ? 2 : 3;  // flush: fio's sync
      for_each_on_host(device.host(), device.jobs(), [&](const DirectionTotals& totals) {
        d.set_application_ops(d.application_ops() + totals[index].ops());
        d.set_application_bytes(d.application_bytes() + totals[index].bytes());
        MergeHistogramProto(totals[index].latency(), d.mutable_application_latency());
      });
    }
  }
  DirectionTotals cluster;
  std::vector<uint64_t> phase_elapsed(phases_.phases, 0);
  std::vector<Totals> group_totals(phases_.groups);
  std::vector<std::vector<Totals>> group_worker_totals(phases_.groups, std::vector<Totals>(workers_.size()));
  std::vector<uint64_t> group_elapsed(phases_.groups, 0);
  std::vector<std::vector<uint64_t>> group_worker_elapsed(phases_.groups, std::vector<uint64_t>(workers_.size(), 0));
  for (int j = 0; j < spec_.jobs_size(); ++j) {
    const v1::JobSpec& spec = spec_.jobs(j);
    v1::JobResult* job = report->add_jobs();
    job->set_name(spec.name());
    job->set_rw(ReadWriteName(spec.rw()));
    job->set_bs(DescribeBlockSizes(spec));
    job->set_ioengine(spec.ioengine());
    job->set_numjobs(spec.numjobs());
    job->set_iodepth(spec.iodepth());
    job->set_group(phases_.group_of[j]);
    job->set_phase(phases_.phase_of[j]);
    job->set_clat_percentiles(spec.clat_percentiles());
    job->set_lat_percentiles(spec.lat_percentiles());
    const std::vector<double> percentiles = spec.percentile_list().empty()
                                                ? DefaultPercentiles()
                                                : std::vector<double>(spec.percentile_list().begin(), spec.percentile_list().end());
    Totals job_totals;
    uint64_t elapsed = 0;
    double job_cpu_user = 0, job_cpu_system = 0, job_thread_ns = 0;
    for (size_t w = 0; w < workers_.size(); ++w) {
      const WorkerJob& worker_job = per_job_worker_[j][w];
      uint64_t worker_elapsed = worker_job.elapsed_ns;
      if (!worker_job.final && worker_job.last_end_unix_ns > 0) {
        // No final report (worker lost): rate over what it reported.
        worker_elapsed = static_cast<uint64_t>(std::max<int64_t>(0, worker_job.last_end_unix_ns - job_start_unix_ns_[j]));
      }
      elapsed = std::max(elapsed, worker_elapsed);
      v1::WorkerResult* worker = job->add_workers();
      worker->set_worker(workers_[w]);
      worker->set_elapsed_ns(worker_elapsed);
      worker->set_error(worker_job.error);
      worker->set_stop_reason(worker_job.stop_reason);
      worker->set_stop_cause(worker_job.stop_cause);
      for (const std::string& note : worker_job.notes) worker->add_notes(note);
      // CPU in percent of the threads' time, as fio's usr_cpu/sys_cpu.
      const double thread_ns = static_cast<double>(worker_elapsed) * spec.numjobs();
      if (thread_ns > 0) {
        worker->set_usr_cpu(100.0 * static_cast<double>(worker_job.cpu_user_ns) / thread_ns);
        worker->set_sys_cpu(100.0 * static_cast<double>(worker_job.cpu_system_ns) / thread_ns);
      }
      worker->set_context_switches(worker_job.context_switches);
      job_cpu_user += static_cast<double>(worker_job.cpu_user_ns);
      job_cpu_system += static_cast<double>(worker_job.cpu_system_ns);
      job_thread_ns += thread_ns;
      job->set_context_switches(job->context_switches() + worker_job.context_switches);
      auto add_counts = [](const std::vector<uint64_t>& from, google::protobuf::RepeatedField<uint64_t>* into) {
        if (into->size() < static_cast<int>(from.size())) into->Resize(static_cast<int>(from.size()), 0);
        for (size_t b = 0; b < from.size(); ++b) into->Set(static_cast<int>(b), into->Get(static_cast<int>(b)) + from[b]);
      };
      add_counts(worker_job.depth_counts, job->mutable_depth_counts());
      add_counts(worker_job.submit_counts, job->mutable_submit_counts());
      add_counts(worker_job.complete_counts, job->mutable_complete_counts());
      AddDirectionResults(worker_job.totals.directions, worker_elapsed, false, DefaultPercentiles(), worker->mutable_directions());
      AddTotals(worker_job.totals, &job_totals);
      const uint32_t g = phases_.group_of[j];
      AddTotals(worker_job.totals, &group_worker_totals[g][w]);
      group_worker_elapsed[g][w] = std::max(group_worker_elapsed[g][w], worker_elapsed);
    }
    if (spec.has_metadata()) {
      // mdtest's phase time: from the first task's start (its barrier) to the last one's end.
      int64_t first_late = INT64_MAX;
      for (size_t w = 0; w < workers_.size(); ++w) {
        if (per_job_worker_[j][w].final) first_late = std::min(first_late, per_job_worker_[j][w].earliest_start_late_ns);
      }
      if (first_late != INT64_MAX && first_late > 0) elapsed -= std::min<uint64_t>(elapsed, static_cast<uint64_t>(first_late));
    }
    job->set_elapsed_ns(elapsed);
    if (job_thread_ns > 0) {
      job->set_usr_cpu(100.0 * job_cpu_user / job_thread_ns);
      job->set_sys_cpu(100.0 * job_cpu_system / job_thread_ns);
    }
    // Phases run one after another: the run's time is the sum of each phase's longest job.
    phase_elapsed[phases_.phase_of[j]] = std::max(phase_elapsed[phases_.phase_of[j]], elapsed);
    // (The workers' totals carry none.)
    for (int d = 0; d < kDirectionCount; ++d) *job_totals.directions[d].mutable_slowest() = job_slowest_[j][d].slowest();
    AddTotals(job_totals, &group_totals[phases_.group_of[j]]);
    group_elapsed[phases_.group_of[j]] = std::max(group_elapsed[phases_.group_of[j]], elapsed);
    AddDirectionResults(job_totals.directions, elapsed, true, percentiles, job->mutable_directions());
    for (int d = 0; d < kDirectionCount; ++d) {
      if (HasActivity(job_totals.directions[d])) AddDirectionStats(job_totals.directions[d], &cluster[d]);
    }
    for (const auto& [index, interval] : per_job_intervals_[j]) {
      v1::IntervalResult* out = job->add_intervals();
      out->set_interval_index(index);
      out->set_start_unix_ns(interval.start_unix_ns);
      out->set_end_unix_ns(interval.end_unix_ns);
      out->set_workers_reporting(static_cast<uint32_t>(interval.reports_in));  // (behind a relay, its workers)
      for (size_t w = 0; w < interval.by_worker.size(); ++w) {
        if (!interval.workers.count(w)) continue;
        v1::WorkerInterval* per_worker = out->add_workers();
        per_worker->set_worker(workers_[w]);
        per_worker->set_ops(interval.by_worker[w].ops);
        per_worker->set_bytes(interval.by_worker[w].bytes);
      }
      const uint64_t span = static_cast<uint64_t>(std::max<int64_t>(0, interval.end_unix_ns - interval.start_unix_ns));
      AddDirectionResults(TotalsWithSums(interval), span, false, percentiles, out->mutable_directions());
    }
  }
  uint64_t cluster_elapsed = 0;
  for (uint64_t e : phase_elapsed) cluster_elapsed += e;
  report->set_cluster_elapsed_ns(cluster_elapsed);
  report->set_group_reporting(false);
  for (const v1::JobSpec& job : spec_.jobs()) report->set_group_reporting(report->group_reporting() || job.group_reporting());
  for (uint32_t g = 0; g < phases_.groups; ++g) {
    v1::GroupResult* group = report->add_groups();
    group->set_group(g);
    group->set_elapsed_ns(group_elapsed[g]);
    for (int j = 0; j < spec_.jobs_size(); ++j) {
      if (phases_.group_of[j] == g) group->add_jobs(spec_.jobs(j).name());
    }
    AddDirectionResults(group_totals[g].directions, group_elapsed[g], false, DefaultPercentiles(), group->mutable_directions());
    for (size_t w = 0; w < workers_.size(); ++w) {
      v1::WorkerResult* worker = group->add_workers();
      worker->set_worker(workers_[w]);
      worker->set_elapsed_ns(group_worker_elapsed[g][w]);
      AddDirectionResults(group_worker_totals[g][w].directions, group_worker_elapsed[g][w], false, DefaultPercentiles(),
                          worker->mutable_directions());
    }
  }
  AddDirectionResults(cluster, cluster_elapsed, true, DefaultPercentiles(), report->mutable_cluster());
  for (const std::string& problem : malformed_problems_) report->add_problems(problem);
  if (malformed_histograms_ > kMalformedNamed) {
    report->add_problems(absl::StrCat(malformed_histograms_ - kMalformedNamed, " more malformed histograms were left out (the first ",
                                      kMalformedNamed, " are named above)"));
  }
}

}  // namespace iofleet
