#include "controller/report_html.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/units.h"
#include "controller/block_stages.h"
#include "controller/direction_summary.h"
#include "controller/host_profiles.h"

namespace iofleet {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string Escape(const std::string& text) {
  return absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // x, y
};

// Beyond this many workers, per-worker series become their spread plus the lowest few.
constexpr size_t kWorkerSeriesLimit = 32;
constexpr size_t kLowestNamed = 3;

// One series per worker while they are few; with many, the min / median / max over the
// workers at each x, and the workers with the lowest mean by name (a straggler still stands
// out, a thousand lines do not bury it).
std::vector<Series> PerWorkerSeries(const std::map<std::string, Series>& by_worker) {
  std::vector<Series> out;
  if (by_worker.size() <= kWorkerSeriesLimit) {
    for (const auto& [name, series] : by_worker) out.push_back(series);
    return out;
  }
  std::map<double, std::vector<double>> at;  // x -> the workers' values there
  std::vector<std::pair<double, const Series*>> means;
  for (const auto& [name, series] : by_worker) {
    double sum = 0;
    for (const auto& [x, y] : series.points) {
      at[x].push_back(y);
      sum += y;
    }
    means.push_back({series.points.empty() ? 0 : sum / static_cast<double>(series.points.size()), &series});
  }
  Series low{.name = absl::StrCat("min of ", by_worker.size(), " workers"), .points = {}};
  Series median{.name = "median worker", .points = {}};
  Series high{.name = "max", .points = {}};
  for (auto& [x, values] : at) {
    std::sort(values.begin(), values.end());
    low.points.push_back({x, values.front()});
    median.points.push_back({x, values[values.size() / 2]});
    high.points.push_back({x, values.back()});
  }
  out = {low, median, high};
  std::stable_sort(means.begin(), means.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < std::min(kLowestNamed, means.size()); ++i) {
    Series named = *means[i].second;
    named.name = absl::StrCat(named.name, " (lowest)");
    out.push_back(std::move(named));
  }
  return out;
}

std::map<std::string, Series> ByName(absl::flat_hash_map<absl::string_view, Series> series) {
  std::map<std::string, Series> sorted;
  for (auto& [name, s] : series) sorted.emplace(std::string(name), std::move(s));
  return sorted;
}

// Round axis steps: 1, 2, 5 x 10^k.
double NiceStep(double range, int ticks) {
  if (range <= 0) return 1;
  const double raw = range / ticks, magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * magnitude) return m * magnitude;
  }
  return 10 * magnitude;
}

// A line chart: x in seconds from the start, y linear from 0 (or log10 when `log_y`), with
// axis titles, tick labels formatted by `format`, and a legend.
std::string LineChart(const std::string& title, const std::string& x_label, const std::string& y_label, const std::vector<Series>& series,
                      std::string (*format)(double), bool log_y = false) {
  constexpr double kW = 900, kH = 300, kLeft = 80, kRight = 20, kTop = 30, kBottom = 50;
  double x_max = 0, y_max = 0, y_min = HUGE_VAL;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
      if (y > 0) y_min = std::min(y_min, y);
    }
  }
  if (x_max <= 0) x_max = 1;
  if (y_max <= 0) y_max = 1;
  double lo = 0, hi;
  std::vector<double> ticks;
  if (log_y) {
    lo = std::floor(std::log10(std::min(y_min, y_max)));
    hi = std::ceil(std::log10(y_max));
    if (hi <= lo) hi = lo + 1;
    for (double e = lo; e <= hi; ++e) ticks.push_back(std::pow(10, e));
  } else {
    const double step = NiceStep(y_max, 5);
    hi = std::ceil(y_max / step) * step;
    for (double v = 0; v <= hi + step / 2; v += step) ticks.push_back(v);
  }
  auto px = [&](double x) { return kLeft + x / x_max * (kW - kLeft - kRight); };
  auto py = [&](double y) {
    const double f = log_y ? (std::log10(std::max(y, std::pow(10, lo))) - lo) / (hi - lo) : y / hi;
    return kTop + (1 - f) * (kH - kTop - kBottom);
  };
  std::string svg = absl::StrFormat(
      "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">"
      "<title>%s</title><text x=\"%.0f\" y=\"18\" class=\"title\">%s</text>",
      kW, kH + 20 * ((series.size() + 3) / 4), kW, kH + 20 * ((series.size() + 3) / 4), Escape(title), kLeft, Escape(title));
  for (double t : ticks) {
    absl::StrAppendFormat(&svg, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", kLeft, kW - kRight, py(t), py(t));
    absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>", kLeft - 6, py(t) + 4, Escape(format(t)));
  }
  const double x_step = NiceStep(x_max, 8);
  for (double x = 0; x <= x_max + x_step / 100; x += x_step) {
    absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%g</text>", px(x), kH - kBottom + 16, x);
  }
  absl::StrAppendFormat(&svg, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", kLeft, kW - kRight, kH - kBottom,
                        kH - kBottom);
  absl::StrAppendFormat(&svg, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.1f\" class=\"axis\"/>", kLeft, kLeft, kTop, kH - kBottom);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\" class=\"label\" text-anchor=\"middle\">%s</text>", (kLeft + kW) / 2, kH - 12,
                        Escape(x_label));
  absl::StrAppendFormat(&svg, "<text x=\"14\" y=\"%.0f\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.0f)\">%s</text>",
                        (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2, Escape(y_label));
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % 8];
    std::string points;
    for (const auto& [x, y] : series[i].points) absl::StrAppendFormat(&points, "%.1f,%.1f ", px(x), py(y));
    absl::StrAppendFormat(&svg, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>", color, points);
    const double lx = kLeft + static_cast<double>(i % 4) * 210, ly = kH + 4 + 20 * static_cast<double>(i / 4);
    absl::StrAppendFormat(&svg, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" class=\"legend\">%s</text>",
                          lx, ly - 4, color, lx + 20, ly + 1, Escape(series[i].name));
  }
  return svg + "</svg>\n";
}

// Grouped bars: one group per category, one bar per series, y linear from 0 or log10.
std::string BarChart(const std::string& title, const std::string& y_label, const std::vector<std::string>& categories,
                     const std::vector<Series>& series, std::string (*format)(double), bool log_y = false) {
  constexpr double kW = 900, kH = 320, kLeft = 80, kRight = 20, kTop = 30, kBottom = 70;
  double y_max = 0, y_min = HUGE_VAL;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      y_max = std::max(y_max, y);
      if (y > 0) y_min = std::min(y_min, y);
    }
  }
  if (y_max <= 0) y_max = 1;
  double lo = 0, hi;
  std::vector<double> ticks;
  if (log_y) {
    lo = std::floor(std::log10(std::min(y_min, y_max)));
    hi = std::max(lo + 1, std::ceil(std::log10(y_max)));
    for (double e = lo; e <= hi; ++e) ticks.push_back(std::pow(10, e));
  } else {
    const double step = NiceStep(y_max, 5);
    hi = std::ceil(y_max / step) * step;
    for (double v = 0; v <= hi + step / 2; v += step) ticks.push_back(v);
  }
  auto py = [&](double y) {
    const double f = log_y ? (std::log10(std::max(y, std::pow(10, lo))) - lo) / (hi - lo) : y / hi;
    return kTop + (1 - f) * (kH - kTop - kBottom);
  };
  const double height = kH + 20 * ((series.size() + 3) / 4);
  std::string svg = absl::StrFormat("<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">"
                                    "<title>%s</title><text x=\"%.0f\" y=\"18\" class=\"title\">%s</text>",
                                    kW, height, kW, height, Escape(title), kLeft, Escape(title));
  for (double t : ticks) {
    absl::StrAppendFormat(&svg, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", kLeft, kW - kRight, py(t), py(t));
    absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>", kLeft - 6, py(t) + 4, Escape(format(t)));
  }
  const double group = (kW - kLeft - kRight) / std::max<size_t>(1, categories.size());
  const double bar = group * 0.8 / std::max<size_t>(1, series.size());
  for (size_t c = 0; c < categories.size(); ++c) {
    absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.0f\" class=\"tick\" text-anchor=\"middle\">%s</text>", kLeft + group * (c + 0.5),
                          kH - kBottom + 16, Escape(categories[c]));
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % 8];
    for (const auto& [x, y] : series[i].points) {
      const double left = kLeft + group * x + group * 0.1 + bar * static_cast<double>(i);
      absl::StrAppendFormat(&svg, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s</title></rect>",
                            left, py(y), bar * 0.9, std::max(0.0, kH - kBottom - py(y)), color, Escape(format(y)));
    }
    const double lx = kLeft + static_cast<double>(i % 4) * 210, ly = kH - 24 + 20 * static_cast<double>(i / 4);
    absl::StrAppendFormat(&svg, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"8\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" class=\"legend\">%s</text>",
                          lx, ly - 6, color, lx + 20, ly + 2, Escape(series[i].name));
  }
  absl::StrAppendFormat(&svg, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", kLeft, kW - kRight, kH - kBottom, kH - kBottom);
  absl::StrAppendFormat(&svg, "<text x=\"14\" y=\"%.0f\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.0f)\">%s</text>",
                        (kTop + kH - kBottom) / 2, (kTop + kH - kBottom) / 2, Escape(y_label));
  return svg + "</svg>\n";
}

double PercentileNs(const v1::LatencySummary& summary, double p) { return static_cast<double>(PercentileValue(summary, p)); }

std::string FormatBps(double v) { return FormatBytes(v) + "/s"; }
std::string FormatPercent(double v) { return absl::StrFormat("%g%%", v); }

// The job's latency distribution: share of operations per bucket, bucket bounds on a log
// axis (drawn as a line over the buckets' midpoints, one series per direction).
std::string Distribution(const v1::JobResult& job) {
  std::vector<Series> series;
  for (const v1::DirectionResult& d : job.directions()) {
    if (!d.has_histogram() || d.histogram().count() == 0) continue;
    // Group our fine buckets per 1/8 decade so the curve is readable.
    std::map<int, uint64_t> groups;
    ForEachBucket(d.histogram(), [&](uint32_t index, uint64_t count) {
      const double mid = static_cast<double>(HistogramLayout::BucketMidpoint(index));
      groups[static_cast<int>(std::floor(std::log10(std::max(mid, 1.0)) * 8))] += count;
    });
    Series s{d.direction(), {}};
    for (const auto& [g, count] : groups) {
      s.points.push_back({static_cast<double>(g) / 8, 100.0 * static_cast<double>(count) / static_cast<double>(d.histogram().count())});
    }
    series.push_back(std::move(s));
  }
  if (series.empty()) return "";
  // x is log10(ns): label ticks as latencies.
  std::string svg = LineChart(absl::StrCat("Latency distribution, job ", job.name(), " (share of operations per 1/8 decade)"),
                              "latency, log scale: 0 = 1 ns, 3 = 1 us, 6 = 1 ms, 9 = 1 s", "share of operations", series, &FormatPercent);
  return svg;
}


std::string PageStart(const std::string& title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", Escape(title), "</title>\n<style>\n",
      "body{font-family:sans-serif;margin:24px;color:#222}h1{font-size:22px}h2{font-size:18px;margin-top:32px}"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
      ".chart{display:block;margin:12px 0;background:#fff}.title{font-size:15px;font-weight:bold}.tick{font-size:11px;fill:#444}"
      ".label{font-size:12px;fill:#222}.legend{font-size:12px}.grid{stroke:#e4e4e4}.axis{stroke:#444}.problems{color:#b00}\n",
      "</style></head><body>\n<h1>", Escape(title), "</h1>\n");
}

std::string Problems(const google::protobuf::RepeatedPtrField<std::string>& problems) {
  if (problems.empty()) return "";
  std::string html = "<div class=\"problems\"><h2>Problems</h2><ul>";
  for (const std::string& p : problems) absl::StrAppend(&html, "<li>", Escape(p), "</li>");
  return html + "</ul></div>\n";
}

std::string HostsTable(const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers) {
  std::string html =
      "<h2>Hosts</h2><table><tr><th>worker</th><th>host</th><th>kernel</th><th>CPUs</th><th>memory</th><th>target</th><th>filesystem</th><th>source</th><th>details</th><th>differs</th></tr>\n";
  // Many workers: the first host, the ones that differ, and how many are like the first.
  const bool many = static_cast<size_t>(workers.size()) > kWorkerSeriesLimit;
  int alike = 0;
  for (const v1::WorkerInfo& w : workers) {
    if (many && &w != &workers[0] && w.differs().empty()) {
      ++alike;
      continue;
    }
    const v1::HostFacts& f = w.facts();
    std::vector<v1::TargetFacts> targets(f.targets().begin(), f.targets().end());
    if (targets.empty()) targets.emplace_back();
    for (const v1::TargetFacts& t : targets) {
      std::string details;
      if (!t.nfs_version().empty()) details = absl::StrCat("nfs vers=", t.nfs_version(), " rsize=", t.rsize(), " wsize=", t.wsize());
      if (!t.scheduler().empty()) details = absl::StrCat(t.device(), " scheduler=", t.scheduler(), " nr_requests=", t.nr_requests());
      if (!t.fuse_daemon().empty()) details = absl::StrCat("FUSE ", t.fuse_daemon());
      absl::StrAppend(&html, "<tr><td>", Escape(w.address()), "</td><td>", Escape(f.hostname().empty() ? w.hostname() : f.hostname()), "</td><td>",
                      Escape(f.kernel()), "</td><td>", f.cpus(), "</td><td>", FormatBytes(static_cast<double>(f.memory_bytes())), "</td><td>",
                      Escape(t.path()), "</td><td>", Escape(t.fs_type()), "</td><td>", Escape(t.mount_source()), "</td><td>", Escape(details),
                      "</td><td>", Escape(absl::StrJoin(w.differs(), "; ")), "</td></tr>\n");
    }
  }
  if (alike > 0) absl::StrAppend(&html, "<tr><td colspan=\"10\">", alike, " other workers' hosts are like the first (no differences found; the JSON report lists each)</td></tr>\n");
  return html + "</table>\n";
}

std::string FormatRate(double v) { return FormatCount(v) + "/s"; }

// A table of slow requests, named: where to look in the servers' logs. Each row is labelled by
// two columns (job and direction, or iteration and operation).
struct SlowRow {
  std::string first, second;
  const v1::SlowRequest* request;
};
std::string SlowestTable(const std::string& title, const std::pair<std::string, std::string>& labels, const std::vector<SlowRow>& rows,
                         bool offsets) {
  if (rows.empty()) return "";
  std::string html = absl::StrCat("<h2>", Escape(title), "</h2><table><tr><th>", Escape(labels.first), "</th><th>", Escape(labels.second),
                                  "</th><th>latency</th><th>completed (UTC)</th><th>worker</th><th>thread</th><th>", offsets ? "file" : "path",
                                  "</th>", offsets ? "<th>offset</th>" : "", "</tr>\n");
  for (const SlowRow& row : rows) {
    const v1::SlowRequest& r = *row.request;
    absl::StrAppend(&html, "<tr><td>", Escape(row.first), "</td><td>", Escape(row.second), "</td><td>",
                    FormatDurationNs(static_cast<double>(r.latency_ns())), "</td><td>",
                    Escape(absl::FormatTime("%H:%M:%E3S", absl::FromUnixNanos(r.complete_unix_ns()), absl::UTCTimeZone())), "</td><td>",
                    Escape(r.worker()), "</td><td>", r.thread(), "</td><td>", Escape(r.file()), "</td>",
                    offsets ? absl::StrCat("<td>", r.offset(), "</td>") : "", "</tr>\n");
  }
  return html + "</table>\n";
}

// --target-metrics: each endpoint's highlights, problems, and its busiest counters per second
// over the intervals (the system under test's view beside the clients' charts above).
std::string TargetMetricsSection(const google::protobuf::RepeatedPtrField<v1::TargetMetricsResult>& targets) {
  std::string html;
  for (const v1::TargetMetricsResult& t : targets) {
    absl::StrAppend(&html, "<h2>Target metrics: ", Escape(t.name()), "</h2><p>", Escape(t.url()), ": ", t.scrapes(), " scrapes, ",
                    t.intervals_size(), " intervals", t.failed_scrapes() ? absl::StrCat(", ", t.failed_scrapes(), " failed") : "", "</p><ul>");
    for (const std::string& line : t.highlights()) absl::StrAppend(&html, "<li>", Escape(line), "</li>");
    html += "</ul>\n";
    if (!t.problems().empty()) html += Problems(t.problems());
    // The six counters that grew most over the run, as rates per interval.
    std::vector<std::pair<double, std::string>> busiest;
    for (const v1::TargetMetricSeries& s : t.run_total()) {
      if (s.kind() == v1::TargetMetricSeries::COUNTER && s.value() > 0) busiest.emplace_back(-s.value(), s.name() + s.labels());
    }
    std::sort(busiest.begin(), busiest.end());
    if (busiest.size() > 6) busiest.resize(6);
    if (busiest.empty() || t.intervals().empty()) continue;
    std::map<std::string, Series> rates;
    for (const auto& [minus, key] : busiest) rates[key].name = key;
    const int64_t start = t.intervals(0).start_unix_ns();
    for (const v1::TargetMetricsInterval& in : t.intervals()) {
      const double x = static_cast<double>(in.end_unix_ns() - start) / 1e9;
      const double seconds = std::max(1e-9, static_cast<double>(in.end_unix_ns() - in.start_unix_ns()) / 1e9);
      // 0 where the interval has no increase of that counter; one pass over its series.
      for (auto& [key, series] : rates) series.points.push_back({x, 0});
      for (const v1::TargetMetricSeries& s : in.series()) {
        if (s.kind() != v1::TargetMetricSeries::COUNTER) continue;
        auto it = rates.find(s.name() + s.labels());
        if (it != rates.end()) it->second.points.back().second = s.value() / seconds;
      }
    }
    std::vector<Series> lines;
    for (const auto& [key, series] : rates) lines.push_back(series);
    html += LineChart(absl::StrCat(t.name(), ": its busiest counters (log scale)"), "seconds since the first phase started", "per second", lines,
                      &FormatCount, /*log_y=*/true);
  }
  return html;
}

// --block-stages: per host and device the stage split beside the application's latency, and
// the cluster's Q2D and D2C p99 per interval.
std::string BlockStagesSection(const v1::RunReport& report) {
  if (report.block_devices().empty()) return "";
  std::string html =
      "<h2>Block stages</h2><p>Traced in the kernel on each host. Q2D: queue to dispatch (plugging, scheduler, merging, tags); "
      "D2C: dispatch to completion (the device); Q2C: both.</p><table><tr><th>host</th><th>device</th><th>scheduler</th><th>direction</th>"
      "<th>application p50 / p99</th><th>Q2D p50 / p99</th><th>D2C p50 / p99</th><th>Q2C p50 / p99</th><th>requests</th><th>mean size</th>"
      "<th>sequential</th></tr>\n";
  auto pair = [](const v1::LatencyHistogramProto& h) {
    if (h.count() == 0) return std::string("-");
    const std::vector<uint64_t> p = ValuesAtPercentiles(h, {50, 99});
    return absl::StrCat(FormatDurationNs(static_cast<double>(p[0])), " / ", FormatDurationNs(static_cast<double>(p[1])));
  };
  // Each host's devices, then (with more than one) the cluster: all of them merged.
  google::protobuf::RepeatedPtrField<v1::BlockDeviceStages> rows = report.block_devices();
  if (rows.size() > 1) {
    v1::BlockDeviceStages* cluster = rows.Add();
    cluster->set_host("cluster");
    cluster->set_device(absl::StrCat(report.block_devices_size(), " devices"));
    for (const v1::BlockDeviceStages& device : report.block_devices()) MergeBlockDirections(device.directions(), cluster->mutable_directions());
  }
  for (const v1::BlockDeviceStages& device : rows) {
    for (const v1::BlockStageDirection& d : device.directions()) {
      const double requests = static_cast<double>(d.request_bytes().count());
      absl::StrAppend(&html, "<tr><td>", Escape(device.host()), "</td><td>", Escape(device.device()), "</td><td>", Escape(device.scheduler()), "</td><td>",
                      Escape(d.direction()), "</td><td>", pair(d.application_latency()), "</td><td>", pair(d.queue_to_dispatch()), "</td><td>",
                      pair(d.dispatch_to_complete()), "</td><td>", pair(d.queue_to_complete()), "</td><td>", FormatCount(requests), "</td><td>",
                      requests > 0 ? FormatBytes(static_cast<double>(d.request_bytes().sum_ns()) / requests) : "-", "</td><td>",
                      requests > 0 ? absl::StrFormat("%.0f%%", 100.0 * static_cast<double>(d.sequential()) / requests) : "-", "</td></tr>\n");
    }
  }
  html += "</table>\n";
  if (report.block_intervals().empty()) return html;
  std::map<std::string, Series> lines;
  const int64_t start = report.block_intervals(0).start_unix_ns();
  for (const v1::BlockStagesInterval& in : report.block_intervals()) {
    const double x = static_cast<double>(in.end_unix_ns() - start) / 1e9;
    for (const v1::BlockStageDirection& d : in.directions()) {
      for (const auto& [stage, h] : {std::pair<const char*, const v1::LatencyHistogramProto*>{"Q2D", &d.queue_to_dispatch()}, {"D2C", &d.dispatch_to_complete()}}) {
        if (h->count() == 0) continue;
        Series& series = lines[absl::StrCat(d.direction(), " ", stage, " p99")];
        series.name = absl::StrCat(d.direction(), " ", stage, " p99");
        series.points.push_back({x, static_cast<double>(ValuesAtPercentiles(*h, {99})[0])});
      }
    }
  }
  std::vector<Series> series;
  for (const auto& [name, s] : lines) series.push_back(s);
  html += LineChart("Block stages per interval, all hosts (log scale)", "seconds since the first phase started", "latency", series, &FormatDurationNs,
                    /*log_y=*/true);
  return html;
}

}  // namespace

std::string RenderMdtestHtmlReport(const v1::MdtestReport& report) {
  std::string html = PageStart("iofleet mdtest");
  absl::StrAppend(&html, "<p>", Escape(report.command_line()), "<br>", report.tasks(), " tasks on ", report.workers_size(), " workers, ",
                  report.items_per_task(), " items per task, ", report.iterations(), " iteration(s)</p>\n", Problems(report.problems()));
  html += "<h2>Phases</h2><table><tr><th>iteration</th><th>operation</th><th>items</th><th>seconds</th><th>rate</th><th>p50</th><th>p99</th><th>max</th><th>errors</th></tr>\n";
  std::vector<std::string> categories;
  Series rate{"items per second", {}}, p50{"p50", {}}, p99{"p99", {}};
  std::map<std::string, Series> per_worker;
  for (const v1::MdtestPhaseResult& p : report.phases()) {
    absl::StrAppend(&html, "<tr><td>", p.iteration(), "</td><td>", Escape(p.operation()), "</td><td>", p.items(), "</td><td>",
                    absl::StrFormat("%.3f", p.seconds()), "</td><td>", FormatRate(p.rate()), "</td><td>", FormatDurationNs(PercentileNs(p.latency(), 50)),
                    "</td><td>", FormatDurationNs(PercentileNs(p.latency(), 99)), "</td><td>", FormatDurationNs(static_cast<double>(p.latency().max_ns())),
                    "</td><td>", p.errors(), "</td></tr>\n");
    const double x = static_cast<double>(categories.size());
    categories.push_back(report.iterations() > 1 ? absl::StrCat(p.operation(), " #", p.iteration()) : p.operation());
    rate.points.push_back({x, p.rate()});
    p50.points.push_back({x, PercentileNs(p.latency(), 50)});
    p99.points.push_back({x, PercentileNs(p.latency(), 99)});
    for (const v1::WorkerResult& w : p.workers()) {
      double ops = 0;
      for (const v1::DirectionResult& d : w.directions()) ops += static_cast<double>(d.ops());
      per_worker[w.worker()].name = w.worker();
      // Over the worker's own time in the phase, so a slow client shows as a lower rate.
      const double seconds = w.elapsed_ns() > 0 ? static_cast<double>(w.elapsed_ns()) / 1e9 : p.seconds();
      per_worker[w.worker()].points.push_back({x, seconds > 0 ? ops / seconds : 0});
    }
  }
  html += "</table>\n";
  // Short labels under the bars: "File creation" -> "File creation" fits at 900 px for ~8 phases.
  html += BarChart("Rate per phase (items per second, all tasks)", "items per second", categories, {rate}, &FormatRate);
  html += BarChart("Latency of single operations per phase (log scale)", "latency", categories, {p50, p99}, &FormatDurationNs, /*log_y=*/true);
  const std::vector<Series> workers = PerWorkerSeries(per_worker);
  if (!workers.empty()) html += BarChart("Rate per worker and phase (a slow client stands out)", "items per second", categories, workers, &FormatRate);
  std::vector<SlowRow> slowest;
  for (const v1::MdtestPhaseResult& p : report.phases()) {
    for (int i = 0; i < std::min(p.slowest_size(), 3); ++i) slowest.push_back({absl::StrCat(p.iteration()), p.operation(), &p.slowest(i)});
  }
  html += SlowestTable("Slowest operations (3 per phase)", {"iteration", "operation"}, slowest, /*offsets=*/false);
  html += TargetMetricsSection(report.target_metrics());
  for (const auto& [name, svg] : ProfileGraphs(report.profiles(), report.workers())) {
    absl::StrAppend(&html, "<h2>CPU profile: ", Escape(name), "</h2><div class=\"flame\">", svg, "</div>\n");
  }
  html += HostsTable(report.workers());
  return html + "</body></html>\n";
}

std::string RenderHtmlReport(const v1::RunReport& report) {
  std::string html = PageStart("iofleet run " + report.run_id());
  absl::StrAppend(&html, "<p>", Escape(report.job_source()), " on ",
      report.workers_size(), " workers, started ",
      Escape(absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixNanos(report.start_unix_ns()), absl::UTCTimeZone())), "</p>\n",
      Problems(report.problems()));
  html += "<h2>Summary</h2><table><tr><th>job</th><th>direction</th><th>IOPS</th><th>bandwidth</th><th>mean</th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th></tr>\n";
  for (const v1::JobResult& job : report.jobs()) {
    for (const v1::DirectionResult& d : job.directions()) {
      absl::StrAppend(&html, "<tr><td>", Escape(job.name()), "</td><td>", d.direction(), "</td><td>", FormatCount(d.iops()), "</td><td>",
                      FormatBps(d.bandwidth_bytes_per_sec()), "</td><td>", FormatDurationNs(d.latency().mean_ns()), "</td><td>",
                      FormatDurationNs(PercentileNs(d.latency(), 50)), "</td><td>", FormatDurationNs(PercentileNs(d.latency(), 99)), "</td><td>",
                      FormatDurationNs(PercentileNs(d.latency(), 99.9)), "</td><td>", FormatDurationNs(static_cast<double>(d.latency().max_ns())),
                      "</td><td>", d.errors(), "</td></tr>\n");
    }
  }
  html += "</table>\n";
  std::vector<SlowRow> slowest;
  for (const v1::JobResult& job : report.jobs()) {
    for (const v1::DirectionResult& d : job.directions()) {
      for (const v1::SlowRequest& r : d.slowest()) slowest.push_back({job.name(), d.direction(), &r});
    }
  }
  html += SlowestTable("Slowest requests", {"job", "direction"}, slowest, /*offsets=*/true);
  for (const v1::JobResult& job : report.jobs()) {
    if (job.intervals().empty()) continue;
    absl::StrAppend(&html, "<h2>Job ", Escape(job.name()), " (", Escape(job.rw()), ", bs=", Escape(job.bs()), ", ", Escape(job.ioengine()),
                    ", iodepth ", job.iodepth(), ")</h2>\n");
    const int64_t start = job.intervals(0).start_unix_ns();
    // The job's last interval is usually a sliver (the job ended just after a boundary):
    // its rates are noise over a few ms, so intervals under half the usual length are left
    // out of the charts (they are in the totals and the interval logs).
    std::vector<int64_t> spans;
    for (const v1::IntervalResult& in : job.intervals()) spans.push_back(in.end_unix_ns() - in.start_unix_ns());
    std::sort(spans.begin(), spans.end());
    const int64_t usual = spans[spans.size() / 2];
    std::map<std::string, Series> iops, bw, lat;
    // Each worker's series, found by hash as its points come (an interval of a thousand
    // workers is a thousand lookups) and put in order by name once, at the end.
    absl::flat_hash_map<absl::string_view, Series> workers;
    for (const v1::IntervalResult& in : job.intervals()) {
      if (in.end_unix_ns() - in.start_unix_ns() < usual / 2) continue;
      const double x = static_cast<double>(in.end_unix_ns() - start) / 1e9;
      const double seconds = std::max(1e-9, static_cast<double>(in.end_unix_ns() - in.start_unix_ns()) / 1e9);
      for (const v1::DirectionResult& d : in.directions()) {
        iops[d.direction()].name = d.direction();
        iops[d.direction()].points.push_back({x, d.iops()});
        if (d.bytes() > 0) {
          bw[d.direction()].name = d.direction();
          bw[d.direction()].points.push_back({x, d.bandwidth_bytes_per_sec()});
        }
        for (double p : {50.0, 99.0, 99.9}) {
          const std::string name = absl::StrCat(d.direction(), " p", p);
          lat[name].name = name;
          lat[name].points.push_back({x, PercentileNs(d.latency(), p)});
        }
      }
      for (const v1::WorkerInterval& w : in.workers()) {
        Series& series = workers[w.worker()];
        if (series.name.empty()) series.name = w.worker();
        series.points.push_back({x, static_cast<double>(w.ops()) / seconds});
      }
    }
    auto values = [](const std::map<std::string, Series>& m) {
      std::vector<Series> v;
      for (const auto& [name, s] : m) v.push_back(s);
      return v;
    };
    html += LineChart("Cluster IOPS", "seconds since the job started", "operations per second", values(iops), &FormatCount);
    if (!bw.empty()) html += LineChart("Cluster bandwidth", "seconds since the job started", "bytes per second", values(bw), &FormatBps);
    html += LineChart("Latency p50 / p99 / p99.9 per interval (log scale)", "seconds since the job started", "latency", values(lat),
                      &FormatDurationNs, /*log_y=*/true);
    html += LineChart("Throughput per worker (a straggler stands out)", "seconds since the job started", "operations per second",
                      PerWorkerSeries(ByName(std::move(workers))), &FormatCount);
    html += Distribution(job);
  }
  html += TargetMetricsSection(report.target_metrics());
  html += BlockStagesSection(report);
  for (const auto& [name, svg] : ProfileGraphs(report.profiles(), report.workers())) {
    absl::StrAppend(&html, "<h2>CPU profile: ", Escape(name), "</h2><div class=\"flame\">", svg, "</div>\n");
  }
  html += HostsTable(report.workers());
  html += "</body></html>\n";
  return html;
}

}  // namespace iofleet
