#include "controller/report_fio_json.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "controller/latency_shares.h"
#include "controller/report_text.h"
#include "common/pretty_json.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "controller/direction_summary.h"

namespace iofleet {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

void Put(Struct* s, const std::string& key, double number) { (*s->mutable_fields())[key].set_number_value(number); }
void PutString(Struct* s, const std::string& key, const std::string& text) { (*s->mutable_fields())[key].set_string_value(text); }
Struct* PutObject(Struct* s, const std::string& key) { return (*s->mutable_fields())[key].mutable_struct_value(); }

// fio's {min, max, mean, stddev, N} (+ percentiles for clat).
void LatencyObject(const v1::LatencySummary& lat, uint64_t count, bool percentiles, Struct* out) {
  Put(out, "min", static_cast<double>(lat.min_ns()));
  Put(out, "max", static_cast<double>(lat.max_ns()));
  Put(out, "mean", lat.mean_ns());
  Put(out, "stddev", lat.stddev_ns());
  Put(out, "N", static_cast<double>(count));
  if (!percentiles) return;
  Struct* p = PutObject(out, "percentile");
  for (const v1::Percentile& entry : lat.percentiles()) Put(p, absl::StrFormat("%.6f", entry.percentile()), static_cast<double>(entry.value_ns()));
}

// fio's per-direction bandwidth/IOPS statistics over its samples; here the samples are the
// run's intervals (exactly merged across workers).
void SampleStats(const std::vector<double>& samples, const std::string& prefix, const char* dev_name, Struct* out) {
  double min = 0, max = 0, mean = 0, dev = 0;
  if (!samples.empty()) {
    min = max = samples[0];
    for (double v : samples) {
      min = std::min(min, v);
      max = std::max(max, v);
      mean += v;
    }
    mean /= static_cast<double>(samples.size());
    for (double v : samples) dev += (v - mean) * (v - mean);
    dev = samples.size() > 1 ? std::sqrt(dev / static_cast<double>(samples.size() - 1)) : 0;
  }
  Put(out, prefix + "_min", min);
  Put(out, prefix + "_max", max);
  Put(out, prefix + "_mean", mean);
  Put(out, prefix + dev_name, dev);
  Put(out, prefix + "_samples", static_cast<double>(samples.size()));
}

void DirectionObject(const v1::DirectionResult* d, uint64_t elapsed_ns, const std::vector<const v1::IntervalResult*>& intervals,
                     bool plus, Struct* out) {
  const double runtime_ms = std::round(static_cast<double>(elapsed_ns) / 1e6);
  Put(out, "io_bytes", d ? static_cast<double>(d->bytes()) : 0);
  Put(out, "io_kbytes", d ? static_cast<double>(d->bytes() / 1024) : 0);
  Put(out, "bw_bytes", d ? std::floor(d->bandwidth_bytes_per_sec()) : 0);
  Put(out, "bw", d ? std::floor(d->bandwidth_bytes_per_sec() / 1024) : 0);
  Put(out, "iops", d ? d->iops() : 0);
  Put(out, "runtime", d ? runtime_ms : 0);
  Put(out, "total_ios", d ? static_cast<double>(d->ops()) : 0);
  const v1::LatencySummary empty;
  LatencyObject(d && d->has_submit_latency() ? d->submit_latency() : empty, d && d->has_submit_latency() ? d->ops() : 0, false,
                PutObject(out, "slat_ns"));
  const bool has_clat = d && d->has_completion_latency();
  Struct* clat = PutObject(out, "clat_ns");
  LatencyObject(has_clat ? d->completion_latency() : (d && d->has_latency() ? d->latency() : empty), d ? d->ops() : 0, true, clat);
  if (plus && d) {
    Struct* bins = PutObject(clat, "bins");
    ForEachBucket(has_clat ? d->completion_histogram() : d->histogram(), [&](uint32_t index, uint64_t count) {
      Put(bins, absl::StrCat(HistogramLayout::BucketMidpoint(index)), static_cast<double>(count));
    });
  }
  LatencyObject(d && d->has_latency() ? d->latency() : empty, d ? d->ops() : 0, false, PutObject(out, "lat_ns"));
  // fio's "prios" (3.33): each priority of a cmdprio job, its class, level and clat.
  if (d && d->priorities_size() > 0) {
    google::protobuf::ListValue* list = (*out->mutable_fields())["prios"].mutable_list_value();
    for (const v1::PriorityResult& p : d->priorities()) {
      Struct* entry = list->add_values()->mutable_struct_value();
      Put(entry, "prioclass", p.priority_class());
      Put(entry, "prio", p.level());
      if (p.hint()) Put(entry, "priohint", p.hint());
      LatencyObject(p.completion_latency(), p.ops(), true, PutObject(entry, "clat_ns"));
    }
  }
  std::vector<double> bw_samples, iops_samples;
  if (d) {
    for (const v1::IntervalResult* interval : intervals) {
      for (const v1::DirectionResult& id : interval->directions()) {
        if (id.direction() != d->direction()) continue;
        bw_samples.push_back(id.bandwidth_bytes_per_sec() / 1024);
        iops_samples.push_back(id.iops());
      }
    }
  }
  SampleStats(bw_samples, "bw", "_dev", out);
  Put(out, "bw_agg", d ? 100.0 : 0);
  SampleStats(iops_samples, "iops", "_stddev", out);
}

// fio's "latency_ns/us/ms" distributions: the share of IOs under each bound, from lat.
void LatencyDistribution(const std::vector<const v1::DirectionResult*>& directions, Struct* job) {
  for (const LatencyShare& share : LatencyShares(MergedLatency(directions))) {
    const std::string key = share.unit == "nsec" ? "latency_ns" : share.unit == "usec" ? "latency_us" : "latency_ms";
    Put(PutObject(job, key), share.bound, share.percent);
  }
}

const v1::DirectionResult* Find(const google::protobuf::RepeatedPtrField<v1::DirectionResult>& ds, const std::string& name) {
  for (const auto& d : ds) {
    if (d.direction() == name) return &d;
  }
  return nullptr;
}

void JobObject(const std::string& name, uint32_t group, uint64_t elapsed_ns, const v1::JobResult* job,
               const google::protobuf::RepeatedPtrField<v1::DirectionResult>& directions,
               const std::vector<const v1::IntervalResult*>& intervals, bool error, bool plus, Struct* out) {
  PutString(out, "jobname", name);
  Put(out, "groupid", group);
  Put(out, "error", error ? 1 : 0);
  Put(out, "elapsed", std::round(static_cast<double>(elapsed_ns) / 1e9));
  if (job) {
    Struct* options = PutObject(out, "job options");
    PutString(options, "name", job->name());
    PutString(options, "rw", job->rw());
    PutString(options, "bs", job->bs());
    PutString(options, "ioengine", job->ioengine());
    PutString(options, "iodepth", absl::StrCat(job->iodepth()));
    PutString(options, "numjobs", absl::StrCat(job->numjobs()));
  }
  for (const char* dir : {"read", "write", "trim"}) DirectionObject(Find(directions, dir), elapsed_ns, intervals, plus, PutObject(out, dir));
  Struct* sync = PutObject(out, "sync");
  const v1::DirectionResult* s = Find(directions, "sync");
  Put(sync, "total_ios", s ? static_cast<double>(s->ops()) : 0);
  const v1::LatencySummary empty;
  LatencyObject(s && s->has_latency() ? s->latency() : empty, s ? s->ops() : 0, true, PutObject(sync, "lat_ns"));
  Put(out, "job_runtime", std::round(static_cast<double>(elapsed_ns) / 1e6));
  if (job) {
    auto levels = [&](const char* key, const google::protobuf::RepeatedField<uint64_t>& counts, const std::vector<const char*>& names) {
      uint64_t total = 0;
      for (uint64_t c : counts) total += c;
      Struct* o = PutObject(out, key);
      for (size_t b = 0; b < names.size(); ++b) {
        Put(o, names[b], total && static_cast<int>(b) < counts.size() ? 100.0 * static_cast<double>(counts[b]) / static_cast<double>(total) : 0);
      }
    };
    levels("iodepth_level", job->depth_counts(), {"1", "2", "4", "8", "16", "32", ">=64"});
    levels("iodepth_submit", job->submit_counts(), {"0", "4", "8", "16", "32", "64", ">=64"});
    levels("iodepth_complete", job->complete_counts(), {"0", "4", "8", "16", "32", "64", ">=64"});
    Put(out, "usr_cpu", job->usr_cpu());
    Put(out, "sys_cpu", job->sys_cpu());
    Put(out, "ctx", static_cast<double>(job->context_switches()));
  }
  std::vector<const v1::DirectionResult*> data;
  for (const char* dir : {"read", "write", "trim"}) {
    if (const v1::DirectionResult* d = Find(directions, dir)) data.push_back(d);
  }
  LatencyDistribution(data, out);
}

// A JSON string, escaped as protobuf escapes the rest.
std::string JsonString(const std::string& text) {
  Value value;
  value.set_string_value(text);
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(value, &json).ok()) return "\"\"";
  return json;
}

}  // namespace

std::string RenderFioJsonReport(const v1::RunReport& report, bool plus, std::optional<absl::string_view> native_json) {
  google::protobuf::ListValue jobs;
  if (report.group_reporting()) {
    for (const v1::GroupResult& group : report.groups()) {
      bool error = false;
      for (const v1::JobResult& job : report.jobs()) {
        if (job.group() != group.group()) continue;
        for (const auto& w : job.workers()) error |= !w.error().empty();
      }
      JobObject(group.jobs().empty() ? "" : group.jobs(0), group.group(), group.elapsed_ns(), nullptr, group.directions(), {}, error,
                plus, jobs.add_values()->mutable_struct_value());
    }
  } else {
    for (const v1::JobResult& job : report.jobs()) {
      bool error = false;
      for (const auto& w : job.workers()) error |= !w.error().empty();
      std::vector<const v1::IntervalResult*> intervals;
      for (const auto& interval : job.intervals()) {
        // Only whole intervals are bandwidth samples (the last one is usually cut short).
        if (interval.end_unix_ns() - interval.start_unix_ns() >= static_cast<int64_t>(report.interval_ns())) intervals.push_back(&interval);
      }
      JobObject(job.name(), job.group(), job.elapsed_ns(), &job, job.directions(), intervals, error, plus,
                jobs.add_values()->mutable_struct_value());
    }
  }
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  std::string jobs_json;
  if (!google::protobuf::util::MessageToJsonString(jobs, &jobs_json, options).ok()) jobs_json = "[]";
  // Everything iofleet knows beyond fio's layout (workers, per-worker results, intervals) is its
  // own report, spliced in as printed: at a thousand workers that is tens of megabytes, which
  // parsed into a Struct and printed again took the controller to 825 MB and 7 s of a core.
  std::string rendered_native;
  if (!native_json.has_value()) {
    rendered_native = RenderJsonReport(report);
    native_json = rendered_native;
  }
  // The top level in fio's order (fio version, timestamps, time, jobs, disk_util).
  const absl::Time start = absl::FromUnixNanos(report.start_unix_ns());
  std::string json;
  json.reserve(jobs_json.size() + native_json->size() + native_json->size() / 8 + 256);
  absl::StrAppend(&json, "{\n \"fio version\": ", JsonString(absl::StrCat("iofleet-", report.tool_version())),
                  ",\n \"timestamp\": ", absl::ToUnixSeconds(start), ",\n \"timestamp_ms\": ", absl::ToUnixMillis(start),
                  ",\n \"time\": ", JsonString(absl::FormatTime("%a %b %e %H:%M:%S %Y", start, absl::LocalTimeZone())), ",\n \"jobs\": ");
  AppendAtDepth(jobs_json, 1, /*nested=*/true, &json);
  json.append(",\n \"disk_util\": [],\n \"iofleet\": ");
  AppendAtDepth(*native_json, 1, /*nested=*/true, &json);
  json.append("\n}\n");
  return json;
}

}  // namespace iofleet
