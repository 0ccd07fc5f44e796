// Prometheus' text exposition format (version 0.0.4), read: what a scrape of a system under
// test's /metrics returns (JuiceFS, node exporter, nfs-ganesha). prometheus-cpp writes this
// format but has no reader, and Debian has no C++ one, so this is a small reader of our own,
// fuzzed (fuzz/prometheus_text_fuzzer.cc) and tested against real scrapes.
//
// Samples are grouped into series: a counter, a gauge, or a histogram (its _bucket/_sum/_count
// samples as one series). A summary's _sum and _count are counters and its quantiles gauges;
// untyped samples are gauges.
#ifndef IOFLEET_METRICS_PROMETHEUS_TEXT_H_
#define IOFLEET_METRICS_PROMETHEUS_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace iofleet {

struct PrometheusSeries {
  enum class Kind { kCounter, kGauge, kHistogram };
  Kind kind = Kind::kGauge;
  std::string name;    // the family's name (a histogram's, without _bucket)
  std::string labels;  // canonical: {a="x",b="y"}, sorted by name, escaped as exposed; "" if none
  double value = 0;    // counter, gauge
  // Histogram: the cumulative buckets by upper bound (ascending, +Inf last), sum and count.
  std::vector<std::pair<double, double>> buckets;
  double sum = 0, count = 0;

  // The key a series is known by across scrapes: name + labels.
  std::string Key() const { return name + labels; }
};

struct PrometheusScrape {
  std::vector<PrometheusSeries> series;  // in the order they first appear
};

struct PrometheusLimits {
  size_t max_bytes = 16 << 20;     // a larger exposition is refused
  size_t max_series = 50000;       // more series are refused (a scrape per interval is kept)
  size_t max_buckets = 1000;       // per histogram
};

// Parses an exposition. Errors name the line ("line 12: ..."); nothing is returned then.
absl::StatusOr<PrometheusScrape> ParsePrometheusText(absl::string_view text, const PrometheusLimits& limits = {});

// What changed from `before` to `after` (two scrapes of one endpoint): counters' and
// histograms' increases (a value that went down is a restart: the increase is the new value,
// as Prometheus' increase() takes it), gauges as `after` has them. Series whose counters did not
// move, and gauges that did not change, are left out unless `keep_unchanged`.
std::vector<PrometheusSeries> PrometheusIncrease(const PrometheusScrape& before, const PrometheusScrape& after, bool keep_unchanged = false);

// The q-quantile (0..1) of a histogram's cumulative buckets, interpolated linearly within the
// bucket as Prometheus' histogram_quantile(); NaN when it has no observations. A quantile in
// the +Inf bucket is the largest finite bound.
double HistogramQuantile(const std::vector<std::pair<double, double>>& buckets, double q);
// The bucket the q-quantile falls in (the first whose cumulative count reaches it), for those who
// show which side of a bound it is on; nullopt when it has no observations.
std::optional<size_t> HistogramQuantileBucket(const std::vector<std::pair<double, double>>& buckets, double q);

}  // namespace iofleet

#endif  // IOFLEET_METRICS_PROMETHEUS_TEXT_H_
