// Block-layer stage latencies of a host's devices, traced in the kernel: a BPF program
// (worker/bpf/block_stages.bpf.c) on the block tracepoints records, per device and direction,
// each request's queue-to-dispatch (Q2D), dispatch-to-completion (D2C) and queue-to-completion
// (Q2C) times and its size straight into histograms of iofleet's bucket layout. Reading them is
// a few hundred map lookups per interval, whatever the IO rate; the events never reach user
// space. Detaching happens in the destructor, and the kernel does it itself if the process dies
// (the links are descriptors): nothing is left attached, and tracefs is never touched.
#ifndef IOFLEET_WORKER_BLOCK_STAGE_TRACER_H_
#define IOFLEET_WORKER_BLOCK_STAGE_TRACER_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "histogram/latency_histogram.h"
#include "proto/worker_service.pb.h"
#include "worker/block_devices.h"

struct bpf_object;
struct bpf_link;

namespace iofleet {

class BlockStageTracer {
 public:
  static constexpr size_t kMaxDevices = 8;
  static constexpr int kDirections = 4;  // read, write, trim, flush (as the BPF program)
  enum Stage { kQueueToDispatch = 0, kDispatchToComplete = 1, kQueueToComplete = 2, kRequestBytes = 3, kStages = 4 };

  // Loads the program for `devices` (at most kMaxDevices whole disks) and attaches it. Fails
  // with the kernel's or libbpf's reason when BPF cannot be loaded here (no privilege, no BTF,
  // lockdown).
  static absl::StatusOr<std::unique_ptr<BlockStageTracer>> Attach(std::vector<BlockDevice> devices);
  ~BlockStageTracer();
  BlockStageTracer(const BlockStageTracer&) = delete;
  BlockStageTracer& operator=(const BlockStageTracer&) = delete;

  // How many of the tracer's programs (any process's) the kernel holds now: what tests check
  // is 0 once tracing is over (the kernel frees a detached program after an RCU grace period).
  static int ProgramsLoaded();

  const std::vector<BlockDevice>& devices() const { return devices_; }
  // Whether Q is the request's own timestamp (its allocation: btt's G) rather than its first
  // bio's queueing; see worker/bpf/block_stages.bpf.c.
  bool queue_time_from_request() const { return queue_time_from_request_; }

  // Everything recorded since Attach, per device and direction.
  struct Series {
    std::array<LatencyHistogram, kStages> stages;
    uint64_t sequential = 0, merged_bios = 0, unqueued = 0, undispatched = 0;
    // Dispatched requests whose completion the kernel did not report (not timed, not in the
    // histograms' counts): found when their tag was dispatched again, and with
    // `including_in_flight` also those still held when the snapshot was taken.
    uint64_t completion_unseen = 0;
  };
  struct Snapshot {
    std::vector<std::array<Series, kDirections>> devices;  // [device][direction]
    uint64_t missed_events = 0;  // the programs' recursion misses
  };
  // `including_in_flight`: for the last snapshot, once the run's IO is over — every request
  // dispatched and not seen completing counts in completion_unseen (the device's other users'
  // requests in flight at that instant too, a handful at most).
  absl::StatusOr<Snapshot> Read(bool including_in_flight = false) const;

 private:
  BlockStageTracer() = default;

  std::vector<BlockDevice> devices_;
  bpf_object* object_ = nullptr;
  std::vector<bpf_link*> links_;
  std::vector<int> program_fds_;  // the attached programs' (their recursion misses)
  int buckets_fd_ = -1, stats_fd_ = -1, counts_fd_ = -1, in_flight_fd_ = -1, in_device_fd_ = -1;
  uint32_t in_flight_slots_ = 0;
  int cpus_ = 1;
  bool queue_time_from_request_ = false;
};

// The interval between two snapshots of one tracer as wire records: one per device that did
// anything (every device with `all`: the last interval names what was traced even when no
// request reached it), its directions with activity. `jobs[d]`: the run's jobs on device d.
std::vector<v1::BlockDeviceStages> BlockStagesSince(const BlockStageTracer::Snapshot& now, const BlockStageTracer::Snapshot& earlier,
                                                    const std::vector<BlockDevice>& devices, const std::string& host,
                                                    const std::vector<std::vector<uint32_t>>& jobs, bool all = false);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_BLOCK_STAGE_TRACER_H_
