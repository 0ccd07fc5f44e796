// Prometheus metrics fed with interval statistics, served on /metrics by prometheus-cpp: per
// label set (run, job, direction...) counters of operations, bytes and errors, a latency
// histogram in seconds (buckets for storage, 1 µs to 60 s) and the mean number of requests in
// flight over the last interval (Little's law: summed latency / interval length). The worker
// feeds it its own interval reports, the controller the cluster-wide intervals it publishes,
// so Prometheus sees the same numbers as the report.
#ifndef IOFLEET_METRICS_INTERVAL_METRICS_H_
#define IOFLEET_METRICS_INTERVAL_METRICS_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "proto/histogram.pb.h"

namespace iofleet {

class IntervalMetrics {
 public:
  // Serves /metrics on `listen` (HOST:PORT; port 0 picks a free one). Metric names start
  // with `prefix` ("iofleet_worker", "iofleet_cluster").
  static absl::StatusOr<std::unique_ptr<IntervalMetrics>> Serve(const std::string& listen, const std::string& prefix);

  // The address actually listened on (HOST:PORT).
  const std::string& address() const { return address_; }
  prometheus::Registry& registry() { return *registry_; }

  // Adds one interval's operations of one direction to the counters and the histogram.
  void Add(const prometheus::Labels& labels, uint64_t ops, uint64_t bytes, uint64_t errors, const v1::LatencyHistogramProto& latency);
  // Sets the queue-depth gauge from an interval's summed latency and length.
  void SetQueueDepth(const prometheus::Labels& labels, const v1::LatencyHistogramProto& latency, double seconds);
  // A gauge of this registry (created on first use), e.g. workers up.
  prometheus::Gauge& Gauge(const std::string& name, const std::string& help, const prometheus::Labels& labels = {});

  // Prometheus bucket bounds (seconds) used for every latency histogram.
  static const prometheus::Histogram::BucketBoundaries& LatencyBuckets();

 private:
  IntervalMetrics() = default;
  std::string address_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Counter>* ops_ = nullptr;
  prometheus::Family<prometheus::Counter>* bytes_ = nullptr;
  prometheus::Family<prometheus::Counter>* errors_ = nullptr;
  prometheus::Family<prometheus::Histogram>* latency_ = nullptr;
  prometheus::Family<prometheus::Gauge>* in_flight_ = nullptr;
  std::mutex gauges_mu_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;
};

}  // namespace iofleet

#endif  // IOFLEET_METRICS_INTERVAL_METRICS_H_
