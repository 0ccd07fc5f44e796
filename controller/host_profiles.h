// --profile on the controller's side: checking the hosts' CPU profiles as they arrive, the
// results directory's flame graphs (one per host and phase, and a differential one between the
// first two hosts), and the profiles in words (where the samples went, IPC and cache misses
// per IO when the kernel counted them).
#ifndef IOFLEET_CONTROLLER_HOST_PROFILES_H_
#define IOFLEET_CONTROLLER_HOST_PROFILES_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "proto/report.pb.h"

namespace iofleet {

// Whether a profile from the wire is within bounds: at most 10,000 stacks of at most 64 KiB.
absl::Status ValidateHostProfile(const v1::HostProfile& profile);

// The profile's stacks as FoldedStacks text ("stack count" lines, flamegraph.pl's input).
std::string FoldedText(const v1::HostProfile& profile);

// Files for the results directory: profile-<host>[-job<j>].folded and flamegraph-<...>.svg per
// profile (-job<j>: the first job of the phase, when a host has several), the same per worker
// (profile-worker-<address>..., its own process's stacks out of its host's profile; with at
// most kMaxWorkerProfiles workers), and flamegraph-diff-<a>-vs-<b>.svg for the first two hosts
// profiled over the same phase.
inline constexpr int kMaxWorkerProfiles = 64;
std::vector<std::pair<std::string, std::string>> ProfileFiles(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles,
                                                              const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers);

// The same graphs for the HTML report, titled, in that order.
std::vector<std::pair<std::string, std::string>> ProfileGraphs(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles,
                                                               const google::protobuf::RepeatedPtrField<v1::WorkerInfo>& workers);

// The differential flame graph of `after` against `before` (two compare targets' hosts).
std::string DifferentialFlameGraph(const std::string& title, const v1::HostProfile& before, const v1::HostProfile& after);

// The text report's "CPU profiles" section: per profile, samples, the top stacks' roots (which
// threads) and leaves (which functions), and the counters.
void AppendProfilesText(const google::protobuf::RepeatedPtrField<v1::HostProfile>& profiles, std::string* out);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_HOST_PROFILES_H_
