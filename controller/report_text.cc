#include "controller/report_text.h"

#include <algorithm>
#include <vector>
#include <map>
#include <optional>
#include <functional>
#include <cctype>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/pretty_json.h"
#include "common/units.h"
#include "controller/block_stages.h"
#include "controller/host_profiles.h"
#include "controller/latency_shares.h"
#include "controller/direction_summary.h"
#include "google/protobuf/util/json_util.h"

namespace iofleet {
namespace {

// fio picks one latency unit per block so the percentile table stays readable.
struct LatencyUnit {
  const char* name;
  double ns;
};
LatencyUnit UnitFor(uint64_t max_ns) {
  if (max_ns >= 10'000'000'000ull) return {"msec", 1e6};
  if (max_ns >= 10'000ull) return {"usec", 1e3};
  return {"nsec", 1};
}

std::string FormatScaled(double value) {
  if (value >= 100) return absl::StrFormat("%.0f", value);
  if (value >= 10) return absl::StrFormat("%.1f", value);
  return absl::StrFormat("%.2f", value);
}

// The latency fio shows percentiles of: clat (equal to lat for synchronous engines).
const v1::LatencySummary& Clat(const v1::DirectionResult& d) {
  return d.has_completion_latency() ? d.completion_latency() : d.latency();
}

// A clat percentile for a table cell; "-" when the job measures no latency (disable_lat...).
std::string ClatPercentileText(const v1::DirectionResult& d, double p) {
  if (!d.has_latency() && !d.has_completion_latency()) return "-";
  return FormatDurationNs(static_cast<double>(PercentileValue(Clat(d), p)));
}

void RenderPercentiles(const char* name, const v1::LatencySummary& lat, uint64_t ops, const std::string& indent, std::string* out) {
  const LatencyUnit unit = UnitFor(lat.max_ns());
  absl::StrAppendFormat(out, "%s    %s percentiles (%s), %s ops:\n", indent, name, unit.name, FormatCount(static_cast<double>(ops)));
  for (int i = 0; i < lat.percentiles_size(); ++i) {
    if (i % 4 == 0) absl::StrAppend(out, indent, "     |");
    const v1::Percentile& p = lat.percentiles(i);
    absl::StrAppendFormat(out, " %6.2fth=[%7s]%s", p.percentile(), FormatScaled(p.value_ns() / unit.ns),
                          (i % 4 == 3 || i + 1 == lat.percentiles_size()) ? "\n" : ",");
  }
}

// One direction: rates, fio's slat/clat/lat lines (slat only for queued requests), then the
// percentile blocks asked for (clat's by default, as fio prints).
void RenderDirection(const v1::DirectionResult& d, uint64_t elapsed_ns, bool clat_block, bool lat_block,
                     const std::string& indent, std::string* out) {
  absl::StrAppendFormat(out, "%s%6s: IOPS=%s, BW=%s (%s in %s)%s\n", indent, d.direction(), FormatCount(d.iops()),
                        FormatBandwidth(d.bandwidth_bytes_per_sec()), FormatBytes(static_cast<double>(d.bytes())),
                        FormatDurationNs(static_cast<double>(elapsed_ns)),
                        d.errors() ? absl::StrCat(", ERRORS=", d.errors()) : "");
  if (!d.has_latency()) return;
  auto line = [&](const char* name, const v1::LatencySummary& s) {
    const LatencyUnit unit = UnitFor(s.max_ns());
    absl::StrAppendFormat(out, "%s    %4s (%s): min=%s, max=%s, avg=%s, stdev=%s\n", indent, name, unit.name,
                          FormatScaled(s.min_ns() / unit.ns), FormatScaled(s.max_ns() / unit.ns),
                          FormatScaled(s.mean_ns() / unit.ns), FormatScaled(s.stddev_ns() / unit.ns));
  };
  if (d.has_submit_latency()) line("slat", d.submit_latency());
  if (d.has_completion_latency()) line("clat", d.completion_latency());
  // fio's per-priority clat of a cmdprio job: "clat prio CLASS/LEVEL".
  for (const v1::PriorityResult& p : d.priorities()) {
    // With a hint, fio's "class/level/hint".
    const std::string name = absl::StrCat("clat prio ", p.priority_class(), "/", p.level(), p.hint() ? absl::StrCat("/", p.hint()) : "");
    const LatencyUnit unit = UnitFor(p.completion_latency().max_ns());
    absl::StrAppendFormat(out, "%s    %s (%s): min=%s, max=%s, avg=%s, stdev=%s\n", indent, name, unit.name,
                          FormatScaled(p.completion_latency().min_ns() / unit.ns), FormatScaled(p.completion_latency().max_ns() / unit.ns),
                          FormatScaled(p.completion_latency().mean_ns() / unit.ns), FormatScaled(p.completion_latency().stddev_ns() / unit.ns));
  }
  line("lat", d.latency());
  if (clat_block) RenderPercentiles(d.has_completion_latency() ? "clat" : "lat", Clat(d), d.ops(), indent, out);
  if (clat_block) {
    for (const v1::PriorityResult& p : d.priorities()) {
      const std::string name = absl::StrFormat("clat prio %u/%u%s (%.2f%% of IOs)", p.priority_class(), p.level(),
                                               p.hint() ? absl::StrCat("/", p.hint()) : "",
                                               d.ops() ? 100.0 * static_cast<double>(p.ops()) / static_cast<double>(d.ops()) : 0.0);
      RenderPercentiles(name.c_str(), p.completion_latency(), p.ops(), indent, out);
    }
  }
  if (lat_block) RenderPercentiles("lat", d.latency(), d.ops(), indent, out);
  // The slowest requests, named (the JSON has up to 10): where to look at 3 a.m.
  for (int i = 0; i < std::min(d.slowest_size(), 3); ++i) {
    const v1::SlowRequest& r = d.slowest(i);
    absl::StrAppendFormat(out, "%s    %s: %s at %s UTC  %s thread %d  %s @ %d\n", indent, i == 0 ? "slowest" : "       ",
                          FormatDurationNs(static_cast<double>(r.latency_ns())),
                          absl::FormatTime("%H:%M:%E3S", absl::FromUnixNanos(r.complete_unix_ns()), absl::UTCTimeZone()), r.worker(), r.thread(),
                          r.file(), r.offset());
  }
}

// fio's lines after the directions: latency distribution, cpu, issued counts.
void RenderJobFooter(const v1::JobResult& job, std::string* out) {
  std::vector<const v1::DirectionResult*> io_directions;
  uint64_t issued[4] = {0, 0, 0, 0};
  for (const v1::DirectionResult& d : job.directions()) {
    if (d.direction() == "sync") {
      issued[3] = d.ops();
      continue;
    }
    issued[d.direction() == "read" ? 0 : d.direction() == "write" ? 1 : 2] = d.ops();
    io_directions.push_back(&d);
  }
  const LatencyHistogram merged = MergedLatency(io_directions);
  std::string unit;
  for (const LatencyShare& share : LatencyShares(merged)) {
    if (share.percent < 0.01) continue;  // fio leaves out buckets under 0.01%
    if (share.unit != unit) {
      absl::StrAppend(out, unit.empty() ? "" : "\n", "    lat (", share.unit, ")   : ");
      unit = share.unit;
    } else {
      absl::StrAppend(out, ", ");
    }
    absl::StrAppendFormat(out, "%s=%.2f%%", share.bound, share.percent);
  }
  if (!unit.empty()) absl::StrAppend(out, "\n");
  absl::StrAppendFormat(out, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%d\n", job.usr_cpu(), job.sys_cpu(), job.context_switches());
  auto distribution = [&](const char* label, const google::protobuf::RepeatedField<uint64_t>& counts,
                          const std::vector<const char*>& names) {
    uint64_t total = 0;
    for (uint64_t c : counts) total += c;
    absl::StrAppend(out, label);
    for (size_t b = 0; b < names.size(); ++b) {
      const double pct = total && static_cast<int>(b) < counts.size() ? 100.0 * static_cast<double>(counts[b]) / static_cast<double>(total) : 0;
      absl::StrAppendFormat(out, "%s%s=%.1f%%", b ? ", " : "", names[b], pct);
    }
    absl::StrAppend(out, "\n");
  };
  distribution("  IO depths    : ", job.depth_counts(), {"1", "2", "4", "8", "16", "32", ">=64"});
  distribution("     submit    : ", job.submit_counts(), {"0", "4", "8", "16", "32", "64", ">=64"});
  distribution("     complete  : ", job.complete_counts(), {"0", "4", "8", "16", "32", "64", ">=64"});
  absl::StrAppendFormat(out, "     issued rwts: total=%d,%d,%d,%d\n", issued[0], issued[1], issued[2], issued[3]);
}

// Beyond this many workers a job's per-worker lines become a distribution and its outliers.
constexpr int kWorkerLinesLimit = 32;
// Outliers named at each end.
constexpr size_t kOutliersNamed = 3;

// The workers behind relays, as their relays summed them up (all jobs of the run): the spread
// of their IOPS and p99 and the outliers by name, and those with late intervals or lost.
void RenderRelayedWorkers(const v1::RunReport& report, std::string* out) {
  if (report.relayed_workers().empty()) return;
  const auto& workers = report.relayed_workers();
  absl::StrAppendFormat(out, "\nWorkers behind relays (%d; all jobs; the JSON report lists each under relayed_workers):\n", workers.size());
  struct Entry {
    double iops, p99;
    const v1::RelayedWorkerSummary* w;
  };
  std::vector<Entry> entries;
  for (const v1::RelayedWorkerSummary& w : workers) {
    const double seconds = static_cast<double>(w.elapsed_ns()) / 1e9;
    entries.push_back({seconds > 0 ? static_cast<double>(w.ops()) / seconds : 0, static_cast<double>(w.latency_p99_ns()), &w});
  }
  auto spread = [&](auto value, const std::function<std::string(double)>& format) {
    std::vector<double> values;
    for (const Entry& e : entries) values.push_back(value(e));
    std::sort(values.begin(), values.end());
    auto at = [&](double q) { return format(values[static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5)]); };
    return absl::StrFormat("min %s  p10 %s  median %s  p90 %s  max %s", at(0), at(0.1), at(0.5), at(0.9), at(1));
  };
  auto format_count = [](double v) { return FormatCount(v); };
  auto format_ns = [](double v) { return FormatDurationNs(v); };
  absl::StrAppendFormat(out, "  IOPS %s\n", spread([](const Entry& e) { return e.iops; }, format_count));
  absl::StrAppendFormat(out, "  p99  %s\n", spread([](const Entry& e) { return e.p99; }, format_ns));
  auto name_ends = [&](const char* label, auto key, bool highest_first, const std::function<std::string(double)>& format) {
    std::vector<Entry> ranked = entries;
    std::stable_sort(ranked.begin(), ranked.end(), [&](const Entry& a, const Entry& b) { return highest_first ? key(a) > key(b) : key(a) < key(b); });
    std::vector<std::string> named;
    for (size_t i = 0; i < std::min(kOutliersNamed, ranked.size()); ++i) named.push_back(absl::StrCat(ranked[i].w->address(), " ", format(key(ranked[i]))));
    absl::StrAppendFormat(out, "  %s: %s\n", label, absl::StrJoin(named, ", "));
  };
  name_ends("lowest IOPS", [](const Entry& e) { return e.iops; }, false, format_count);
  name_ends("highest p99", [](const Entry& e) { return e.p99; }, true, format_ns);
  int late = 0, lost = 0;
  for (const v1::RelayedWorkerSummary& w : workers) {
    late += w.late_intervals() > 0;
    lost += !w.lost().empty();
  }
  if (late > 0) absl::StrAppendFormat(out, "  %d worker(s) reported intervals after their relay's grace (sent on as amendments)\n", late);
  if (lost > 0) absl::StrAppendFormat(out, "  %d worker(s) lost (named among the problems)\n", lost);
}

// The workers' hosts as the per-worker lines need them: all of them, and those that differ from
// the others by address. Made once per report: looking each worker's host up among all of them,
// for every line, was quadratic (8 jobs of 1,024 workers: 8 million address comparisons, a
// tenth of the text report's time).
struct WorkerHosts {
  explicit WorkerHosts(const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& all) : infos(&all) {
    for (const v1::WorkerInfo& info : all) {
      if (!info.differs().empty()) differing.emplace(info.address(), &info);
    }
  }
  // The host differences of the worker at `address`, or none.
  const google::protobuf::RepeatedPtrField<std::string>* Differences(const std::string& address) const {
    const auto it = differing.find(address);
    return it == differing.end() ? nullptr : &it->second->differs();
  }
  const google::protobuf::RepeatedPtrField<v1::WorkerInfo>* infos;
  absl::flat_hash_map<absl::string_view, const v1::WorkerInfo*> differing;
};

// What a worker's line says besides its figures: errors, stops, notes, host differences.
void RenderWorkerRemarks(const v1::WorkerResult& w, const WorkerHosts* hosts, std::string* out) {
  if (!w.error().empty()) absl::StrAppend(out, "      error: ", w.error(), "\n");
  if (!w.stop_reason().empty()) absl::StrAppend(out, "      stopped: ", w.stop_reason(), "\n");
  for (const std::string& note : w.notes()) absl::StrAppend(out, "      note: ", note, "\n");
  // Where this worker's host differs from the others, right next to its figures.
  if (const auto* differences = hosts != nullptr ? hosts->Differences(w.worker()) : nullptr) {
    for (const std::string& d : *differences) absl::StrAppend(out, "      differs: ", d, "\n");
  }
}

bool HasRemarks(const v1::WorkerResult& w, const WorkerHosts* hosts) {
  if (!w.error().empty() || !w.stop_reason().empty() || !w.notes().empty()) return true;
  return hosts != nullptr && hosts->Differences(w.worker()) != nullptr;
}

// Many workers: per direction the spread of IOPS and p99 over the workers (min, p10, median,
// p90, max) and the workers at either end by name; every worker with an error, a stop, a note
// or a host difference still gets its lines.
void RenderWorkerDistribution(const google::protobuf::RepeatedPtrField<v1::WorkerResult>& workers, std::string* out,
                              const WorkerHosts* hosts) {
  absl::StrAppendFormat(out, "  per worker (%d workers: their spread and outliers; the JSON report lists each):\n", workers.size());
  std::map<std::string, std::vector<std::pair<const v1::DirectionResult*, const std::string*>>> by_direction;
  int silent = 0;
  for (const v1::WorkerResult& w : workers) {
    silent += w.directions().empty();
    for (const v1::DirectionResult& d : w.directions()) by_direction[d.direction()].push_back({&d, &w.worker()});
  }
  auto spread = [](std::vector<double> values, const std::function<std::string(double)>& format) {
    std::sort(values.begin(), values.end());
    auto at = [&](double q) { return format(values[static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5)]); };
    return absl::StrFormat("min %s  p10 %s  median %s  p90 %s  max %s", at(0), at(0.1), at(0.5), at(0.9), at(1));
  };
  auto format_count = [](double v) { return FormatCount(v); };
  auto format_ns = [](double v) { return FormatDurationNs(v); };
  for (auto& [direction, entries] : by_direction) {
    std::vector<double> iops, p99;
    for (const auto& [d, name] : entries) {
      iops.push_back(d->iops());
      p99.push_back(static_cast<double>(PercentileValue(Clat(*d), 99)));
    }
    absl::StrAppendFormat(out, "    %-6s IOPS %s\n", direction, spread(iops, format_count));
    absl::StrAppendFormat(out, "    %-6s p99  %s\n", direction, spread(p99, format_ns));
    // The workers at either end, by name.
    auto name_ends = [&](const char* label, auto key, bool highest_first, const std::function<std::string(double)>& format) {
      std::vector<std::pair<double, const std::string*>> ranked;
      for (const auto& [d, name] : entries) ranked.push_back({key(*d), name});
      std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) { return highest_first ? a.first > b.first : a.first < b.first; });
      std::vector<std::string> named;
      for (size_t i = 0; i < std::min(kOutliersNamed, ranked.size()); ++i) named.push_back(absl::StrCat(*ranked[i].second, " ", format(ranked[i].first)));
      absl::StrAppendFormat(out, "    %-6s %s: %s\n", direction, label, absl::StrJoin(named, ", "));
    };
    name_ends("lowest IOPS", [](const v1::DirectionResult& d) { return d.iops(); }, false, format_count);
    name_ends("highest IOPS", [](const v1::DirectionResult& d) { return d.iops(); }, true, format_count);
    name_ends("highest p99", [](const v1::DirectionResult& d) { return static_cast<double>(PercentileValue(Clat(d), 99)); }, true, format_ns);
  }
  if (silent > 0) absl::StrAppendFormat(out, "    %d worker(s) reported no IO\n", silent);
  // The late: workers that got the start command after the instant, went silent for seconds
  // (a stall or a cut: the controller hears from each at least every second), or whose
  // connection was cut and their session resumed. (The lost are named among the problems.)
  if (hosts != nullptr) {
    auto name_late = [&](const char* label, auto value, const std::function<std::string(const v1::WorkerInfo&)>& say) {
      std::vector<const v1::WorkerInfo*> late;
      for (const v1::WorkerInfo& info : *hosts->infos) {
        if (value(info) > 0) late.push_back(&info);
      }
      if (late.empty()) return;
      std::stable_sort(late.begin(), late.end(), [&](const v1::WorkerInfo* a, const v1::WorkerInfo* b) { return value(*a) > value(*b); });
      std::vector<std::string> named;
      for (size_t i = 0; i < std::min(kOutliersNamed, late.size()); ++i) named.push_back(absl::StrCat(late[i]->address(), " ", say(*late[i])));
      absl::StrAppendFormat(out, "    %s: %d worker(s)%s %s\n", label, late.size(), late.size() > named.size() ? ", the most:" : ":",
                            absl::StrJoin(named, ", "));
    };
    name_late("started late", [](const v1::WorkerInfo& w) { return -w.start_lead_ns(); },
              [](const v1::WorkerInfo& w) { return FormatDurationNs(static_cast<double>(-w.start_lead_ns())); });
    name_late("silent for seconds", [](const v1::WorkerInfo& w) { return w.longest_silence_ns() > 2'000'000'000 ? w.longest_silence_ns() : 0; },
              [](const v1::WorkerInfo& w) { return FormatDurationNs(static_cast<double>(w.longest_silence_ns())); });
    name_late("connection cut and resumed", [](const v1::WorkerInfo& w) { return static_cast<int64_t>(w.session_resumes()); },
              [](const v1::WorkerInfo& w) { return absl::StrCat(w.session_resumes(), "x"); });
  }
  for (const v1::WorkerResult& w : workers) {
    if (!HasRemarks(w, hosts)) continue;
    absl::StrAppendFormat(out, "    %s:\n", w.worker());
    RenderWorkerRemarks(w, hosts, out);
  }
}

void RenderWorkerTable(const google::protobuf::RepeatedPtrField<v1::WorkerResult>& workers, std::string* out,
                       const WorkerHosts* hosts = nullptr) {
  if (workers.size() > kWorkerLinesLimit) return RenderWorkerDistribution(workers, out, hosts);
  absl::StrAppendFormat(out, "  per worker:\n    %-28s %-6s %10s %12s %10s %10s %7s\n", "worker", "dir", "IOPS", "BW", "p50", "p99", "errors");
  for (const v1::WorkerResult& w : workers) {
    if (w.directions().empty()) absl::StrAppendFormat(out, "    %-28s (no IO reported)\n", w.worker());
    for (const v1::DirectionResult& d : w.directions()) {
      absl::StrAppendFormat(out, "    %-28s %-6s %10s %12s %10s %10s %7d\n", w.worker(), d.direction(), FormatCount(d.iops()),
                            FormatBandwidth(d.bandwidth_bytes_per_sec()),
                            ClatPercentileText(d, 50), ClatPercentileText(d, 99), d.errors());
    }
    RenderWorkerRemarks(w, hosts, out);
  }
}

// The value of percentile `p` in a summary, or -1.
// The clients' view of a run in one line, for the target metrics beside it: the cluster's,
// or with several jobs each job's (4 KiB and 16 MiB writes summed would say nothing).
std::string ClientsLine(const v1::RunReport& report) {
  auto directions = [](const google::protobuf::RepeatedPtrField<v1::DirectionResult>& ds) {
    std::vector<std::string> parts;
    for (const v1::DirectionResult& d : ds) {
      if (d.ops() == 0) continue;
      std::string part = absl::StrCat(d.direction(), " ", d.ops(), " ops");
      for (const double p : {50.0, 99.0}) {
        if (const std::optional<uint64_t> ns = FindPercentile(d.latency(), p)) {
          absl::StrAppend(&part, ", p", static_cast<int>(p), " ", FormatDurationNs(static_cast<double>(*ns)));
        }
      }
      parts.push_back(std::move(part));
    }
    return parts.empty() ? std::string("no IO") : absl::StrJoin(parts, "; ");
  };
  if (report.jobs_size() <= 1) return directions(report.cluster());
  std::vector<std::string> jobs;
  for (const v1::JobResult& job : report.jobs()) jobs.push_back(absl::StrCat(job.name(), ": ", directions(job.directions())));
  return absl::StrJoin(jobs, " | ");
}

}  // namespace

std::string RenderTextReport(const v1::RunReport& report) {
  std::string out;
  const WorkerHosts hosts(report.workers());
  // Many workers: the first few named, the hosts described by the first and the ones that differ.
  const bool many = report.workers_size() > kWorkerLinesLimit;
  std::vector<std::string> worker_names;
  for (const v1::WorkerInfo& w : report.workers()) {
    if (many && worker_names.size() == 8) {
      worker_names.push_back(absl::StrCat("... and ", report.workers_size() - 8, " more (the JSON report lists each)"));
      break;
    }
    worker_names.push_back(absl::StrCat(w.address(), w.hostname().empty() ? "" : absl::StrCat(" (", w.hostname(), ")")));
  }
  int hosts_alike = 0;
  absl::StrAppendFormat(&out, "iofleet %s: run %s of %s on %d worker%s%s\n", report.tool_version(), report.run_id(),
                        report.job_source(), report.workers_size(), report.workers_size() == 1 ? "" : "s",
                        report.workers().empty() ? "" : absl::StrCat(": ", absl::StrJoin(worker_names, ", ")));
  for (const v1::WorkerInfo& w : report.workers()) {
    if (many && &w != &report.workers(0) && w.differs().empty()) {
      ++hosts_alike;
      continue;
    }
    const v1::HostFacts& f = w.facts();
    absl::StrAppendFormat(&out, "  %s: %s, %s, %d CPUs (%s), %s memory%s\n", w.address(), f.hostname().empty() ? w.hostname() : f.hostname(),
                          f.kernel().empty() ? w.kernel() : f.kernel(), f.cpus() ? f.cpus() : w.cores(), f.cpu_model(),
                          FormatBytes(static_cast<double>(f.memory_bytes())),
                          w.round_trip_ns() > 0 ? absl::StrFormat(", clock %+.2f ms, round trip %.2f ms, started %+.2f ms", static_cast<double>(w.clock_offset_ns()) / 1e6,
                                                                  static_cast<double>(w.round_trip_ns()) / 1e6, static_cast<double>(w.start_offset_ns()) / 1e6)
                                                : "");
    for (const v1::TargetFacts& t : f.targets()) {
      absl::StrAppend(&out, "    ", t.path(), ": ", t.fs_type(), " ", t.mount_source(), t.mount_point().empty() ? "" : " on " + t.mount_point());
      if (!t.nfs_version().empty()) absl::StrAppend(&out, ", nfs vers=", t.nfs_version(), " rsize=", t.rsize(), " wsize=", t.wsize(), " proto=", t.proto(), " actimeo=", t.actimeo());
      if (!t.fuse_daemon().empty()) absl::StrAppend(&out, ", FUSE daemon ", t.fuse_daemon());
      if (!t.device().empty()) {
        absl::StrAppend(&out, ", device ", t.device(), " scheduler=", t.scheduler(), " nr_requests=", t.nr_requests(),
                        " read_ahead_kb=", t.read_ahead_kb(), " rotational=", t.rotational(),
                        t.queue_depth().empty() ? "" : " queue_depth=" + t.queue_depth());
      }
      absl::StrAppend(&out, "\n");
    }
    for (const std::string& d : w.differs()) absl::StrAppend(&out, "    DIFFERS: ", d, "\n");
  }
  if (hosts_alike > 0) absl::StrAppendFormat(&out, "  (%d other workers' hosts are like the first: no differences found)\n", hosts_alike);
  for (const std::string& note : report.notes()) absl::StrAppend(&out, "note: ", note, "\n");
  if (!report.ignored_options().empty()) {
    absl::StrAppend(&out, "WARNING: these fio options were ignored (--ignore-unsupported), so this is not exactly the job file's workload:\n");
    for (const std::string& o : report.ignored_options()) absl::StrAppend(&out, "  - ", o, "\n");
  }
  absl::StrAppend(&out, "started ", absl::FormatTime("%Y-%m-%d %H:%M:%E3S %Z", absl::FromUnixNanos(report.start_unix_ns()), absl::UTCTimeZone()),
                  ", intervals of ", FormatDurationNs(static_cast<double>(report.interval_ns())));
  if (report.workers_size() > 1 && report.start_skew_ns() > 0) {
    // The workers' real starts, clock offsets taken out.
    int64_t uncertainty = 0;  // the clock offsets are known to half a round trip
    for (const v1::WorkerInfo& w : report.workers()) uncertainty = std::max(uncertainty, w.round_trip_ns() / 2);
    absl::StrAppend(&out, ", start skew ", FormatDurationNs(static_cast<double>(report.start_skew_ns())), " across ", report.workers_size(),
                    " workers (clocks compared to within ", FormatDurationNs(static_cast<double>(uncertainty)), ")");
    if (report.late_starts() > 0) absl::StrAppend(&out, "; ", report.late_starts(), " got the start command after the instant");
  }
  absl::StrAppend(&out, "\n");
  if (report.group_reporting()) {
    // fio's group_reporting: one block per group, summed over its jobs.
    for (const v1::GroupResult& group : report.groups()) {
      absl::StrAppendFormat(&out, "\ngroup %d (%s): on %d workers\n", group.group(), absl::StrJoin(group.jobs(), ", "), report.workers_size());
      for (const v1::DirectionResult& d : group.directions()) RenderDirection(d, group.elapsed_ns(), true, false, "  ", &out);
      RenderWorkerTable(group.workers(), &out, &hosts);
      // The group's jobs' own notes (steady state, exitall, latency_target...): the group's
      // table sums workers and has none.
      for (const v1::JobResult& job : report.jobs()) {
        if (job.group() != group.group()) continue;
        for (const v1::WorkerResult& w : job.workers()) {
          for (const std::string& note : w.notes()) absl::StrAppend(&out, "    ", job.name(), " on ", w.worker(), ": ", note, "\n");
        }
      }
    }
  } else {
    for (const v1::JobResult& job : report.jobs()) {
      absl::StrAppendFormat(&out, "\n%s: (groupid=%d, rw=%s, bs=%s, ioengine=%s, iodepth=%d) numjobs=%d on each of %d workers\n",
                            job.name(), job.group(), job.rw(), job.bs(), job.ioengine(), job.iodepth(), job.numjobs(),
                            job.workers_size());
      for (const v1::DirectionResult& d : job.directions()) {
        RenderDirection(d, job.elapsed_ns(), job.clat_percentiles(), job.lat_percentiles(), "  ", &out);
      }
      RenderJobFooter(job, &out);
      RenderWorkerTable(job.workers(), &out, &hosts);
    }
  }
  // fio's closing lines per group.
  for (const v1::GroupResult& group : report.groups()) {
    absl::StrAppendFormat(&out, "\nRun status group %d (all jobs):\n", group.group());
    for (const v1::DirectionResult& d : group.directions()) {
      std::string name = d.direction();
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      absl::StrAppendFormat(&out, "  %6s: bw=%s, io=%s, run=%s\n", name, FormatBandwidth(d.bandwidth_bytes_per_sec()),
                            FormatBytes(static_cast<double>(d.bytes())), FormatDurationNs(static_cast<double>(group.elapsed_ns())));
    }
  }
  if (report.workers_expected() > 0 && report.workers_completed() < report.workers_expected()) {
    absl::StrAppendFormat(&out, "\nCluster (all jobs; %d of %d workers completed, the others' figures end where they were lost):\n",
                          report.workers_completed(), report.workers_expected());
  } else {
    absl::StrAppendFormat(&out, "\nCluster (all jobs, %d workers):\n", std::max<int>(report.workers_size(), static_cast<int>(report.workers_expected())));
  }
  for (const v1::DirectionResult& d : report.cluster()) RenderDirection(d, report.cluster_elapsed_ns(), true, false, "  ", &out);
  if (report.cluster().empty()) absl::StrAppend(&out, "  no IO was done\n");
  RenderRelayedWorkers(report, &out);
  AppendTargetMetricsText(report.target_metrics(), ClientsLine(report), &out);
  AppendProfilesText(report.profiles(), &out);
  AppendBlockStagesText(report.block_devices(), [&report](uint32_t j) {
    return j < static_cast<uint32_t>(report.jobs_size()) ? report.jobs(static_cast<int>(j)).name() : std::string();
  }, &out);
  if (!report.problems().empty()) {
    absl::StrAppend(&out, "\nPROBLEMS:\n");
    for (const std::string& p : report.problems()) absl::StrAppend(&out, "  - ", p, "\n");
  }
  return out;
}

void AppendTargetMetricsText(const google::protobuf::RepeatedPtrField<v1::TargetMetricsResult>& targets, const std::string& clients,
                             std::string* out) {
  if (targets.empty()) return;
  absl::StrAppend(out, "\nTarget metrics (what the system under test reported, scraped at each interval boundary):\n");
  if (!clients.empty()) absl::StrAppend(out, "  clients: ", clients, "\n");
  for (const v1::TargetMetricsResult& t : targets) {
    absl::StrAppendFormat(out, "  %s (%s): %u scrapes, %d intervals%s\n", t.name(), t.url(), t.scrapes(), t.intervals_size(),
                          t.failed_scrapes() ? absl::StrFormat(", %u failed", t.failed_scrapes()) : "");
    for (const std::string& line : t.highlights()) absl::StrAppend(out, "    ", line, "\n");
    for (const std::string& p : t.problems()) absl::StrAppend(out, "    problem: ", p, "\n");
  }
}

std::string RenderJsonReport(const v1::RunReport& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  // By reflection: protobuf's printer took 1.2 s of a core for a thousand workers' report.
  absl::StatusOr<std::string> json = PrintJson(report, options);
  if (!json.ok()) return absl::StrCat("{\"error\": \"cannot encode report: ", json.status().ToString(), "\"}\n");
  return *std::move(json);
}

}  // namespace iofleet
