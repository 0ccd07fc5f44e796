#include "controller/target_metrics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "google/protobuf/util/json_util.h"

namespace iofleet {
namespace {

using Kind = PrometheusSeries::Kind;

int64_t NowUnixNs() { return absl::ToUnixNanos(absl::Now()); }

// The value of label `name` in canonical label text ({a="x",method="write"}), or "".
std::string LabelValue(absl::string_view labels, absl::string_view name) {
  const std::string key = absl::StrCat(name, "=\"");
  for (size_t at = labels.find(key); at != absl::string_view::npos; at = labels.find(key, at + 1)) {
    if (at != 1 && labels[at - 1] != ',') continue;  // "xmethod=" is not "method="
    const size_t start = at + key.size();
    size_t end = start;
    while (end < labels.size() && labels[end] != '"') end += labels[end] == '\\' ? 2 : 1;
    return std::string(labels.substr(start, std::min(end, labels.size()) - start));
  }
  return "";
}

std::string Seconds(double s) { return FormatDurationNs(s * 1e9); }

// Series of one family, by the value of label `by` (summed over the other labels).
struct ByLabel {
  std::map<std::string, double> value;
  std::map<std::string, PrometheusSeries> histogram;  // buckets summed
};

void AddHistogram(const PrometheusSeries& from, PrometheusSeries* into) {
  if (into->buckets.empty()) {
    *into = from;
    return;
  }
  into->sum += from.sum;
  into->count += from.count;
  for (auto& [bound, count] : into->buckets) {
    for (const auto& [b, c] : from.buckets) {
      if (b == bound) count += c;
    }
  }
}

ByLabel Family(const std::vector<PrometheusSeries>& series, absl::string_view name, absl::string_view by) {
  ByLabel out;
  for (const PrometheusSeries& s : series) {
    if (s.name != name) continue;
    const std::string key = by.empty() ? "" : LabelValue(s.labels, by);
    if (s.kind == Kind::kHistogram) {
      AddHistogram(s, &out.histogram[key]);
    } else {
      out.value[key] += s.value;
    }
  }
  return out;
}

std::string Quantiles(const PrometheusSeries& h, bool seconds) {
  auto show = [&](double v) { return seconds ? Seconds(v) : FormatBytes(v); };
  if (!HistogramQuantileBucket(h.buckets, 0.5)) return "no observations";
  // Interpolated within its bucket, as histogram_quantile(); but a quantile in the first bucket
  // has no lower bound to interpolate from (0 would halve it: 4 KiB writes would read "2KiB"),
  // nor one in +Inf an upper bound: those say which side of the bound they are on.
  auto quantile = [&](double q) -> std::string {
    const size_t i = *HistogramQuantileBucket(h.buckets, q);
    if (std::isinf(h.buckets[i].first)) return i == 0 ? std::string("?") : absl::StrCat(">", show(h.buckets[i - 1].first));
    if (i == 0) return absl::StrCat("<=", show(h.buckets[0].first));
    return show(HistogramQuantile(h.buckets, q));
  };
  return absl::StrCat("p50 ", quantile(0.5), ", p99 ", quantile(0.99), ", mean ", show(h.count > 0 ? h.sum / h.count : 0));
}

}  // namespace

absl::StatusOr<TargetMetricsEndpoint> ParseTargetMetricsFlag(absl::string_view value) {
  const size_t eq = value.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--target-metrics '", value, "' is not NAME=URL (e.g. juicefs=http://127.0.0.1:9567/metrics)"));
  }
  TargetMetricsEndpoint e{std::string(value.substr(0, eq)), std::string(value.substr(eq + 1))};
  for (char c : e.name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(absl::StrCat("--target-metrics name '", e.name, "': use letters, digits, '.', '_' and '-'"));
    }
  }
  if (e.name.size() > 64) return absl::InvalidArgumentError(absl::StrCat("--target-metrics name '", e.name, "' is longer than 64 characters"));
  if (absl::Status s = HttpFetcher::CheckUrl(e.url); !s.ok()) return absl::InvalidArgumentError(absl::StrCat("--target-metrics ", e.name, ": ", s.message()));
  return e;
}

v1::TargetMetricSeries SeriesProto(const PrometheusSeries& s) {
  v1::TargetMetricSeries out;
  out.set_name(s.name);
  out.set_labels(s.labels);
  switch (s.kind) {
    case Kind::kCounter: out.set_kind(v1::TargetMetricSeries::COUNTER); break;
    case Kind::kGauge: out.set_kind(v1::TargetMetricSeries::GAUGE); break;
    case Kind::kHistogram: out.set_kind(v1::TargetMetricSeries::HISTOGRAM); break;
  }
  if (s.kind != Kind::kHistogram) {
    out.set_value(s.value);
    return out;
  }
  for (const auto& [bound, count] : s.buckets) {
    out.add_bucket_le(bound);
    out.add_bucket_count(count);
  }
  out.set_sum(s.sum);
  out.set_count(s.count);
  const double p50 = HistogramQuantile(s.buckets, 0.5), p99 = HistogramQuantile(s.buckets, 0.99);
  if (!std::isnan(p50)) out.set_p50(p50);
  if (!std::isnan(p99)) out.set_p99(p99);
  return out;
}

std::vector<std::string> TargetHighlights(const std::vector<PrometheusSeries>& increases, double seconds) {
  std::vector<std::string> lines;
  // JuiceFS (pkg/vfs, pkg/chunk): every metric carries the mount's labels (mp, vol_name).
  const ByLabel ops = Family(increases, "juicefs_fuse_ops_total", "method");
  if (!ops.value.empty()) {
    const ByLabel time = Family(increases, "juicefs_fuse_ops_durations_seconds", "method");
    std::vector<std::pair<double, std::string>> by_count;
    for (const auto& [method, n] : ops.value) by_count.emplace_back(-n, method);
    std::sort(by_count.begin(), by_count.end());
    std::vector<std::string> parts;
    for (const auto& [minus_n, method] : by_count) {
      if (parts.size() == 8) break;
      const double n = -minus_n;
      auto t = time.value.find(method);
      parts.push_back(t != time.value.end() && n > 0 ? absl::StrFormat("%s %.0f (mean %s)", method, n, Seconds(t->second / n))
                                                     : absl::StrFormat("%s %.0f", method, n));
    }
    lines.push_back(absl::StrCat("JuiceFS FUSE operations: ", absl::StrJoin(parts, ", ")));
  }
  const ByLabel fuse_latency = Family(increases, "juicefs_fuse_ops_durations_histogram_seconds", "");
  for (const auto& [k, h] : fuse_latency.histogram) lines.push_back(absl::StrCat("JuiceFS FUSE latency (all operations): ", Quantiles(h, true)));
  for (const auto& [family, what] : {std::pair{"juicefs_fuse_written_size_bytes", "write"}, std::pair{"juicefs_fuse_read_size_bytes", "read"}}) {
    for (const auto& [k, h] : Family(increases, family, "").histogram) {
      lines.push_back(absl::StrFormat("JuiceFS FUSE %s sizes: %.0f requests, %s", what, h.count, Quantiles(h, false)));
    }
  }
  const ByLabel objects = Family(increases, "juicefs_object_request_durations_histogram_seconds", "method");
  const ByLabel object_bytes = Family(increases, "juicefs_object_request_data_bytes", "method");
  for (const auto& [method, h] : objects.histogram) {
    std::string line = absl::StrFormat("JuiceFS object %s: %.0f requests, %s", method, h.count, Quantiles(h, true));
    auto bytes = object_bytes.value.find(method);
    if (bytes != object_bytes.value.end() && h.count > 0) {
      absl::StrAppend(&line, "; ", FormatBytes(bytes->second), " in all, mean size ", FormatBytes(bytes->second / h.count));
    }
    lines.push_back(std::move(line));
  }
  const ByLabel hits = Family(increases, "juicefs_blockcache_hits", ""), misses = Family(increases, "juicefs_blockcache_miss", "");
  if (!hits.value.empty() || !misses.value.empty()) {
    const double h = hits.value.empty() ? 0 : hits.value.begin()->second, m = misses.value.empty() ? 0 : misses.value.begin()->second;
    lines.push_back(absl::StrFormat("JuiceFS block cache: %.0f hits, %.0f misses%s", h, m,
                                    h + m > 0 ? absl::StrFormat(" (%.1f%% hits)", 100 * h / (h + m)) : ""));
  }
  const ByLabel errors = Family(increases, "juicefs_object_request_errors", "");
  if (!errors.value.empty() && errors.value.begin()->second > 0) {
    lines.push_back(absl::StrFormat("JuiceFS object store errors: %.0f", errors.value.begin()->second));
  }
  size_t moved = 0;
  for (const PrometheusSeries& s : increases) moved += s.kind != Kind::kGauge;
  lines.push_back(absl::StrFormat("%zu counter and histogram series moved over %.1f s", moved, seconds));
  return lines;
}

TargetMetricsScraper::TargetMetricsScraper(std::vector<TargetMetricsEndpoint> endpoints, absl::Duration interval, TargetMetricsLimits limits)
    : interval_(interval), limits_(limits) {
  for (TargetMetricsEndpoint& e : endpoints) {
    Endpoint endpoint;
    endpoint.fetcher = std::make_unique<HttpFetcher>(e.url);
    endpoint.result.set_name(e.name);
    endpoint.result.set_url(e.url);
    endpoint.spec = std::move(e);
    endpoints_.push_back(std::move(endpoint));
  }
}

TargetMetricsScraper::~TargetMetricsScraper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({Event::kStop});
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

absl::Status TargetMetricsScraper::Start(std::function<void(std::string)> log_line) {
  log_line_ = std::move(log_line);
  const absl::Duration timeout = std::clamp(interval_, absl::Seconds(1), absl::Seconds(5));
  for (Endpoint& e : endpoints_) {
    auto scrape = e.Scrape(timeout);
    if (!scrape.ok()) return absl::Status(scrape.status().code(), absl::StrCat("--target-metrics ", e.spec.name, "=", e.spec.url, ": ", scrape.status().message()));
    e.last = std::move(*scrape);
    e.last_unix_ns = NowUnixNs();
    e.result.set_scrapes(1);
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

absl::StatusOr<PrometheusScrape> TargetMetricsScraper::Endpoint::Scrape(absl::Duration timeout) {
  auto body = fetcher->Get(timeout, PrometheusLimits{}.max_bytes);
  if (!body.ok()) return body.status();
  auto scrape = ParsePrometheusText(*body);
  if (!scrape.ok()) return absl::InvalidArgumentError(absl::StrCat("not Prometheus' text format: ", scrape.status().message()));
  return scrape;
}

void TargetMetricsScraper::PhaseArmed() {
  std::unique_lock<std::mutex> lock(mu_);
  if (finished_) return;
  events_.push_back({Event::kArmed});
  const uint64_t mine = ++baselines_asked_;
  wake_.notify_all();
  baseline_done_.wait(lock, [&] { return baselines_done_ >= mine; });
}

void TargetMetricsScraper::PhaseStarted(uint32_t phase, int64_t start_unix_ns) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({Event::kStart, phase, start_unix_ns});
  }
  wake_.notify_all();
}

void TargetMetricsScraper::PhaseEnded() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back({Event::kEnd});
  }
  wake_.notify_all();
}

void TargetMetricsScraper::Loop() {
  struct Active {
    uint32_t phase;
    int64_t start_unix_ns;
    uint32_t next;  // the next boundary: it closes interval next - 1
  };
  std::optional<Active> active;
  const int64_t interval_ns = absl::ToInt64Nanoseconds(interval_);
  // A busy target answers late (JuiceFS on a loaded host: seconds): a late scrape only delays
  // its boundary (the next one catches up), so it may take up to two intervals. A baseline holds
  // up the phase's start: at most a second.
  const absl::Duration interval_timeout = std::clamp(2 * interval_, absl::Seconds(2), absl::Seconds(10));
  const absl::Duration baseline_timeout = absl::Seconds(1);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!events_.empty()) {
      const Event event = events_.front();
      events_.pop_front();
      if (event.kind == Event::kStart) {
        // Every job of a phase reports the same start: the clock is set once.
        if (!active || active->phase != event.phase || active->start_unix_ns != event.start_unix_ns) active = Active{event.phase, event.start_unix_ns, 1};
        continue;
      }
      lock.unlock();
      // A phase that is still open ends here (its last interval is partial).
      if (active) ScrapeAll(std::make_pair(active->phase, active->next - 1), interval_timeout);
      active.reset();
      if (event.kind == Event::kArmed) ScrapeAll(std::nullopt, baseline_timeout);
      lock.lock();
      if (event.kind == Event::kArmed) {
        ++baselines_done_;
        baseline_done_.notify_all();
      }
      if (event.kind == Event::kStop) return;
      continue;
    }
    if (!active) {
      wake_.wait(lock);
      continue;
    }
    const int64_t due = active->start_unix_ns + static_cast<int64_t>(active->next) * interval_ns;
    const int64_t now = NowUnixNs();
    if (now < due) {
      wake_.wait_for(lock, std::chrono::nanoseconds(due - now));
      continue;
    }
    lock.unlock();
    ScrapeAll(std::make_pair(active->phase, active->next - 1), interval_timeout);
    // Behind by more than an interval (a slow endpoint): the next scrape closes the interval now
    // under way, and the one just taken covered the ones between.
    active->next = std::max(active->next + 1, static_cast<uint32_t>((NowUnixNs() - active->start_unix_ns) / interval_ns) + 1);
    lock.lock();
  }
}

void TargetMetricsScraper::ScrapeAll(std::optional<std::pair<uint32_t, uint32_t>> interval, absl::Duration timeout) {
  for (Endpoint& e : endpoints_) {
    absl::StatusOr<PrometheusScrape> scrape = e.Scrape(timeout);
    const int64_t now = NowUnixNs();
    if (!scrape.ok()) {
      e.result.set_failed_scrapes(e.result.failed_scrapes() + 1);
      if (e.answering) {
        e.Problem(absl::StrFormat("%s: a scrape%s failed: %s", e.spec.url,
                                  interval ? absl::StrFormat(" closing interval %u of phase %u", interval->second, interval->first) : "",
                                  scrape.status().message()));
      }
      e.answering = false;
      continue;
    }
    if (!e.answering) e.Problem(absl::StrCat(e.spec.url, ": answering again"));
    e.answering = true;
    e.result.set_scrapes(e.result.scrapes() + 1);
    if (interval && e.last) {
      std::vector<PrometheusSeries> changed = PrometheusIncrease(*e.last, *scrape);
      v1::TargetMetricsInterval record;
      record.set_phase(interval->first);
      record.set_index(interval->second);
      record.set_start_unix_ns(e.last_unix_ns);
      record.set_end_unix_ns(now);
      if (changed.size() > limits_.series_per_interval && !e.trimmed) {
        e.Problem(absl::StrFormat("interval %u of phase %u: %zu series changed, the first %zu kept (and so in later intervals)", interval->second,
                                  interval->first, changed.size(), limits_.series_per_interval));
        e.trimmed = true;
      }
      const size_t wanted = std::min(changed.size(), limits_.series_per_interval);
      const size_t keep = e.records_full ? 0 : std::min(wanted, limits_.series_records - e.series_records);
      if (keep < wanted && !e.records_full) {
        // Once full, no more (said once).
        e.records_full = true;
        e.Problem(absl::StrFormat("interval %u of phase %u on: intervals keep no more series (%zu kept in all; run totals cover the rest)",
                                  interval->second, interval->first, limits_.series_records));
      }
      for (size_t i = 0; i < keep; ++i) *record.add_series() = SeriesProto(changed[i]);
      e.series_records += keep;
      if (log_line_) {
        google::protobuf::util::JsonPrintOptions options;
        options.preserve_proto_field_names = true;
        options.always_print_primitive_fields = true;  // phase 0, interval 0, kind COUNTER: every line says
        std::string json;
        if (google::protobuf::util::MessageToJsonString(record, &json, options).ok() && json.size() > 2) {
          log_line_(absl::StrCat("{\"scope\":\"target\",\"target\":\"", e.spec.name, "\",", json.substr(1), "\n"));
        }
      }
      *e.result.add_intervals() = std::move(record);
    }
    if (!e.first && !interval) {  // the first phase's baseline: the run totals count from it
      e.first = *scrape;
      e.first_unix_ns = now;
    }
    e.last = std::move(*scrape);
    e.last_unix_ns = now;
  }
}

void TargetMetricsScraper::Finish(google::protobuf::RepeatedPtrField<v1::TargetMetricsResult>* results) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
    events_.push_back({Event::kStop});
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (Endpoint& e : endpoints_) {
    if (e.first && e.last) {
      const std::vector<PrometheusSeries> total = PrometheusIncrease(*e.first, *e.last);
      for (const PrometheusSeries& s : total) *e.result.add_run_total() = SeriesProto(s);
      for (std::string& line : TargetHighlights(total, static_cast<double>(e.last_unix_ns - e.first_unix_ns) / 1e9)) {
        e.result.add_highlights(std::move(line));
      }
    } else {
      e.result.add_problems("no baseline scrape succeeded before a phase started: no run totals");
    }
    *results->Add() = e.result;
  }
}

absl::StatusOr<std::unique_ptr<TargetMetricsScraper>> StartTargetMetrics(const std::vector<TargetMetricsEndpoint>& endpoints,
                                                                         absl::Duration interval, std::function<void(std::string)> log_line,
                                                                         RunAggregator* aggregator) {
  if (endpoints.empty()) return nullptr;
  auto scraper = std::make_unique<TargetMetricsScraper>(endpoints, interval);
  if (absl::Status started = scraper->Start(std::move(log_line)); !started.ok()) return started;
  TargetMetricsScraper* s = scraper.get();
  aggregator->ObservePhases({.armed = [s] { s->PhaseArmed(); },
                             .started = [s](uint32_t phase, int64_t start_unix_ns) { s->PhaseStarted(phase, start_unix_ns); }});
  return scraper;
}

}  // namespace iofleet
