#include "controller/direction_summary.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "job/io_priority.h"

namespace iofleet {

// The slowest requests kept per direction of a total (job, worker, interval, cluster).
constexpr int kSlowestKeptPerTotal = 10;

void AddDirectionStats(const v1::DirectionStats& from, v1::DirectionStats* into, SlowestRequests slowest) {
  MergeHistogramProto(from.latency(), into->mutable_latency());
  MergeHistogramProto(from.submit_latency(), into->mutable_submit_latency());
  MergeHistogramProto(from.completion_latency(), into->mutable_completion_latency());
  AddDirectionCounts(from, into, slowest);
}

void DirectionSum::Add(const v1::DirectionStats& stats) {
  latency_.MergeProto(stats.latency());
  submit_.MergeProto(stats.submit_latency());
  completion_.MergeProto(stats.completion_latency());
  AddDirectionCounts(stats, &counters_);
  empty_ = false;
}

v1::DirectionStats DirectionSum::Take() && {
  v1::DirectionStats stats = std::move(counters_);
  *stats.mutable_latency() = latency_.ToProto();
  *stats.mutable_submit_latency() = submit_.ToProto();
  *stats.mutable_completion_latency() = completion_.ToProto();
  return stats;
}

void DirectionSum::AddTo(v1::DirectionStats* into) const {
  if (empty_) return;
  MergeHistogramProto(latency_.ToProto(), into->mutable_latency());
  MergeHistogramProto(submit_.ToProto(), into->mutable_submit_latency());
  MergeHistogramProto(completion_.ToProto(), into->mutable_completion_latency());
  AddDirectionCounts(counters_, into);
}

void AddDirectionCounts(const v1::DirectionStats& from, v1::DirectionStats* into, SlowestRequests slowest) {
  into->set_direction(from.direction());
  into->set_ops(into->ops() + from.ops());
  into->set_bytes(into->bytes() + from.bytes());
  into->set_errors(into->errors() + from.errors());
  for (const v1::PriorityLatency& priority : from.priorities()) {
    v1::PriorityLatency* same = nullptr;
    for (v1::PriorityLatency& known : *into->mutable_priorities()) {
      if (known.ioprio() == priority.ioprio()) same = &known;
    }
    if (same == nullptr) {
      if (into->priorities_size() >= static_cast<int>(kMaxJobPriorities)) continue;  // checked on arrival; a sum of jobs keeps the first
      same = into->add_priorities();
      same->set_ioprio(priority.ioprio());
    }
    MergeHistogramProto(priority.completion_latency(), same->mutable_completion_latency());
  }
  if (slowest == SlowestRequests::kKept) AddSlowest(from, into);
}

void AddSlowest(const v1::DirectionStats& from, v1::DirectionStats* into) {
  // The kSlowestKeptPerTotal slowest, slowest first (ties: the earlier first). Most requests are not
  // among them once the list is full, and are not copied.
  auto* slowest = into->mutable_slowest();
  for (const v1::SlowRequest& request : from.slowest()) {
    if (slowest->size() >= kSlowestKeptPerTotal && request.latency_ns() <= slowest->Get(slowest->size() - 1).latency_ns()) continue;
    int at = slowest->size();
    while (at > 0 && slowest->Get(at - 1).latency_ns() < request.latency_ns()) --at;
    *slowest->Add() = request;
    for (int i = slowest->size() - 1; i > at; --i) slowest->SwapElements(i, i - 1);
    if (slowest->size() > kSlowestKeptPerTotal) slowest->RemoveLast();
  }
}

void CheckReportFromWire(const std::string& worker, const MalformedHistogram& malformed, v1::IntervalReport* report) {
  for (v1::DirectionStats& stats : *report->mutable_directions()) {
    const std::pair<const char*, v1::LatencyHistogramProto*> histograms[] = {
        {"latency", stats.mutable_latency()}, {"submission latency", stats.mutable_submit_latency()},
        {"completion latency", stats.mutable_completion_latency()}};
    for (const auto& [what, histogram] : histograms) {
      absl::Status valid = ValidateHistogramProto(*histogram);
      if (valid.ok()) continue;
      histogram->Clear();
      malformed(stats, what, valid);
    }
    for (v1::SlowRequest& request : *stats.mutable_slowest()) {
      if (request.worker().empty()) request.set_worker(worker);
    }
    // cmdprio's per-priority latencies: as many as a job can have, each a valid histogram.
    if (stats.priorities_size() > static_cast<int>(kMaxJobPriorities)) {
      malformed(stats, "per-priority latencies", absl::InvalidArgumentError(absl::StrCat(stats.priorities_size(), " priorities, more than ", kMaxJobPriorities)));
      stats.clear_priorities();
    }
    for (v1::PriorityLatency& priority : *stats.mutable_priorities()) {
      absl::Status valid = ValidateHistogramProto(priority.completion_latency());
      if (valid.ok()) continue;
      priority.clear_completion_latency();
      malformed(stats, "per-priority completion latency", valid);
    }
  }
}

namespace {

// min/max/mean/stddev and the percentiles of one histogram; nothing for an empty one.
void Summarize(const v1::LatencyHistogramProto& proto, const std::vector<double>& percentiles, v1::LatencySummary* summary) {
  if (proto.count() == 0) return;
  // Validated on arrival (RunAggregator::Add) or merged here from validated ones.
  summary->set_min_ns(proto.min_ns());
  summary->set_max_ns(proto.max_ns());
  summary->set_mean_ns(MeanNs(proto.count(), proto.sum_ns()));
  summary->set_stddev_ns(StddevNs(proto.count(), proto.sum_ns(), proto.sum_squares_ns2()));
  const std::vector<uint64_t> values = ValuesAtPercentiles(proto, percentiles);
  for (size_t i = 0; i < percentiles.size(); ++i) {
    v1::Percentile* entry = summary->add_percentiles();
    entry->set_percentile(percentiles[i]);
    entry->set_value_ns(values[i]);
  }
}

}  // namespace

const char* DirectionName(int index) {
  static constexpr const char* kNames[kDirectionCount] = {"read", "write", "trim", "sync", "meta"};
  return index >= 0 && index < kDirectionCount ? kNames[index] : "?";
}

bool HasActivity(const v1::DirectionStats& stats) { return stats.ops() > 0 || stats.bytes() > 0 || stats.errors() > 0; }

const std::vector<double>& DefaultPercentiles() {
  static const std::vector<double> kPercentiles = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  return kPercentiles;
}

std::optional<uint64_t> FindPercentile(const v1::LatencySummary& latency, double p) {
  for (const v1::Percentile& entry : latency.percentiles()) {
    if (std::abs(entry.percentile() - p) < 1e-9) return entry.value_ns();
  }
  return std::nullopt;
}

uint64_t PercentileValue(const v1::LatencySummary& latency, double p) { return FindPercentile(latency, p).value_or(0); }

v1::DirectionResult SummarizeDirection(const v1::DirectionStats& stats, uint64_t elapsed_ns, bool include_histogram,
                                       const std::vector<double>& percentiles) {
  v1::DirectionResult result;
  result.set_ops(stats.ops());
  result.set_bytes(stats.bytes());
  result.set_errors(stats.errors());
  const double seconds = static_cast<double>(elapsed_ns) / 1e9;
  if (seconds > 0) {
    result.set_iops(static_cast<double>(stats.ops()) / seconds);
    result.set_bandwidth_bytes_per_sec(static_cast<double>(stats.bytes()) / seconds);
  }
  if (stats.latency().count()) Summarize(stats.latency(), percentiles, result.mutable_latency());
  if (stats.submit_latency().count()) Summarize(stats.submit_latency(), percentiles, result.mutable_submit_latency());
  if (stats.completion_latency().count()) Summarize(stats.completion_latency(), percentiles, result.mutable_completion_latency());
  // In the job's order (its default first), as fio lists them.
  for (const v1::PriorityLatency& p : stats.priorities()) {
    if (p.completion_latency().count() == 0) continue;
    v1::PriorityResult* r = result.add_priorities();
    r->set_ioprio(p.ioprio());
    r->set_priority_class(IoprioClass(p.ioprio()));
    r->set_level(IoprioLevel(p.ioprio()));
    r->set_hint(IoprioHint(p.ioprio()));
    r->set_ops(p.completion_latency().count());
    Summarize(p.completion_latency(), percentiles, r->mutable_completion_latency());
  }
  if (include_histogram) {
    *result.mutable_histogram() = stats.latency();
    *result.mutable_completion_histogram() = stats.completion_latency();
    *result.mutable_slowest() = stats.slowest();
  }
  return result;
}

void AddDirectionResults(const DirectionTotals& totals, uint64_t elapsed_ns, bool include_histogram,
                         const std::vector<double>& percentiles, google::protobuf::RepeatedPtrField<v1::DirectionResult>* out) {
  for (int d = 0; d < kDirectionCount; ++d) {
    if (!HasActivity(totals[d])) continue;
    v1::DirectionResult* result = out->Add();
    *result = SummarizeDirection(totals[d], elapsed_ns, include_histogram, percentiles);
    result->set_direction(DirectionName(d));
  }
}

LatencyHistogram MergedLatency(const std::vector<const v1::DirectionResult*>& directions) {
  v1::LatencyHistogramProto merged;
  for (const v1::DirectionResult* d : directions) MergeHistogramProto(d->histogram(), &merged);
  absl::StatusOr<LatencyHistogram> histogram = LatencyHistogram::FromProto(merged);
  return histogram.ok() ? *std::move(histogram) : LatencyHistogram();  // !ok unreachable: validated on arrival
}

}  // namespace iofleet
