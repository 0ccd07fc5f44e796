#include "controller/host_profiles.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/flame_graph.h"
#include "controller/results_dir.h"
#include "common/units.h"

namespace iofleet {
namespace {

// The profile's stacks summed over processes, or only process `pid`'s.
FoldedStacks Stacks(const v1::HostProfile& profile, std::optional<uint32_t> pid = std::nullopt) {
  std::map<std::string, uint64_t> summed;
  for (const v1::FoldedStack& s : profile.stacks()) {
    if (!pid.has_value() || s.pid() == *pid) summed[s.stack()] += s.count();
  }
  return FoldedStacks(summed.begin(), summed.end());
}

std::string FoldedText(const FoldedStacks& stacks) {
  std::string text;
  for (const auto& [stack, count] : stacks) absl::StrAppend(&text, stack, " ", count, "\n");
  return text;
}

// "-jobN" (the phase's first job) for the profiles of a host that has more than one, else "".
std::vector<std::string> PhaseSuffixes(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles) {
  std::map<std::string, int> per_host;
  for (const v1::HostProfile& p : profiles) ++per_host[p.host()];
  std::vector<std::string> suffixes;
  for (const v1::HostProfile& p : profiles) {
    suffixes.push_back(per_host[p.host()] > 1 && !p.jobs().empty() ? absl::StrCat("-job", p.jobs(0)) : "");
  }
  return suffixes;
}

// profile-<host> or profile-<host>-jobN when a host has more than one (phases).
std::vector<std::string> Names(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles) {
  std::vector<std::string> names = PhaseSuffixes(profiles);
  for (int i = 0; i < profiles.size(); ++i) names[static_cast<size_t>(i)].insert(0, ResultsFileName(profiles[i].host(), "host"));
  return names;
}

// A worker's own part of its host's profile: file name, title, stacks.
struct WorkerProfile {
  std::string name, title;
  FoldedStacks stacks;
};

// Per worker with a process id, its process's stacks in each profile of its host (none with more
// than kMaxWorkerProfiles workers: a thousand graphs nobody opens).
std::vector<WorkerProfile> WorkerProfiles(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles,
                                          const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers) {
  std::vector<WorkerProfile> out;
  if (workers.size() > kMaxWorkerProfiles) return out;
  const std::vector<std::string> suffixes = PhaseSuffixes(profiles);
  for (const v1::WorkerInfo& w : workers) {
    if (w.pid() == 0) continue;
    for (int i = 0; i < profiles.size(); ++i) {
      const v1::HostProfile& p = profiles[i];
      if (p.host() != w.hostname()) continue;
      FoldedStacks stacks = Stacks(p, w.pid());
      if (stacks.empty()) continue;
      out.push_back({absl::StrCat("worker-", ResultsFileName(w.address(), "worker"), suffixes[static_cast<size_t>(i)]),
                     absl::StrFormat("worker %s (pid %d) on %s: its process's stacks at %d Hz, %.1f s", w.address(), w.pid(), p.host(), p.frequency_hz(), p.seconds()),
                     std::move(stacks)});
    }
  }
  return out;
}

// The first two profiles of different hosts covering the same jobs.
std::pair<int, int> DiffPair(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles) {
  for (int a = 0; a < profiles.size(); ++a) {
    for (int b = a + 1; b < profiles.size(); ++b) {
      if (profiles[a].host() != profiles[b].host() &&
          std::equal(profiles[a].jobs().begin(), profiles[a].jobs().end(), profiles[b].jobs().begin(), profiles[b].jobs().end())) {
        return {a, b};
      }
    }
  }
  return {-1, -1};
}

}  // namespace

absl::Status ValidateHostProfile(const v1::HostProfile& profile) {
  if (profile.stacks_size() > 10000) return absl::InvalidArgumentError(absl::StrCat("a CPU profile with ", profile.stacks_size(), " stacks (at most 10000)"));
  if (profile.host().size() > 256) return absl::InvalidArgumentError("a CPU profile's host name is longer than 256 bytes");
  for (const v1::FoldedStack& s : profile.stacks()) {
    if (s.stack().size() > 65536) return absl::InvalidArgumentError("a CPU profile stack longer than 64 KiB");
  }
  return absl::OkStatus();
}

std::string FoldedText(const v1::HostProfile& profile) { return FoldedText(Stacks(profile)); }

namespace {

// The graphs of ProfileGraphs, from the profiles' names and the workers' own stacks.
std::vector<std::pair<std::string, std::string>> Graphs(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles,
                                                        const std::vector<std::string>& names, const std::vector<WorkerProfile>& worker_profiles) {
  std::vector<std::pair<std::string, std::string>> graphs;
  for (int i = 0; i < profiles.size(); ++i) {
    const v1::HostProfile& p = profiles[i];
    graphs.emplace_back(names[static_cast<size_t>(i)],
                        FlameGraphSvg(absl::StrFormat("%s: all CPUs at %d Hz, %.1f s", p.host(), p.frequency_hz(), p.seconds()), Stacks(p)));
  }
  for (const WorkerProfile& w : worker_profiles) graphs.emplace_back(w.name, FlameGraphSvg(w.title, w.stacks));
  const auto [a, b] = DiffPair(profiles);
  if (a >= 0) {
    graphs.emplace_back(absl::StrCat("diff-", names[static_cast<size_t>(a)], "-vs-", names[static_cast<size_t>(b)]),
                        DifferentialFlameGraphSvg(absl::StrCat(profiles[b].host(), " against ", profiles[a].host()), Stacks(profiles[a]), Stacks(profiles[b])));
  }
  return graphs;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ProfileGraphs(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles,
                                                               const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers) {
  return Graphs(profiles, Names(profiles), WorkerProfiles(profiles, workers));
}

std::string DifferentialFlameGraph(const std::string& title, const v1::HostProfile& before, const v1::HostProfile& after) {
  return DifferentialFlameGraphSvg(title, Stacks(before), Stacks(after));
}

std::vector<std::pair<std::string, std::string>> ProfileFiles(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles,
                                                              const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers) {
  std::vector<std::pair<std::string, std::string>> files;
  const std::vector<std::string> names = Names(profiles);
  for (int i = 0; i < profiles.size(); ++i) files.emplace_back(absl::StrCat("profile-", names[static_cast<size_t>(i)], ".folded"), FoldedText(profiles[i]));
  const std::vector<WorkerProfile> worker_profiles = WorkerProfiles(profiles, workers);
  for (const WorkerProfile& w : worker_profiles) files.emplace_back(absl::StrCat("profile-", w.name, ".folded"), FoldedText(w.stacks));
  for (auto& [name, svg] : Graphs(profiles, names, worker_profiles)) files.emplace_back(absl::StrCat("flamegraph-", name, ".svg"), std::move(svg));
  return files;
}

void AppendProfilesText(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles, std::string* out) {
  if (profiles.empty()) return;
  absl::StrAppend(out, "\nCPU profiles (perf, all CPUs; flame graphs in the results directory and the HTML report):\n");
  for (const v1::HostProfile& p : profiles) {
    absl::StrAppendFormat(out, "  %s: %d samples at %d Hz over %.1f s\n", p.host(), p.samples(), p.frequency_hz(), p.seconds());
    // Which threads (the stacks' roots) and which functions (their leaves) took the samples.
    std::map<std::string, uint64_t> roots, leaves;
    for (const v1::FoldedStack& s : p.stacks()) {
      const size_t first = s.stack().find(';'), last = s.stack().rfind(';');
      roots[s.stack().substr(0, first)] += s.count();
      leaves[last == std::string::npos ? s.stack() : s.stack().substr(last + 1)] += s.count();
    }
    for (const auto& [what, counts] : {std::pair<const char*, const std::map<std::string, uint64_t>*>{"threads", &roots}, {"functions", &leaves}}) {
      std::vector<std::pair<uint64_t, std::string>> top;
      for (const auto& [name, n] : *counts) top.emplace_back(n, name);
      std::sort(top.rbegin(), top.rend());
      std::vector<std::string> shown;
      for (size_t i = 0; i < top.size() && i < 6; ++i) {
        shown.push_back(absl::StrFormat("%s %.1f%%", top[i].second.substr(0, 60), 100.0 * static_cast<double>(top[i].first) / static_cast<double>(std::max<uint64_t>(1, p.samples()))));
      }
      absl::StrAppend(out, "    ", what, ": ", absl::StrJoin(shown, ", "), "\n");
    }
    std::vector<std::string> counters;
    if (p.has_cycles() && p.has_instructions() && p.cycles() > 0) counters.push_back(absl::StrFormat("IPC %.2f", static_cast<double>(p.instructions()) / static_cast<double>(p.cycles())));
    if (p.operations() > 0) {
      if (p.has_instructions()) counters.push_back(absl::StrCat(FormatCount(static_cast<double>(p.instructions()) / static_cast<double>(p.operations())), " instructions per IO"));
      if (p.has_cache_misses()) counters.push_back(absl::StrFormat("%.1f cache misses per IO", static_cast<double>(p.cache_misses()) / static_cast<double>(p.operations())));
    }
    if (!counters.empty()) absl::StrAppend(out, "    counters: ", absl::StrJoin(counters, ", "), "\n");
    for (const std::string& problem : p.problems()) absl::StrAppend(out, "    ", problem, "\n");
  }
}

}  // namespace iofleet
