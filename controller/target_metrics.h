// --target-metrics NAME=URL: what the system under test says about the run, beside what the
// clients saw. Each Prometheus endpoint (JuiceFS's --metrics, a node exporter on the NFS
// server, nfs-ganesha's) is scraped at the boundaries of the run's intervals — the same
// instants the workers cut their intervals at, counted from each stonewall phase's start — and
// each interval keeps what changed in it: counters' and histograms' increases, gauges' values.
// An endpoint that stops answering mid-run is a problem of its own result, not a failed run.
#ifndef IOFLEET_CONTROLLER_TARGET_METRICS_H_
#define IOFLEET_CONTROLLER_TARGET_METRICS_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "controller/http_fetch.h"
#include "controller/run_aggregator.h"
#include "metrics/prometheus_text.h"
#include "proto/report.pb.h"

namespace iofleet {

struct TargetMetricsEndpoint {
  std::string name;  // letters, digits, '.', '_', '-'
  std::string url;   // http(s)://host:port/path
};

// One --target-metrics value, NAME=URL; errors say what is wrong with it.
absl::StatusOr<TargetMetricsEndpoint> ParseTargetMetricsFlag(absl::string_view value);

// The lines a reader looks at first, from a run's increases: for JuiceFS the FUSE operations
// and their latency, write sizes, object store requests (latency, mean size) and block-cache
// hits; for any endpoint how many series moved. `seconds`: the span they cover.
std::vector<std::string> TargetHighlights(const std::vector<PrometheusSeries>& increases, double seconds);

// A series as the report keeps it (histograms with p50/p99).
v1::TargetMetricSeries SeriesProto(const PrometheusSeries& series);

// What an endpoint's intervals keep: a node exporter changes hundreds of series a second, and
// an hour of them would hold hundreds of MB. Run totals are not bounded by these.
struct TargetMetricsLimits {
  size_t series_per_interval = 2000;  // the first ones in the exposition's order
  size_t series_records = 1000000;    // over the run, per endpoint; later intervals keep their span only
};

class TargetMetricsScraper {
 public:
  TargetMetricsScraper(std::vector<TargetMetricsEndpoint> endpoints, absl::Duration interval, TargetMetricsLimits limits = {});
  ~TargetMetricsScraper();
  TargetMetricsScraper(const TargetMetricsScraper&) = delete;
  TargetMetricsScraper& operator=(const TargetMetricsScraper&) = delete;

  // Scrapes every endpoint once: one that does not answer, or answers with something that is
  // not Prometheus' text format, is an error naming it (before any worker is asked to do
  // anything). Then scrapes on its own thread. `log_line` gets one NDJSON line per endpoint and
  // interval (the interval log).
  absl::Status Start(std::function<void(std::string)> log_line);
  // A phase's workers are armed and its start instant is about to be picked: the phase's
  // baseline scrape, done before this returns (at most a second per endpoint), so that nothing
  // the phase does is before it.
  void PhaseArmed();
  // The interval clock of a stonewall phase: its start instant (every worker's); scraped at
  // each interval boundary after it.
  void PhaseStarted(uint32_t phase, int64_t start_unix_ns);
  // The phase's workers are done: a last scrape closes its last (partial) interval.
  void PhaseEnded();
  // Stops (closing an open phase) and adds each endpoint's result to `results` (a report's
  // target_metrics).
  void Finish(google::protobuf::RepeatedPtrField<v1::TargetMetricsResult>* results);

 private:
  static constexpr int kMaxProblems = 20;
  struct Endpoint {
    TargetMetricsEndpoint spec;
    std::unique_ptr<HttpFetcher> fetcher;
    std::optional<PrometheusScrape> last;   // the last good scrape
    int64_t last_unix_ns = 0;
    std::optional<PrometheusScrape> first;  // the first phase's baseline
    int64_t first_unix_ns = 0;
    bool answering = true;  // a failure is named once, and again when it answers again
    size_t series_records = 0;  // kept in result.intervals so far
    bool records_full = false;  // no more kept (said once)
    bool trimmed = false;       // an interval had more changed series than one keeps (said once)
    v1::TargetMetricsResult result;
    // A problem of this endpoint, unless it has named kMaxProblems already.
    void Problem(std::string text) {
      if (result.problems_size() < kMaxProblems) result.add_problems(std::move(text));
    }
    // Fetches and parses the exposition (errors say which of the two failed).
    absl::StatusOr<PrometheusScrape> Scrape(absl::Duration timeout);
  };
  struct Event {
    enum Kind { kArmed, kStart, kEnd, kStop } kind;
    uint32_t phase = 0;
    int64_t start_unix_ns = 0;
  };
  // Scrapes every endpoint (within `timeout`); with `interval`, what changed since each one's
  // last scrape is an interval of (phase, index); without, the scrape is a baseline.
  void ScrapeAll(std::optional<std::pair<uint32_t, uint32_t>> interval, absl::Duration timeout);
  void Loop();

  std::vector<Endpoint> endpoints_;
  const absl::Duration interval_;
  const TargetMetricsLimits limits_;
  std::function<void(std::string)> log_line_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Event> events_;  // mu_
  uint64_t baselines_asked_ = 0, baselines_done_ = 0;  // PhaseArmed's (mu_)
  std::condition_variable baseline_done_;
  bool finished_ = false;
};

// For a command (run, mdtest, compare's runs): none when `endpoints` is empty; else a scraper
// started (its lines to `log_line`) on the phases `aggregator` sees start.
absl::StatusOr<std::unique_ptr<TargetMetricsScraper>> StartTargetMetrics(const std::vector<TargetMetricsEndpoint>& endpoints,
                                                                         absl::Duration interval, std::function<void(std::string)> log_line,
                                                                         RunAggregator* aggregator);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_TARGET_METRICS_H_
