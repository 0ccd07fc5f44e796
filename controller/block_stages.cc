#include "controller/block_stages.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "histogram/latency_histogram.h"

namespace iofleet {
namespace {

constexpr size_t kMaxName = 256;

const v1::LatencyHistogramProto* const* Histograms(const v1::BlockStageDirection& d, const v1::LatencyHistogramProto* (&out)[4]) {
  out[0] = &d.queue_to_dispatch();
  out[1] = &d.dispatch_to_complete();
  out[2] = &d.queue_to_complete();
  out[3] = &d.request_bytes();
  return out;
}

uint64_t Percentile(const v1::LatencyHistogramProto& h, double p) {
  if (h.count() == 0) return 0;
  return ValuesAtPercentiles(h, {p})[0];
}

}  // namespace

absl::Status ValidateBlockDevice(const v1::BlockDeviceStages& device) {
  if (device.host().size() > kMaxName || device.device().size() > kMaxName || device.scheduler().size() > kMaxName ||
      device.backing().size() > 4096) {
    return absl::InvalidArgumentError("a block device record has a name longer than its limit");
  }
  if (device.directions_size() > 4) return absl::InvalidArgumentError("a block device record has more than 4 directions");
  for (int i = 0; i < device.directions_size(); ++i) {
    const v1::BlockStageDirection& d = device.directions(i);
    if (d.direction() != "read" && d.direction() != "write" && d.direction() != "trim" && d.direction() != "flush") {
      return absl::InvalidArgumentError(absl::StrCat("block device ", device.device(), ": unknown direction '", d.direction().substr(0, 16), "'"));
    }
    for (int k = 0; k < i; ++k) {
      if (device.directions(k).direction() == d.direction()) return absl::InvalidArgumentError(absl::StrCat("block device ", device.device(), ": direction ", d.direction(), " twice"));
    }
    const v1::LatencyHistogramProto* histograms[4];
    Histograms(d, histograms);
    for (const v1::LatencyHistogramProto* h : histograms) {
      if (absl::Status valid = ValidateHistogramProto(*h); !valid.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("block device ", device.device(), " ", d.direction(), ": ", valid.message()));
      }
    }
  }
  return absl::OkStatus();
}

void MergeBlockDirections(const google::protobuf::RepeatedPtrField<v1::BlockStageDirection>& from,
                          google::protobuf::RepeatedPtrField<v1::BlockStageDirection>* into) {
  for (const v1::BlockStageDirection& d : from) {
    v1::BlockStageDirection* same = nullptr;
    for (v1::BlockStageDirection& known : *into) {
      if (known.direction() == d.direction()) same = &known;
    }
    if (same == nullptr) {
      *into->Add() = d;
      continue;
    }
    MergeHistogramProto(d.queue_to_dispatch(), same->mutable_queue_to_dispatch());
    MergeHistogramProto(d.dispatch_to_complete(), same->mutable_dispatch_to_complete());
    MergeHistogramProto(d.queue_to_complete(), same->mutable_queue_to_complete());
    MergeHistogramProto(d.request_bytes(), same->mutable_request_bytes());
    same->set_sequential(same->sequential() + d.sequential());
    same->set_merged_bios(same->merged_bios() + d.merged_bios());
    same->set_unqueued(same->unqueued() + d.unqueued());
    same->set_undispatched(same->undispatched() + d.undispatched());
    same->set_completion_unseen(same->completion_unseen() + d.completion_unseen());
    // The application's side too (the cluster line: every host's jobs; a job whose files span
    // two devices of a host counts on both).
    MergeHistogramProto(d.application_latency(), same->mutable_application_latency());
    same->set_application_ops(same->application_ops() + d.application_ops());
    same->set_application_bytes(same->application_bytes() + d.application_bytes());
  }
  // A stable order for the reports: read, write, trim, flush.
  auto rank = [](const v1::BlockStageDirection& d) {
    static const char* const kOrder[] = {"read", "write", "trim", "flush"};
    return std::find(std::begin(kOrder), std::end(kOrder), d.direction()) - std::begin(kOrder);
  };
  std::sort(into->begin(), into->end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
}

void MergeBlockDevice(const v1::BlockDeviceStages& from, google::protobuf::RepeatedPtrField<v1::BlockDeviceStages>* into) {
  v1::BlockDeviceStages* same = nullptr;
  for (v1::BlockDeviceStages& known : *into) {
    if (known.host() == from.host() && known.device() == from.device()) same = &known;
  }
  if (same == nullptr) {
    *into->Add() = from;
    return;
  }
  // The latest names win (a scheduler switched between phases shows as it ended).
  if (!from.scheduler().empty()) same->set_scheduler(from.scheduler());
  if (!from.backing().empty()) same->set_backing(from.backing());
  same->set_missed_events(same->missed_events() + from.missed_events());
  for (uint32_t job : from.jobs()) {
    if (std::find(same->jobs().begin(), same->jobs().end(), job) == same->jobs().end()) same->add_jobs(job);
  }
  MergeBlockDirections(from.directions(), same->mutable_directions());
}

std::string BlockStageSplit(const v1::BlockStageDirection& d, double p) {
  // Percentiles do not add up (the slowest Q2Ds and D2Cs are seldom the same requests'); means
  // do, request by request, so the mean split is exact when every request's Q was seen.
  if (p <= 0) {
    auto mean = [](const v1::LatencyHistogramProto& h) { return h.count() ? static_cast<double>(h.sum_ns()) / static_cast<double>(h.count()) : 0.0; };
    if (d.unqueued() == 0 && d.queue_to_complete().count() > 0) {
      return absl::StrCat("mean Q2C ", FormatDurationNs(mean(d.queue_to_complete())), " = Q2D ", FormatDurationNs(mean(d.queue_to_dispatch())), " + D2C ",
                          FormatDurationNs(mean(d.dispatch_to_complete())));
    }
    return absl::StrCat("mean D2C ", FormatDurationNs(mean(d.dispatch_to_complete())), " (", d.unqueued(), " of ", d.dispatch_to_complete().count(),
                        " requests without Q), Q2D ", FormatDurationNs(mean(d.queue_to_dispatch())));
  }
  return absl::StrCat("p", p, " Q2C ", FormatDurationNs(static_cast<double>(Percentile(d.queue_to_complete(), p))), ", Q2D ",
                      FormatDurationNs(static_cast<double>(Percentile(d.queue_to_dispatch(), p))), ", D2C ",
                      FormatDurationNs(static_cast<double>(Percentile(d.dispatch_to_complete(), p))));
}

std::string BlockRequestShape(const v1::BlockStageDirection& d) {
  const v1::LatencyHistogramProto& sizes = d.request_bytes();
  if (sizes.count() == 0) return "no requests";
  const std::vector<uint64_t> p = ValuesAtPercentiles(sizes, {50, 99});
  const double mean = static_cast<double>(sizes.sum_ns()) / static_cast<double>(sizes.count());
  std::string shape = absl::StrCat(sizes.count(), " requests, size mean ", FormatBytes(mean), " (p50 ", FormatBytes(static_cast<double>(p[0])),
                                   ", max ", FormatBytes(static_cast<double>(sizes.max_ns())), "), ",
                                   static_cast<int>(100.0 * static_cast<double>(d.sequential()) / static_cast<double>(sizes.count()) + 0.5), "% sequential");
  if (d.merged_bios() > 0) absl::StrAppend(&shape, ", ", d.merged_bios(), " bios merged");
  if (d.completion_unseen() > 0) {
    absl::StrAppend(&shape, "; ", d.completion_unseen(), " more dispatched whose completion the kernel did not report (not timed)");
  }
  return shape;
}

namespace {

std::string Ms(uint64_t ns) { return FormatDurationNs(static_cast<double>(ns)); }

// "application lat p50 X, p99 Y; " when the run report filled the application's side in.
std::string ApplicationText(const v1::BlockStageDirection& d) {
  if (d.application_latency().count() == 0) return "";
  const std::vector<uint64_t> p = ValuesAtPercentiles(d.application_latency(), {50, 99});
  return absl::StrCat("application lat p50 ", Ms(p[0]), ", p99 ", Ms(p[1]), "; ");
}

}  // namespace

void AppendBlockStagesText(const google::protobuf::RepeatedPtrField<v1::BlockDeviceStages>& devices,
                           const std::function<std::string(uint32_t job)>& job_name, std::string* out) {
  if (devices.empty()) return;
  absl::StrAppend(out, "\nBlock stages (traced in the kernel on each host; Q2D: queue to dispatch = plugging, scheduler, merging, tags; D2C: the device):\n");
  for (const v1::BlockDeviceStages& device : devices) {
    std::vector<std::string> jobs;
    for (uint32_t j : device.jobs()) {
      if (std::string name = job_name(j); !name.empty()) jobs.push_back(name);
    }
    absl::StrAppend(out, "  ", device.host(), " ", device.device(), " (scheduler ", device.scheduler().empty() ? "?" : device.scheduler(),
                    device.backing().empty() ? "" : absl::StrCat(", backing file ", device.backing()), jobs.empty() ? "" : absl::StrCat("; jobs ", absl::StrJoin(jobs, ", ")), "):\n");
    if (device.missed_events() > 0) {
      absl::StrAppend(out, "    ", device.missed_events(), " block events of this host were not traced (one came while the tracer ran for another on the same CPU)\n");
    }
    if (device.directions().empty()) {
      absl::StrAppend(out, "    no request reached the device during the run (the page cache took the IO; writeback comes later)\n");
    }
    for (const v1::BlockStageDirection& d : device.directions()) {
      const std::string app_text = ApplicationText(d);
      absl::StrAppendFormat(out, "    %-5s %sdevice %s\n", d.direction(), app_text, BlockStageSplit(d, 0));
      absl::StrAppendFormat(out, "    %-5s %*s%s\n", "", static_cast<int>(app_text.size()) + 7, "", BlockStageSplit(d, 50));
      absl::StrAppendFormat(out, "    %-5s %*s%s\n", "", static_cast<int>(app_text.size()) + 7, "", BlockStageSplit(d, 99));
      if (d.direction() != "flush") absl::StrAppendFormat(out, "    %-5s %s\n", "", BlockRequestShape(d));
      // The application's requests against the device's: the mismatch a stack in between
      // (page cache, NFS client, FUSE, device-mapper) makes.
      if (d.application_ops() > 0 && d.request_bytes().count() > 0 && d.direction() != "flush") {
        const double app_size = static_cast<double>(d.application_bytes()) / static_cast<double>(d.application_ops());
        const double dev_size = static_cast<double>(d.request_bytes().sum_ns()) / static_cast<double>(d.request_bytes().count());
        if (app_size > 1.5 * dev_size || dev_size > 1.5 * app_size) {
          absl::StrAppendFormat(out, "    %-5s the jobs issued %s requests on average (%s of them); the device saw %s ones (%s)\n", "",
                                FormatBytes(app_size), FormatCount(static_cast<double>(d.application_ops())), FormatBytes(dev_size),
                                FormatCount(static_cast<double>(d.request_bytes().count())));
        }
      }
    }
  }
  if (devices.size() < 2) return;
  // The cluster: every host's devices merged (exact bucket sums).
  google::protobuf::RepeatedPtrField<v1::BlockStageDirection> cluster;
  for (const v1::BlockDeviceStages& device : devices) MergeBlockDirections(device.directions(), &cluster);
  absl::StrAppend(out, "  cluster (", devices.size(), " devices):\n");
  for (const v1::BlockStageDirection& d : cluster) {
    const std::string app_text = ApplicationText(d);
    absl::StrAppendFormat(out, "    %-5s %sdevice %s\n", d.direction(), app_text, BlockStageSplit(d, 0));
    absl::StrAppendFormat(out, "    %-5s %*s%s\n", "", static_cast<int>(app_text.size()) + 7, "", BlockStageSplit(d, 99));
  }
}

void MarkBlockStageOutliers(v1::RunReport* report) {
  // Per host and direction, all its devices merged.
  std::map<std::string, google::protobuf::RepeatedPtrField<v1::BlockStageDirection>> hosts;
  for (const v1::BlockDeviceStages& device : report->block_devices()) MergeBlockDirections(device.directions(), &hosts[device.host()]);
  if (hosts.size() < 2) return;
  struct Stage {
    const char* name;
    const v1::LatencyHistogramProto& (v1::BlockStageDirection::*histogram)() const;
  };
  const Stage kStages[] = {{"D2C", &v1::BlockStageDirection::dispatch_to_complete}, {"Q2D", &v1::BlockStageDirection::queue_to_dispatch}};
  for (const char* direction : {"read", "write", "trim", "flush"}) {
    for (const Stage& stage : kStages) {
      std::map<std::string, uint64_t> p99;
      for (const auto& [host, directions] : hosts) {
        for (const v1::BlockStageDirection& d : directions) {
          const v1::LatencyHistogramProto& h = (d.*stage.histogram)();
          if (d.direction() == direction && h.count() > 0) p99[host] = ValuesAtPercentiles(h, {99})[0];
        }
      }
      if (p99.size() < 2) continue;
      for (const auto& [host, value] : p99) {
        std::vector<uint64_t> others;
        std::vector<std::string> named;
        for (const auto& [other, v] : p99) {
          if (other == host) continue;
          others.push_back(v);
          if (named.size() < 4) named.push_back(absl::StrCat(other, " ", Ms(v)));
        }
        std::sort(others.begin(), others.end());
        const uint64_t median = others[others.size() / 2];
        if (value <= 2 * median || value < median + 100'000) continue;
        const std::string what = absl::StrCat("block ", direction, " ", stage.name, " p99: ", Ms(value), " (others: ", absl::StrJoin(named, ", "),
                                              others.size() > named.size() ? ", ..." : "", ")");
        for (v1::WorkerInfo& w : *report->mutable_workers()) {
          if (w.hostname() == host || w.facts().hostname() == host) w.add_differs(what);
        }
      }
    }
  }
}

}  // namespace iofleet
