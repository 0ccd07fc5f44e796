#include "controller/host_differences.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace iofleet {
namespace {

using Getter = std::string (*)(const v1::TargetFacts&);

const std::vector<std::pair<const char*, Getter>>& TargetKeys() {
  static const std::vector<std::pair<const char*, Getter>> kKeys = {
      {"filesystem", [](const v1::TargetFacts& t) { return t.fs_type(); }},
      {"NFS version", [](const v1::TargetFacts& t) { return t.nfs_version(); }},
      {"rsize", [](const v1::TargetFacts& t) { return t.rsize(); }},
      {"wsize", [](const v1::TargetFacts& t) { return t.wsize(); }},
      {"actimeo", [](const v1::TargetFacts& t) { return t.actimeo(); }},
      {"NFS proto", [](const v1::TargetFacts& t) { return t.proto(); }},
      {"FUSE daemon", [](const v1::TargetFacts& t) { return t.fuse_daemon(); }},
      {"scheduler", [](const v1::TargetFacts& t) { return t.scheduler(); }},
      {"nr_requests", [](const v1::TargetFacts& t) { return t.nr_requests(); }},
      {"read_ahead_kb", [](const v1::TargetFacts& t) { return t.read_ahead_kb(); }},
      {"rotational", [](const v1::TargetFacts& t) { return t.rotational(); }},
      {"device queue depth", [](const v1::TargetFacts& t) { return t.queue_depth(); }},
  };
  return kKeys;
}

// For one fact: each worker's value; marks the workers that hold a value other than the
// most common one.
void Compare(const std::string& what, const std::vector<std::string>& values, v1::RunReport* report) {
  std::map<std::string, int> counts;
  for (const std::string& v : values) ++counts[v];
  if (counts.size() < 2) return;
  std::string common;
  int best = -1;
  for (const auto& [value, n] : counts) {
    if (n > best) best = n, common = value;
  }
  for (size_t w = 0; w < values.size(); ++w) {
    if (values[w] == common) continue;
    std::set<std::string> others;
    for (size_t o = 0; o < values.size(); ++o) {
      if (o != w) others.insert(values[o].empty() ? "(unknown)" : values[o]);
    }
    report->mutable_workers(static_cast<int>(w))
        ->add_differs(absl::StrCat(what, ": ", values[w].empty() ? "(unknown)" : values[w], " (others: ", absl::StrJoin(others, ", "), ")"));
  }
}

}  // namespace

void MarkHostDifferences(v1::RunReport* report) {
  const int n = report->workers_size();
  if (n < 2) return;
  for (auto& w : *report->mutable_workers()) w.clear_differs();
  auto host = [&](const char* what, std::string (*get)(const v1::WorkerInfo&)) {
    std::vector<std::string> values;
    for (const auto& w : report->workers()) values.push_back(get(w));
    Compare(what, values, report);
  };
  host("kernel", [](const v1::WorkerInfo& w) { return w.facts().kernel(); });
  host("CPU", [](const v1::WorkerInfo& w) { return w.facts().cpu_model(); });
  host("CPUs", [](const v1::WorkerInfo& w) { return absl::StrCat(w.facts().cpus()); });
  host("memory", [](const v1::WorkerInfo& w) { return absl::StrCat(w.facts().memory_bytes() >> 20, " MiB"); });
  // Targets by path: every path some worker reported.
  std::set<std::string> paths;
  for (const auto& w : report->workers()) {
    for (const auto& t : w.facts().targets()) paths.insert(t.path());
  }
  for (const std::string& path : paths) {
    for (const auto& [what, get] : TargetKeys()) {
      std::vector<std::string> values;
      for (const auto& w : report->workers()) {
        std::string value;
        for (const auto& t : w.facts().targets()) {
          if (t.path() == path) value = get(t);
        }
        values.push_back(value);
      }
      Compare(absl::StrCat(what, " of ", path), values, report);
    }
  }
}

}  // namespace iofleet
