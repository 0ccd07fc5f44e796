// What one direction's counters and histograms add up to — its rates, latency summaries and
// percentiles — the one place every report (text, fio JSON, HTML, mdtest, live view, compare)
// takes them from. Histograms reaching here were validated where they arrived from the wire
// (RunAggregator::Add), so summarizing never meets a malformed one.
#ifndef IOFLEET_CONTROLLER_DIRECTION_SUMMARY_H_
#define IOFLEET_CONTROLLER_DIRECTION_SUMMARY_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "histogram/latency_histogram.h"
#include "proto/report.pb.h"
#include "proto/worker_service.pb.h"

namespace iofleet {

// Directions in index order 0..4 (v1::Direction - 1).
inline constexpr int kDirectionCount = 5;
using DirectionTotals = std::array<v1::DirectionStats, kDirectionCount>;

// "read", "write", "trim", "sync", "meta" for direction index 0..4.
const char* DirectionName(int index);
// Whether a direction saw any operation, byte or error.
bool HasActivity(const v1::DirectionStats& stats);

// Whether a sum keeps the slowest requests of what it adds. A worker's own totals do not: its
// report lists no slowest requests, and keeping ten for each of a thousand workers' jobs as
// each interval came in (a list walked through cold memory, requests copied with their
// strings) cost the controller about half a point of a core during a 1,024-worker run
// (bench/scale_bench.sh); the job keeps them instead (RunAggregator).
enum class SlowestRequests { kKept, kLeftOut };

// Adds one direction's counters and histograms (an exact merge) into another's, keeping the
// ten slowest requests of both (unless left out).
void AddDirectionStats(const v1::DirectionStats& from, v1::DirectionStats* into, SlowestRequests slowest = SlowestRequests::kKept);
// The same without the latency, submission and completion latency histograms: counters,
// priorities' histograms, slowest requests.
void AddDirectionCounts(const v1::DirectionStats& from, v1::DirectionStats* into, SlowestRequests slowest = SlowestRequests::kKept);
// The ten slowest of `from`'s slowest requests and `into`'s, into `into`.
void AddSlowest(const v1::DirectionStats& from, v1::DirectionStats* into);

// One direction of many reports summed as they arrive, its three latency histograms dense: a
// report's buckets are indexed adds, where a sparse merge into a histogram of hundreds of buckets
// rebuilds its arrays whenever a bucket is new (a relay's sum of its workers; the controller's
// sum of every worker's report of a job's interval: at 1,024 workers the sparse merges, these
// and each worker's own totals, were a tenth of its CPU samples). A histogram grows to its highest bucket used (up to ~30 KiB each): for
// sums that live an interval or two, not for every interval of a run.
class DirectionSum {
 public:
  // `stats`' histograms must be valid (CheckReportFromWire).
  void Add(const v1::DirectionStats& stats);
  bool empty() const { return empty_; }
  v1::Direction direction() const { return counters_.direction(); }  // (unspecified while empty)
  // The sum in wire form, histograms sparse again.
  v1::DirectionStats Take() &&;
  // Adds the sum into `into` (an exact merge) without taking it.
  void AddTo(v1::DirectionStats* into) const;

 private:
  v1::DirectionStats counters_;  // everything but the three histograms
  LatencyHistogram latency_, submit_, completion_;
  bool empty_ = true;
};

// A report as it comes off the wire, checked where it arrives (the controller's aggregator, a
// relay): every histogram that does not decode is cleared — its operation and byte counts are
// kept — and told to `malformed` (which histogram, of which direction, and why); slow requests
// not named yet are named `worker` (a relay names its workers' before they reach the controller).
using MalformedHistogram = std::function<void(const v1::DirectionStats& stats, const char* what, const absl::Status& why)>;
void CheckReportFromWire(const std::string& worker, const MalformedHistogram& malformed, v1::IntervalReport* report);

// fio's default percentile list.
const std::vector<double>& DefaultPercentiles();
// The value of percentile `p` in a summary, if the summary has it. Percentiles are stored from
// the same constants they are looked up with; the comparison allows for a JSON round trip.
std::optional<uint64_t> FindPercentile(const v1::LatencySummary& latency, double p);
// The same, 0 when the summary lacks it.
uint64_t PercentileValue(const v1::LatencySummary& latency, double p);

// Rates over `elapsed_ns` and latency summaries at `percentiles` of one direction; with
// `include_histogram` also the merged histograms and slowest requests (job and cluster totals).
v1::DirectionResult SummarizeDirection(const v1::DirectionStats& stats, uint64_t elapsed_ns, bool include_histogram,
                                       const std::vector<double>& percentiles);
// SummarizeDirection of every direction with activity, appended to `out` with its name.
void AddDirectionResults(const DirectionTotals& totals, uint64_t elapsed_ns, bool include_histogram,
                         const std::vector<double>& percentiles, google::protobuf::RepeatedPtrField<v1::DirectionResult>* out);

// The exact merge of the total latency histograms of `directions` (fio's
// latency distribution covers reads, writes and trims together).
LatencyHistogram MergedLatency(const std::vector<const v1::DirectionResult*>& directions);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_DIRECTION_SUMMARY_H_
