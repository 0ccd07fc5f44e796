#include "worker/block_stage_tracer.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/match.h"
#include "common/errno_status.h"

// The compiled program (worker:block_stages_bpf_object, from worker/bpf/block_stages.bpf.c).
extern const unsigned char kBlockStagesBpfObject[];
extern const unsigned long kBlockStagesBpfObjectSize;

namespace iofleet {
namespace {

// As the BPF program lays its keys out.
constexpr uint32_t kBucketsPerSeries = 2048;

struct SeriesStats {
  uint64_t count, sum, min, max;
};
struct DirectionCounts {
  uint64_t sequential, merged_bios, unqueued, undispatched, completion_unseen;
};
struct Issued {
  uint64_t issue_ns, queue_ns, request, bytes;
  uint32_t sequential;
  uint16_t device, direction;
  uint64_t padding[11];
};
static_assert(sizeof(Issued) == 128);

// libbpf's messages, kept for the error a failed load returns (its default prints to stderr).
std::mutex& LibbpfLogMutex() {
  static std::mutex mu;
  return mu;
}
std::string& LibbpfLog() {
  static std::string log;
  return log;
}
int CaptureLibbpf(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char line[512];
  const int n = vsnprintf(line, sizeof line, format, args);
  std::string& log = LibbpfLog();
  if (log.size() < 4096) log.append(line, n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof line - 1) : 0);
  return 0;
}

// The last lines libbpf printed, for an error message.
std::string TakeLibbpfLog() {
  std::string log;
  std::swap(log, LibbpfLog());
  while (!log.empty() && log.back() == '\n') log.pop_back();
  const size_t keep = 600;
  if (log.size() > keep) log = "..." + log.substr(log.size() - keep);
  return log.empty() ? "" : absl::StrCat(" (libbpf: ", log, ")");
}

// Sets read-only global `name` of the program's .rodata before the load (what a generated
// skeleton does): found by name in the object's BTF, so the layout the compiler chose holds.
absl::Status SetReadOnlyGlobal(bpf_object* object, const char* name, const void* value, size_t size) {
  bpf_map* rodata = nullptr;
  bpf_map* map;
  bpf_object__for_each_map(map, object) {
    if (absl::EndsWith(bpf_map__name(map), ".rodata")) rodata = map;
  }
  const btf* types = bpf_object__btf(object);
  if (rodata == nullptr || types == nullptr) return absl::InternalError("the BPF object has no .rodata or no BTF");
  size_t data_size = 0;
  const auto* initial = static_cast<const unsigned char*>(bpf_map__initial_value(rodata, &data_size));
  const int section = btf__find_by_name_kind(types, ".rodata", BTF_KIND_DATASEC);
  if (initial == nullptr || section < 0) return absl::InternalError("the BPF object's .rodata cannot be set");
  const btf_type* datasec = btf__type_by_id(types, static_cast<uint32_t>(section));
  const btf_var_secinfo* vars = btf_var_secinfos(datasec);
  for (int i = 0; i < btf_vlen(datasec); ++i) {
    const btf_type* var = btf__type_by_id(types, vars[i].type);
    if (std::strcmp(btf__name_by_offset(types, var->name_off), name) != 0) continue;
    if (vars[i].size != size || vars[i].offset + size > data_size) {
      return absl::InternalError(absl::StrCat("BPF global ", name, " is ", vars[i].size, " bytes, not ", size));
    }
    std::vector<unsigned char> data(initial, initial + data_size);
    std::memcpy(data.data() + vars[i].offset, value, size);
    if (const int error = bpf_map__set_initial_value(rodata, data.data(), data.size()); error != 0) {
      return ErrnoStatus(-error, absl::StrCat("setting BPF global ", name));
    }
    return absl::OkStatus();
  }
  return absl::InternalError(absl::StrCat("BPF global ", name, " not found"));
}

int MapFd(bpf_object* object, const char* name) {
  bpf_map* map = bpf_object__find_map_by_name(object, name);
  return map ? bpf_map__fd(map) : -1;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BlockStageTracer>> BlockStageTracer::Attach(std::vector<BlockDevice> devices) {
  if (devices.empty()) return absl::InvalidArgumentError("no block device to trace");
  if (devices.size() > kMaxDevices) {
    return absl::InvalidArgumentError(absl::StrCat(devices.size(), " block devices under the targets; at most ", kMaxDevices, " are traced"));
  }
  std::lock_guard<std::mutex> log_lock(LibbpfLogMutex());
  libbpf_set_print(CaptureLibbpf);
  LibbpfLog().clear();
  std::unique_ptr<BlockStageTracer> tracer(new BlockStageTracer);
  tracer->devices_ = std::move(devices);
  bpf_object_open_opts options{};
  options.sz = sizeof options;
  options.object_name = "iofleet_block";
  tracer->object_ = bpf_object__open_mem(kBlockStagesBpfObject, kBlockStagesBpfObjectSize, &options);
  if (tracer->object_ == nullptr) {
    const int error = errno;
    return ErrnoStatus(error, absl::StrCat("block stages: opening the BPF program", TakeLibbpfLog()));
  }
  uint32_t encoded[kMaxDevices] = {};
  for (size_t i = 0; i < tracer->devices_.size(); ++i) {
    encoded[i] = (tracer->devices_[i].major << 20) | tracer->devices_[i].minor;  // the kernel's dev_t
  }
  const uint32_t count = static_cast<uint32_t>(tracer->devices_.size());
  absl::Status set = SetReadOnlyGlobal(tracer->object_, "devices", encoded, sizeof encoded);
  if (set.ok()) set = SetReadOnlyGlobal(tracer->object_, "device_count", &count, sizeof count);
  if (!set.ok()) return set;
  // Q from the requests' own timestamps when every device keeps them (iostats=1): then no
  // program runs per bio, which halves the cost. Otherwise each bio's queueing is timed.
  uint32_t from_request = 1;
  for (const BlockDevice& device : tracer->devices_) from_request &= device.io_stats ? 1 : 0;
  if (set.ok()) set = SetReadOnlyGlobal(tracer->object_, "queue_time_from_request", &from_request, sizeof from_request);
  if (!set.ok()) return set;
  if (from_request) bpf_program__set_autoload(bpf_object__find_program_by_name(tracer->object_, "iofleet_bio_queue"), false);
  tracer->queue_time_from_request_ = from_request != 0;
  // In-flight slots by driver tag, for the devices' queues and tag depths (at most 2^20 slots:
  // requests beyond go to the hash).
  uint32_t first[kMaxDevices] = {}, queues[kMaxDevices] = {}, tags[kMaxDevices] = {};
  uint32_t slots = 0;
  for (size_t i = 0; i < tracer->devices_.size(); ++i) {
    const BlockDevice& d = tracer->devices_[i];
    if (d.hardware_queues == 0 || d.tags == 0 || d.hardware_queues > 4096 || d.tags > 65536 ||
        uint64_t{slots} + uint64_t{d.hardware_queues} * d.tags > (1u << 20)) {
      continue;
    }
    first[i] = slots;
    queues[i] = d.hardware_queues;
    tags[i] = d.tags;
    slots += d.hardware_queues * d.tags;
  }
  set = SetReadOnlyGlobal(tracer->object_, "device_first", first, sizeof first);
  if (set.ok()) set = SetReadOnlyGlobal(tracer->object_, "device_queues", queues, sizeof queues);
  if (set.ok()) set = SetReadOnlyGlobal(tracer->object_, "device_tags", tags, sizeof tags);
  if (!set.ok()) return set;
  bpf_map* in_flight = bpf_object__find_map_by_name(tracer->object_, "in_flight");
  if (in_flight == nullptr || bpf_map__set_max_entries(in_flight, std::max<uint32_t>(slots, 1)) != 0) {
    return absl::InternalError("block stages: the BPF program's in-flight map cannot be sized");
  }
  // The dense bucket array, for the devices traced only.
  bpf_map* buckets = bpf_object__find_map_by_name(tracer->object_, "buckets");
  if (buckets == nullptr || bpf_map__set_max_entries(buckets, static_cast<uint32_t>(count * kDirections * kStages * kBucketsPerSeries)) != 0) {
    return absl::InternalError("block stages: the BPF program's bucket map cannot be sized");
  }
  if (const int error = bpf_object__load(tracer->object_); error != 0) {
    return ErrnoStatus(-error, absl::StrCat("block stages: the kernel refused the BPF program", TakeLibbpfLog()));
  }
  bpf_program* program;
  bpf_object__for_each_program(program, tracer->object_) {
    if (!bpf_program__autoload(program)) continue;
    bpf_link* link = bpf_program__attach(program);
    if (link == nullptr) {
      const int error = errno;
      return ErrnoStatus(error, absl::StrCat("block stages: attaching ", bpf_program__name(program), TakeLibbpfLog()));
    }
    tracer->links_.push_back(link);
    tracer->program_fds_.push_back(bpf_program__fd(program));  // owned by the object
  }
  tracer->buckets_fd_ = MapFd(tracer->object_, "buckets");
  tracer->stats_fd_ = MapFd(tracer->object_, "stats");
  tracer->counts_fd_ = MapFd(tracer->object_, "counts");
  tracer->in_flight_fd_ = MapFd(tracer->object_, "in_flight");
  tracer->in_device_fd_ = MapFd(tracer->object_, "in_device");
  tracer->in_flight_slots_ = std::max<uint32_t>(slots, 1);
  tracer->cpus_ = libbpf_num_possible_cpus();
  if (tracer->buckets_fd_ < 0 || tracer->stats_fd_ < 0 || tracer->counts_fd_ < 0 || tracer->in_flight_fd_ < 0 || tracer->in_device_fd_ < 0 ||
      tracer->cpus_ <= 0) {
    return absl::InternalError("block stages: the BPF program's maps are missing");
  }
  TakeLibbpfLog();
  return tracer;
}

int BlockStageTracer::ProgramsLoaded() {
  int n = 0;
  uint32_t id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    const int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t length = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0 && absl::StartsWith(info.name, "iofleet_")) ++n;
    ::close(fd);
  }
  return n;
}

BlockStageTracer::~BlockStageTracer() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
  if (object_ != nullptr) bpf_object__close(object_);
}

absl::StatusOr<BlockStageTracer::Snapshot> BlockStageTracer::Read(bool including_in_flight) const {
  const size_t n = devices_.size();
  const size_t cpus = static_cast<size_t>(cpus_);
  const uint32_t series_count = static_cast<uint32_t>(n * kDirections * kStages);
  // Exact sums and extremes first, then the buckets: a sample recorded in between is in the
  // buckets (which give the count) but not yet in the sum — off by a request or two at most.
  std::vector<SeriesStats> stats(series_count);
  std::vector<SeriesStats> per_cpu(cpus);
  for (uint32_t s = 0; s < series_count; ++s) {
    if (bpf_map_lookup_elem(stats_fd_, &s, per_cpu.data()) != 0) return ErrnoStatus(errno, "block stages: reading the sums");
    SeriesStats& total = stats[s];
    total = {0, 0, UINT64_MAX, 0};
    for (const SeriesStats& c : per_cpu) {
      if (c.count == 0) continue;
      total.count += c.count;
      total.sum += c.sum;
      total.min = std::min(total.min, c.min);
      total.max = std::max(total.max, c.max);
    }
  }
  // The per-CPU bucket array, only between each series' extremes (a few hundred buckets of the
  // 2048 per series, read in one batch call each: reading all of them took 12 ms).
  std::vector<std::vector<uint64_t>> counts(series_count);
  std::vector<uint64_t> values;
  std::vector<uint32_t> keys;
  // Buckets lo..hi of series s into counts[s]; their sum.
  auto read_buckets = [&](uint32_t s, uint32_t lo, uint32_t hi) -> absl::StatusOr<uint64_t> {
    // A batch continues after the key it is given (as get_next_key): the one before the first.
    const uint32_t first = s * kBucketsPerSeries + lo;
    uint32_t want = hi - lo + 1, before = first - 1, next = 0;
    values.assign(static_cast<size_t>(want) * cpus, 0);
    keys.assign(want, 0);
    bpf_map_batch_opts opts{};
    opts.sz = sizeof opts;
    if (bpf_map_lookup_batch(buckets_fd_, first == 0 ? nullptr : &before, &next, keys.data(), values.data(), &want, &opts) != 0 &&
        errno != ENOENT) {
      return ErrnoStatus(errno, "block stages: reading the buckets");
    }
    std::vector<uint64_t>& c = counts[s];
    c.assign(hi + 1, 0);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < want; ++i) {
      const uint32_t bucket = keys[i] - s * kBucketsPerSeries;
      if (bucket > hi) continue;
      for (size_t cpu = 0; cpu < cpus; ++cpu) c[bucket] += values[static_cast<size_t>(i) * cpus + cpu];
      sum += c[bucket];
    }
    return sum;
  };
  for (uint32_t s = 0; s < series_count; ++s) {
    if (stats[s].count == 0) continue;
    const uint32_t lo = std::min(HistogramLayout::BucketIndex(stats[s].min), kBucketsPerSeries - 1);
    const uint32_t hi = std::min(HistogramLayout::BucketIndex(stats[s].max), kBucketsPerSeries - 1);
    absl::StatusOr<uint64_t> in_range = read_buckets(s, lo, hi);
    if (!in_range.ok()) return in_range.status();
    // The extremes are not updated atomically (a preempted program can overwrite a larger
    // maximum with its own): fewer samples between them than the exact count says means some
    // lie outside, so the whole series is read.
    if (*in_range < stats[s].count) {
      absl::StatusOr<uint64_t> all = read_buckets(s, 0, kBucketsPerSeries - 1);
      if (!all.ok()) return all.status();
    }
  }
  // Values past the kept buckets were counted in the last one: placed at the series' maximum.
  for (uint32_t s = 0; s < series_count; ++s) {
    std::vector<uint64_t>& c = counts[s];
    if (c.size() < kBucketsPerSeries || c.back() == 0 || stats[s].max <= HistogramLayout::BucketUpper(kBucketsPerSeries - 1)) continue;
    const uint64_t overflow = c.back();
    c.back() = 0;
    const uint32_t at = HistogramLayout::BucketIndex(stats[s].max);
    c.resize(at + 1, 0);
    c[at] += overflow;
  }
  Snapshot snapshot;
  snapshot.devices.resize(n);
  for (size_t d = 0; d < n; ++d) {
    for (int dir = 0; dir < kDirections; ++dir) {
      Series& series = snapshot.devices[d][static_cast<size_t>(dir)];
      for (int stage = 0; stage < kStages; ++stage) {
        const uint32_t s = static_cast<uint32_t>((d * kDirections + static_cast<size_t>(dir)) * kStages + static_cast<size_t>(stage));
        uint64_t count = 0;
        double squares = 0;
        uint32_t lowest = UINT32_MAX, highest = 0;
        for (uint32_t i = 0; i < counts[s].size(); ++i) {
          if (counts[s][i] == 0) continue;
          count += counts[s][i];
          // No exact sum of squares in the kernel (it would overflow 64 bits): the buckets'
          // midpoints give the standard deviation within the layout's 0.8%.
          const double mid = static_cast<double>(HistogramLayout::BucketMidpoint(i));
          squares += static_cast<double>(counts[s][i]) * mid * mid;
          lowest = std::min(lowest, i);
          highest = i;
        }
        const SeriesStats& st = stats[s];
        // Extremes a racing update missed stay within the buckets that hold the extreme samples.
        const uint64_t min = count ? std::clamp(st.min, HistogramLayout::BucketLower(lowest), HistogramLayout::BucketUpper(lowest)) : 0;
        const uint64_t max = count ? std::clamp(st.max, HistogramLayout::BucketLower(highest), HistogramLayout::BucketUpper(highest)) : 0;
        series.stages[static_cast<size_t>(stage)] = LatencyHistogram::FromParts(std::move(counts[s]), count, st.sum, squares, std::min(min, max), max);
      }
    }
  }
  std::vector<DirectionCounts> counts_per_cpu(cpus);
  for (uint32_t k = 0; k < n * kDirections; ++k) {
    if (bpf_map_lookup_elem(counts_fd_, &k, counts_per_cpu.data()) != 0) return ErrnoStatus(errno, "block stages: reading the counts");
    Series& series = snapshot.devices[k / kDirections][k % kDirections];
    for (const DirectionCounts& c : counts_per_cpu) {
      series.sequential += c.sequential;
      series.merged_bios += c.merged_bios;
      series.unqueued += c.unqueued;
      series.undispatched += c.undispatched;
      series.completion_unseen += c.completion_unseen;
    }
  }
  if (including_in_flight) {
    // Requests still held: dispatched, completion not seen (the slots are few: queues x tags).
    auto count_held = [&](const Issued& held) {
      if (held.request == 0 || held.device >= n || held.direction >= kDirections) return;
      ++snapshot.devices[held.device][held.direction].completion_unseen;
    };
    Issued held{};
    for (uint32_t slot = 0; slot < in_flight_slots_; ++slot) {
      if (bpf_map_lookup_elem(in_flight_fd_, &slot, &held) != 0) return ErrnoStatus(errno, "block stages: reading the requests in flight");
      count_held(held);
    }
    uint64_t key = 0, next = 0;
    for (const uint64_t* previous = nullptr; bpf_map_get_next_key(in_device_fd_, previous, &next) == 0; previous = &key) {
      if (bpf_map_lookup_elem(in_device_fd_, &next, &held) == 0) count_held(held);
      key = next;
    }
  }
  for (int fd : program_fds_) {
    bpf_prog_info info{};
    uint32_t length = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &length) == 0) snapshot.missed_events += info.recursion_misses;
  }
  return snapshot;
}

std::vector<v1::BlockDeviceStages> BlockStagesSince(const BlockStageTracer::Snapshot& now, const BlockStageTracer::Snapshot& earlier,
                                                    const std::vector<BlockDevice>& devices, const std::string& host,
                                                    const std::vector<std::vector<uint32_t>>& jobs, bool all) {
  static constexpr const char* kWireDirection[BlockStageTracer::kDirections] = {"read", "write", "trim", "flush"};
  std::vector<v1::BlockDeviceStages> out;
  bool missed_told = false;
  for (size_t d = 0; d < now.devices.size() && d < devices.size(); ++d) {
    v1::BlockDeviceStages record;
    for (int dir = 0; dir < BlockStageTracer::kDirections; ++dir) {
      const BlockStageTracer::Series& later = now.devices[d][static_cast<size_t>(dir)];
      const BlockStageTracer::Series* before = d < earlier.devices.size() ? &earlier.devices[d][static_cast<size_t>(dir)] : nullptr;
      std::array<LatencyHistogram, BlockStageTracer::kStages> delta;
      for (int s = 0; s < BlockStageTracer::kStages; ++s) {
        delta[static_cast<size_t>(s)] = before ? later.stages[static_cast<size_t>(s)].Since(before->stages[static_cast<size_t>(s)])
                                               : later.stages[static_cast<size_t>(s)];
      }
      const uint64_t merged = later.merged_bios - (before ? before->merged_bios : 0);
      const uint64_t undispatched = later.undispatched - (before ? before->undispatched : 0);
      // Never negative: only the last snapshot adds the requests still held, and it comes last.
      const uint64_t unseen = later.completion_unseen - std::min(later.completion_unseen, before ? before->completion_unseen : 0);
      if (delta[BlockStageTracer::kRequestBytes].count() == 0 && delta[BlockStageTracer::kDispatchToComplete].count() == 0 && merged == 0 &&
          undispatched == 0 && unseen == 0) {
        continue;
      }
      v1::BlockStageDirection* direction = record.add_directions();
      direction->set_direction(kWireDirection[dir]);
      *direction->mutable_queue_to_dispatch() = delta[BlockStageTracer::kQueueToDispatch].ToProto();
      *direction->mutable_dispatch_to_complete() = delta[BlockStageTracer::kDispatchToComplete].ToProto();
      *direction->mutable_queue_to_complete() = delta[BlockStageTracer::kQueueToComplete].ToProto();
      *direction->mutable_request_bytes() = delta[BlockStageTracer::kRequestBytes].ToProto();
      direction->set_sequential(later.sequential - (before ? before->sequential : 0));
      direction->set_merged_bios(merged);
      direction->set_unqueued(later.unqueued - (before ? before->unqueued : 0));
      direction->set_undispatched(undispatched);
      direction->set_completion_unseen(unseen);
    }
    const uint64_t missed = now.missed_events - std::min(now.missed_events, earlier.missed_events);
    if (record.directions_size() == 0 && !all && (missed == 0 || missed_told)) continue;
    if (!missed_told) record.set_missed_events(missed);
    missed_told = true;
    record.set_host(host);
    record.set_device(devices[d].name);
    record.set_scheduler(devices[d].scheduler);
    record.set_backing(devices[d].backing);
    if (d < jobs.size()) {
      for (uint32_t j : jobs[d]) record.add_jobs(j);
    }
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace iofleet
