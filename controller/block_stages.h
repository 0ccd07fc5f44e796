// --block-stages on the controller's side: merging what workers' tracers sent (exact bucket
// sums, as every other histogram), checking it, and putting it in words for the reports —
// "write p99 1.9 ms = Q2D 0.2 ms + D2C 1.6 ms" per host and device, beside the application's
// latency, and the request sizes the devices saw against the ones the jobs issued.
#ifndef IOFLEET_CONTROLLER_BLOCK_STAGES_H_
#define IOFLEET_CONTROLLER_BLOCK_STAGES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/repeated_field.h"
#include "proto/report.pb.h"

namespace iofleet {

// Whether a device record from the wire is well formed: every histogram valid, directions named
// and not repeated, text fields of sane length.
absl::Status ValidateBlockDevice(const v1::BlockDeviceStages& device);

// Adds `from`'s directions into `into`'s (same direction: histograms merged, counts added).
void MergeBlockDirections(const google::protobuf::RepeatedPtrField<v1::BlockStageDirection>& from,
                          google::protobuf::RepeatedPtrField<v1::BlockStageDirection>* into);

// Adds `from` into the record of the same host and device in `into` (appended if none).
void MergeBlockDevice(const v1::BlockDeviceStages& from, google::protobuf::RepeatedPtrField<v1::BlockDeviceStages>* into);

// One direction of a device in words: "p99 Q2C 1.90ms, Q2D 0.21ms, D2C 1.62ms" (percentiles do
// not add up), or with percentile 0 the exact split of the means, "mean Q2C 0.40ms = Q2D 0.05ms
// + D2C 0.35ms"; and the request sizes ("4 KiB requests, 99% sequential, 12 bios merged").
std::string BlockStageSplit(const v1::BlockStageDirection& direction, double percentile);
std::string BlockRequestShape(const v1::BlockStageDirection& direction);

// The report's "Block stages" section: per host and device, each direction's stage split at
// p50 and p99 beside the application's latency on that host (the jobs on the device, their
// workers there), and the requests the device saw against the ones the jobs issued. Nothing
// when the run traced no device (the notes say why per job).
void AppendBlockStagesText(const google::protobuf::RepeatedPtrField<v1::BlockDeviceStages>& devices,
                           const std::function<std::string(uint32_t job)>& job_name, std::string* out);

// The host-difference check for block stages: a host whose D2C or Q2D p99 (all its traced
// devices, per direction) is more than twice the median of the other hosts' (and at least
// 100 us above it) is named in its workers' `differs`. Needs at least two traced hosts.
void MarkBlockStageOutliers(v1::RunReport* report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_BLOCK_STAGES_H_
