#include "metrics/interval_metrics.h"

#include <algorithm>
#include <exception>

#include "absl/strings/str_cat.h"
#include "histogram/latency_histogram.h"

namespace iofleet {

const prometheus::Histogram::BucketBoundaries& IntervalMetrics::LatencyBuckets() {
  // 1-2.5-5 steps from 1 µs to 10 s, then 30 s and 60 s: NVMe to a stalled NFS server.
  static const auto* kBuckets = new prometheus::Histogram::BucketBoundaries{
      1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
      2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return *kBuckets;
}

namespace {

constexpr int kServerThreads = 64;
constexpr int kRequestTimeoutMs = 500;

}  // namespace

absl::StatusOr<std::unique_ptr<IntervalMetrics>> IntervalMetrics::Serve(const std::string& listen, const std::string& prefix) {
  std::unique_ptr<IntervalMetrics> metrics(new IntervalMetrics());
  metrics->registry_ = std::make_shared<prometheus::Registry>();
  try {
    // civetweb (behind prometheus-cpp) throws when it cannot listen.
    // A connection that opens and never sends its request holds one of civetweb's threads
    // until request_timeout_ms: with one thread and civetweb's 30 s default, a few hundred
    // half-open connections made /metrics unreachable. Here a request must arrive within a
    // half second (a scraper sends it right after connecting), and enough threads serve that the
    // queue behind such connections drains in seconds.
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", listen, "num_threads", absl::StrCat(kServerThreads), "request_timeout_ms", absl::StrCat(kRequestTimeoutMs),
        "enable_keep_alive", "no"});
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics-listen ", listen, ": cannot listen (", e.what(), ")"));
  }
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  const std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  const std::string host = listen.substr(0, listen.rfind(':'));
  metrics->address_ = absl::StrCat(host, ":", ports.empty() ? 0 : ports[0]);
  auto& r = *metrics->registry_;
  metrics->ops_ = &prometheus::BuildCounter().Name(prefix + "_operations_total").Help("Completed IO or metadata operations (failed ones included)").Register(r);
  metrics->bytes_ = &prometheus::BuildCounter().Name(prefix + "_bytes_total").Help("Bytes transferred").Register(r);
  metrics->errors_ = &prometheus::BuildCounter().Name(prefix + "_errors_total").Help("Operations that failed").Register(r);
  metrics->latency_ = &prometheus::BuildHistogram().Name(prefix + "_latency_seconds").Help("Operation latency, issue to completion (fio's lat)").Register(r);
  metrics->in_flight_ = &prometheus::BuildGauge()
                             .Name(prefix + "_queue_depth")
                             .Help("Mean requests in flight over the last interval (summed latency / interval length)")
                             .Register(r);
  return metrics;
}

void IntervalMetrics::Add(const prometheus::Labels& labels, uint64_t ops, uint64_t bytes, uint64_t errors,
                          const v1::LatencyHistogramProto& latency) {
  ops_->Add(labels).Increment(static_cast<double>(ops));
  bytes_->Add(labels).Increment(static_cast<double>(bytes));
  errors_->Add(labels).Increment(static_cast<double>(errors));
  const auto& bounds = LatencyBuckets();
  std::vector<double> increments(bounds.size() + 1, 0);  // the last one is +Inf
  ForEachBucket(latency, [&](uint32_t index, uint64_t count) {
    // A bucket of ours goes where its highest value falls: exact at our bucket resolution.
    const double upper = static_cast<double>(HistogramLayout::BucketUpper(index)) / 1e9;
    const size_t slot = static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), upper) - bounds.begin());
    increments[slot] += static_cast<double>(count);
  });
  latency_->Add(labels, bounds).ObserveMultiple(increments, static_cast<double>(latency.sum_ns()) / 1e9);
}

void IntervalMetrics::SetQueueDepth(const prometheus::Labels& labels, const v1::LatencyHistogramProto& latency, double seconds) {
  in_flight_->Add(labels).Set(seconds > 0 ? static_cast<double>(latency.sum_ns()) / 1e9 / seconds : 0);
}

prometheus::Gauge& IntervalMetrics::Gauge(const std::string& name, const std::string& help, const prometheus::Labels& labels) {
  std::lock_guard<std::mutex> lock(gauges_mu_);
  auto it = gauges_.find(name);
  if (it == gauges_.end()) it = gauges_.emplace(name, &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_)).first;
  return it->second->Add(labels);
}

}  // namespace iofleet
