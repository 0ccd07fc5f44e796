#include "job/job_validation.h"

#include <cmath>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/nfs_url.h"
#include "common/printable.h"
#include "engines/engine_catalog.h"
#include "job/block_sizes.h"
#include "job/data_pattern.h"
#include "job/io_priority.h"
#include "job/file_names.h"
#include "job/mdtest_tree.h"
#include "job/run_limits.h"
#include "job/rw_mode.h"

namespace iofleet {
namespace {

std::string Where(const v1::JobSpec& job) {
  std::string where;
  if (!job.location().file().empty()) {
    where = absl::StrCat(job.location().file(), ":", job.location().line(), ": ");
  }
  return absl::StrCat(where, "job '", Printable(job.name(), 64), "': ");
}

// A file-name component the worker will create or open: no '/', no NUL, not "." or "..", not
// empty and not longer than a name may be.
absl::Status CheckFileName(absl::string_view name, absl::string_view what) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(what, " is empty"));
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is ", name.size(), " bytes long, above the maximum of ", kMaxNameLength));
  }
  if (name == "." || name == "..") return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' names a directory"));
  if (name.find('/') != absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, " '", name, "' holds a '/'"));
  if (name.find('\0') != absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, " holds a NUL byte"));
  return absl::OkStatus();
}

absl::Status CheckPath(absl::string_view path, absl::string_view what) {
  if (path.size() > kMaxPathLength) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is ", path.size(), " bytes long, above the maximum of ", kMaxPathLength));
  }
  if (path.find('\0') != absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, " holds a NUL byte"));
  return absl::OkStatus();
}

absl::Status CheckDuration(uint64_t ns, absl::string_view option) {
  if (ns <= kMaxDurationNs) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(option, " is longer than the maximum of 365 days"));
}

absl::Status ValidateMetadataJob(const v1::JobSpec& job) {
  const v1::MetadataPhase& phase = job.metadata();
  auto bad = [&](absl::string_view what) { return absl::InvalidArgumentError(absl::StrCat(Where(job), what)); };
  if (phase.test_dirs_size() > 1024) return bad("more than 1024 test directories (-d)");
  for (const std::string& dir : phase.test_dirs()) {
    if (absl::Status s = CheckPath(dir, "a test directory (-d)"); !s.ok()) return bad(s.message());
  }
  if (phase.items_per_task() > kMaxItemsPerTask || phase.items_per_dir() > kMaxItemsPerTask) {
    return bad(absl::StrCat("more than ", kMaxItemsPerTask, " items per task (-n, -I)"));
  }
  if (phase.depth() > kMaxTreeDepth) {
    return bad(absl::StrCat("a tree of depth ", phase.depth(), " (-z) is deeper than ", kMaxTreeDepth, " levels, with paths of over ",
                            kMaxPathLength, " bytes"));
  }
  if (MdtestTree::DirectoryCount(phase.depth(), phase.branch()) > kMaxTreeDirectories) {
    return bad(absl::StrCat("a tree of depth ", phase.depth(), " and branching factor ", phase.branch(), " has more than ", kMaxTreeDirectories,
                            " directories (-z, -b)"));
  }
  if (phase.items_per_dir() > 0 && phase.items_per_task() == 0 &&
      phase.items_per_dir() > kMaxItemsPerTask / MdtestTree::DirectoryCount(phase.depth(), phase.branch())) {
    return bad(absl::StrCat("-I ", phase.items_per_dir(), " in every tree directory makes more than ", kMaxItemsPerTask, " items per task"));
  }
  // -n with -I and no -u (mdtest's directory loops): -n/-I copies of the tree, -I items in each
  // of its directories: -n items per tree directory in all.
  if (MdtestTree::HasDirectoryLoops(phase) && phase.items_per_task() > kMaxItemsPerTask / MdtestTree::DirectoryCount(phase.depth(), phase.branch())) {
    return bad(absl::StrCat("-n ", phase.items_per_task(), " with -I makes -n items in every tree directory, more than ", kMaxItemsPerTask,
                            " items per task"));
  }
  if (phase.write_bytes() > kMaxMetadataIoBytes || phase.read_bytes() > kMaxMetadataIoBytes) {
    return bad(absl::StrCat("bytes written or read per file (-w, -e) above the maximum of ", kMaxMetadataIoBytes));
  }
  if (phase.task_count() > kMaxWorkerCount * kMaxThreadsPerRun / 1024) return bad("too many tasks");
  if (phase.task_first_step_size() > static_cast<int>(phase.task_count())) return bad("more wear-out start steps than tasks");
  if (absl::Status s = CheckDuration(phase.stonewall_ns(), "the stonewall time (-W)"); !s.ok()) return bad(s.message());
  if (phase.op() == v1::MetadataPhase::OP_UNSPECIFIED) return bad("no metadata operation");
  if (!v1::MetadataPhase::Op_IsValid(phase.op())) return bad(absl::StrCat("unknown metadata operation ", static_cast<int>(phase.op())));
  if (phase.test_dirs().empty()) return bad("no test directory (-d)");
  const bool nfs = IsNfsUrl(phase.test_dirs(0));
  for (const std::string& dir : phase.test_dirs()) {
    if (IsNfsUrl(dir) != nfs) return bad("test directories cannot mix nfs:// URLs and local paths");
    if (nfs) {
      if (auto url = ParseNfsUrl(dir); !url.ok()) return bad(url.status().message());
    } else if (dir.empty() || dir[0] != '/') {
      return bad(absl::StrCat("test directory '", dir, "' must be an absolute path or an nfs:// URL"));
    }
  }
  if (!phase.per_op_csv().empty()) {
    // Room for "-File creation-00000.csv" after it (the longest phase name, a rank of 10 digits).
    constexpr size_t kSuffix = 40;
    if (absl::Status s = CheckPath(phase.per_op_csv(), "the per-operation CSV prefix (--savePerOpDataCSV)"); !s.ok()) return bad(s.message());
    if (phase.per_op_csv()[0] != '/') return bad(absl::StrCat("the per-operation CSV prefix '", phase.per_op_csv(), "' must be an absolute path"));
    if (phase.per_op_csv().size() + kSuffix > kMaxPathLength) return bad("the per-operation CSV prefix leaves no room for the file names");
  }
  if (absl::Status s = CheckDuration(phase.per_op_time_offset_ns(), "the per-operation CSV's time offset"); !s.ok()) return bad(s.message());
  if (phase.remove_test_dirs_size() > phase.test_dirs_size()) return bad("more test directories to remove than there are");
  for (const uint32_t index : phase.remove_test_dirs()) {
    if (index >= static_cast<uint32_t>(phase.test_dirs_size())) return bad(absl::StrCat("test directory to remove #", index, " does not exist"));
    if (phase.op() != v1::MetadataPhase::TREE_REMOVE) return bad("test directories are removed only by a tree removal");
  }
  if (job.numjobs() == 0 || phase.task_count() == 0) return bad("no tasks");
  if (phase.items_per_task() == 0 && phase.items_per_dir() == 0 && phase.op() != v1::MetadataPhase::TREE_CREATE &&
      phase.op() != v1::MetadataPhase::TREE_REMOVE && phase.op() != v1::MetadataPhase::READDIR) {
    return bad("no items (-n or -I)");
  }
  if (phase.depth() > 0 && phase.branch() == 0) return bad("a tree deeper than 0 (-z) needs a branching factor (-b) of at least 1");
  if (phase.has_dummy()) {
    const v1::MetadataPhase::DummyBackend& dummy = phase.dummy();
    for (const auto& [option, us] : {std::pair{"create", dummy.delay_create_us()}, std::pair{"close", dummy.delay_close_us()},
                                     std::pair{"sync", dummy.delay_sync_us()}, std::pair{"xfer", dummy.delay_xfer_us()}}) {
      if (us > kMaxDummyDelayUs) return bad(absl::StrCat("--dummy.delay-", option, "=", us, ": above the maximum of ", kMaxDummyDelayUs, " us"));
    }
    if (phase.use_mknod()) return bad("-k: mdtest's DUMMY backend has no mknod");
    if (phase.direct_io() || phase.range_locks()) return bad("--posix.odirect and --posix.rangelocks are the POSIX backend's, not -a DUMMY's");
  }
  if (nfs && (phase.direct_io() || phase.range_locks())) {
    return bad("--posix.odirect and --posix.rangelocks need a mounted test directory (libnfs has neither O_DIRECT nor locks)");
  }
  return absl::OkStatus();
}

// verify= and the options that shape verified data.
absl::Status ValidateVerify(const v1::JobSpec& job) {
  for (const auto& [option, pattern] : {std::pair{"verify_pattern", &job.verify_pattern()}, std::pair{"buffer_pattern", &job.buffer_pattern()}}) {
    if (pattern == &job.verify_pattern() ? !job.has_verify_pattern() : !job.has_buffer_pattern()) continue;
    if (absl::Status s = CheckDataPattern(*pattern); !s.ok()) return absl::InvalidArgumentError(absl::StrCat(option, ": ", s.message()));
  }
  if (job.buffer_pattern().block_offset_at_size() > 0) return absl::InvalidArgumentError("buffer_pattern: %o is for verify_pattern only");
  const v1::JobSpec::Verify kind = job.verify();
  if (kind == v1::JobSpec::VERIFY_NONE) {
    if (job.verify_interval() > 0 || job.verify_any_sequence()) {
      return absl::InvalidArgumentError("verify_interval and verify_write_sequence have no effect without verify=");
    }
    return absl::OkStatus();
  }
  if ((kind == v1::JobSpec::VERIFY_PATTERN || kind == v1::JobSpec::VERIFY_PATTERN_NO_HEADER) && !job.has_verify_pattern()) {
    return absl::InvalidArgumentError("verify=pattern needs verify_pattern= (the pattern to check)");
  }
  // Each unit (a block, or verify_interval bytes of it) carries an 80-byte header.
  const uint64_t unit = job.verify_interval() > 0 ? job.verify_interval() : MinBlockSize(job);
  if (kind != v1::JobSpec::VERIFY_PATTERN_NO_HEADER && unit < 128) {
    return absl::InvalidArgumentError(job.verify_interval() > 0
                                          ? "verify_interval must be at least 128 bytes (each interval carries an 80-byte header)"
                                          : "verify needs blocks of at least 128 bytes (each carries an 80-byte header)");
  }
  if (job.verify_interval() > 0) {
    for (const uint64_t bs : {MinBlockSize(job), MaxBlockSize(job)}) {
      if (bs % job.verify_interval() != 0) {
        return absl::InvalidArgumentError(absl::StrCat("verify_interval (", job.verify_interval(), ") must divide the block size (", bs, ")"));
      }
    }
  }
  return absl::OkStatus();
}

// zonemode and its options (fio's zbd_verify_sizes/zbd_verify_bs and init_zone_info checks).
absl::Status ValidateZones(const v1::JobSpec& job) {
  const v1::ZoneSpec& zones = job.zones();
  auto bad = [](auto&&... what) { return absl::InvalidArgumentError(absl::StrCat(what...)); };
  if (!v1::ZoneSpec::Mode_IsValid(zones.mode())) return bad("unknown zonemode value");
  if (zones.size_zones() || zones.offset_zones() || zones.io_size_zones() || zones.skip_zones()) {
    return bad("sizes in zones (Nz) must be resolved to bytes before a job is sent");
  }
  if (TrimsData(job.rw()) && job.ioengine() == "nfs" && zones.mode() != v1::ZoneSpec::ZBD) {
    return bad("rw=", job.rw() == v1::SEQ_TRIM ? "trim" : "randtrim", " with ioengine=nfs: NFSv3 (libnfs) has no way to deallocate part of a file");
  }
  if (zones.mode() == v1::ZoneSpec::NONE) return absl::OkStatus();
  if (zones.size() == 0) {
    return bad("zonemode=", zones.mode() == v1::ZoneSpec::ZBD ? "zbd" : "strided", " needs zonesize=: iofleet emulates zones, as fio does on "
               "regular files and block devices that are not zoned; it does not read a zoned device's own zones");
  }
  if (zones.mode() == v1::ZoneSpec::STRIDED) return absl::OkStatus();
  if (zones.size() < 512) return bad("zonesize ", zones.size(), " is below 512 bytes (fio's minimum for zonemode=zbd)");
  if (zones.capacity() > zones.size()) return bad("zonecapacity ", zones.capacity(), " is larger than zonesize ", zones.size());
  if (zones.skip() > 0) return bad("zoneskip with zonemode=zbd is not implemented by iofleet");
  if (zones.max_open_zones() > kMaxOpenZones) return bad("max_open_zones above ", kMaxOpenZones);
  for (const auto& [name, fraction] : {std::pair{"zone_reset_threshold", zones.reset_threshold()}, std::pair{"zone_reset_frequency", zones.reset_frequency()}}) {
    if (!(fraction >= 0 && fraction <= 1)) return bad(name, " must be a fraction from 0 to 1");
  }
  if (job.size_percent() == 0 && (job.offset() + FileSize(job)) / zones.size() > kMaxEmulatedZones) {
    return bad("zonesize ", zones.size(), " cuts the file into more than ", kMaxEmulatedZones, " zones");
  }
  const uint64_t capacity = zones.capacity() ? zones.capacity() : zones.size();
  if (WritesData(job.rw()) && MaxBlockSize(job) > capacity) {
    return bad("a write block (", MaxBlockSize(job), " bytes) is larger than a zone's capacity (", capacity, ")");
  }
  if (TrimsData(job.rw()) && (job.trim_bs().min() != zones.size() || job.trim_bs().max() != zones.size())) {
    return bad("with zonemode=zbd a trim resets a zone: the trim block size must be zonesize (", zones.size(), ")");
  }
  if (job.verify() != v1::JobSpec::VERIFY_NONE && WritesData(job.rw()) && zones.size() % MaxBlockSize(job) != 0) {
    return bad("with verify, the block size (", MaxBlockSize(job), ") must divide zonesize (", zones.size(), ")");
  }
  return absl::OkStatus();
}

absl::Status ValidateJob(const v1::JobSpec& job) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(Where(job), what));
  };
  if (job.name().empty()) return bad("a job needs a name");
  // The name becomes part of file names (<name>.w<worker>.<thread>.<file>).
  if (absl::Status s = CheckFileName(job.name(), "the job name"); !s.ok()) return bad(s.message());
  if (job.numjobs() == 0) return bad("numjobs must be at least 1");
  if (job.numjobs() > kMaxThreadsPerRun) return bad(absl::StrCat("numjobs above ", kMaxThreadsPerRun, " per worker is not supported"));
  for (const auto& [option, ns] : {std::pair{"runtime", job.runtime_ns()}, std::pair{"startdelay", job.startdelay_ns()},
                                   std::pair{"ramp_time", job.ramp_time_ns()}, std::pair{"thinktime", job.thinktime_ns()}, std::pair{"flow_sleep", job.flow_sleep_ns()},
                                   std::pair{"latency_target", job.latency_target_ns()}, std::pair{"latency_window", job.latency_window_ns()},
                                   std::pair{"verify_across_workers_delay", job.verify_across_workers_delay_ns()}}) {
    if (absl::Status s = CheckDuration(ns, option); !s.ok()) return bad(s.message());
  }
  if (job.has_metadata()) return ValidateMetadataJob(job);
  // Enumerations arrive as numbers: one no version of iofleet defines is refused, not guessed at.
  if (!v1::ReadWrite_IsValid(job.rw())) return bad(absl::StrCat("unknown rw value ", static_cast<int>(job.rw())));
  if (!v1::JobSpec::RateProcess_IsValid(job.rate_process())) return bad("unknown rate_process value");
  if (!v1::JobSpec::FileService_IsValid(job.file_service())) return bad("unknown file_service_type value");
  if (!v1::JobSpec::Verify_IsValid(job.verify())) return bad("unknown verify value");
  if (!v1::JobSpec::Fallocate_IsValid(job.fallocate())) return bad("unknown fallocate value");
  if (!v1::JobSpec::ExitWhat_IsValid(job.exit_what())) return bad("unknown exit_what value");
  if (absl::Status s = CheckPath(job.directory(), "directory"); !s.ok()) return bad(s.message());
  if (absl::Status s = CheckPath(job.filename(), "filename"); !s.ok()) return bad(s.message());
  // Each name of a ':'-separated list must be a name (or an absolute path's last part).
  for (const std::string& name : JobFileNames(job)) {
    if (name.empty()) return bad(absl::StrCat("filename '", job.filename(), "' has an empty name in its ':'-separated list"));
    const absl::string_view base = absl::string_view(name).substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (absl::Status s = CheckFileName(base, "a file name in filename="); !s.ok()) return bad(s.message());
  }
  for (const std::string& dir : JobDirectories(job)) {
    if (dir.empty()) return bad(absl::StrCat("directory '", job.directory(), "' has an empty entry in its ':'-separated list"));
  }
  if (!job.filename_format().empty()) {
    // Every name the format makes must be a name: checked with the widest numbers it can hold.
    auto sample = GeneratedFileName(job.filename_format(), GeneratedFile{.job_name = job.name(), .worker = UINT32_MAX,
                                                                         .jobnum = UINT32_MAX, .filenum = UINT32_MAX});
    if (!sample.ok()) return bad(sample.status().message());
    if (absl::Status s = CheckFileName(*sample, "a name filename_format makes"); !s.ok()) return bad(s.message());
  }
  if (!job.files_of_job().empty()) {
    if (absl::Status s = CheckFileName(job.files_of_job(), "files_of_job"); !s.ok()) return bad(s.message());
  }
  if (job.nrfiles() > kMaxFilesPerThread) return bad(absl::StrCat("nrfiles above ", kMaxFilesPerThread, " is not supported"));
  if (job.iodepth() == 0) return bad("iodepth must be at least 1");
  for (const auto& [name, splits] : {std::pair{"read", &job.read_bssplit()}, std::pair{"write", &job.write_bssplit()}}) {
    if (splits->size() > 64) return bad(absl::StrCat("bssplit (", name, ") has more than 64 entries"));
    uint64_t percent = 0;
    for (const v1::BlockSizeSplit& split : *splits) {
      if (split.size() == 0 || split.size() > kMaxBlockSize) {
        return bad(absl::StrCat("bssplit (", name, ") has a block size of ", split.size(), ": it must be from 1 to ", kMaxBlockSize));
      }
      if (job.direct() && split.size() % 512 != 0) return bad(absl::StrCat("direct=1 needs bssplit sizes in multiples of 512 (", name, ")"));
      percent += split.percent();
    }
    if (!splits->empty() && percent != 100) {
      return bad(absl::StrCat("bssplit (", name, ") percentages add up to ", percent, ", not 100"));
    }
  }
  for (const auto& [name, range] : {std::pair{"read", &job.read_bs()}, std::pair{"write", &job.write_bs()}, std::pair{"trim", &job.trim_bs()}}) {
    if (range->max() > kMaxBlockSize) return bad(absl::StrCat("bs (", name, ") above the maximum of ", kMaxBlockSize));
  }
  if (job.blockalign() > kMaxBlockSize) return bad(absl::StrCat("blockalign above the maximum of ", kMaxBlockSize));
  if (job.rate_bytes_size() > 3 || job.rate_iops_size() > 3 || job.rate_min_bytes_size() > 3 || job.rate_iops_min_size() > 3) {
    return bad("rate, rate_iops, rate_min and rate_iops_min take at most three values (read,write,trim)");
  }
  const double parameter = job.random_distribution().parameter();
  switch (job.random_distribution().kind()) {
    case v1::RandomDistribution::UNIFORM: break;
    case v1::RandomDistribution::ZIPF:
      if (!std::isfinite(parameter) || parameter <= 0 || parameter == 1.0) return bad("zipf needs a theta above 0 other than 1 (e.g. zipf:1.2)");
      break;
    case v1::RandomDistribution::PARETO:
      if (!std::isfinite(parameter) || parameter <= 0 || parameter >= 1) return bad("pareto needs h between 0 and 1 (e.g. pareto:0.2)");
      break;
    case v1::RandomDistribution::NORMAL:
      if (!std::isfinite(parameter) || parameter <= 0 || parameter > 100) return bad("normal needs a deviation in percent (e.g. normal:5)");
      break;
    case v1::RandomDistribution::ZONED:
    case v1::RandomDistribution::ZONED_ABS: {
      const bool absolute = job.random_distribution().kind() == v1::RandomDistribution::ZONED_ABS;
      for (const auto* zones : {&job.random_distribution().read_zones(), &job.random_distribution().write_zones()}) {
        if (zones->empty() || zones->size() > 256) return bad("random_distribution=zoned needs from 1 to 256 zones per direction");
        uint64_t access = 0, range = 0;
        for (const v1::RandomDistribution::Zone& zone : *zones) {
          access += zone.access_percent();
          range += zone.size_percent();
          if (!absolute && zone.size_percent() == 0) return bad("random_distribution=zoned: a zone without a range percentage");
          if (absolute && zone.size_bytes() == 0 && &zone != &*zones->rbegin()) return bad("random_distribution=zoned_abs: only the last zone may leave its size out");
        }
        if (access != 100) return bad("random_distribution=zoned: the zones' IO percentages do not add up to 100");
        if (!absolute && range != 100) return bad("random_distribution=zoned: the zones' range percentages do not add up to 100");
      }
      break;
    }
    case v1::RandomDistribution::SEQUENCE:
      if (job.random_distribution().sequence().empty() || job.random_distribution().sequence_size() > kMaxSequenceLength) {
        return bad(absl::StrCat("random_distribution=sequence needs from 1 to ", kMaxSequenceLength, " block indices"));
      }
      break;
    default: return bad("unknown random_distribution");
  }
  for (const auto& [option, list, limit] : {std::tuple{"cpus_allowed", &job.cpus_allowed(), kMaxCpu},
                                            std::tuple{"numa_cpu_nodes", &job.numa_cpu_nodes(), kMaxNumaNode},
                                            std::tuple{"numa_mem_policy", &job.numa_mem_nodes(), kMaxNumaNode}}) {
    if (list->size() > static_cast<int>(limit)) return bad(absl::StrCat(option, " lists more than ", limit, " entries"));
    for (const uint32_t n : *list) {
      if (n >= limit) return bad(absl::StrCat(option, ": ", n, " is above ", limit - 1));
    }
  }
  if (!v1::JobSpec::NumaMemPolicy_IsValid(job.numa_mem_policy())) return bad("unknown numa_mem_policy value");
  switch (job.numa_mem_policy()) {
    case v1::JobSpec::NUMA_MEM_PREFER:
      if (job.numa_mem_nodes_size() != 1) return bad("numa_mem_policy=prefer takes one node");
      break;
    case v1::JobSpec::NUMA_MEM_BIND:
    case v1::JobSpec::NUMA_MEM_INTERLEAVE:
      if (job.numa_mem_nodes().empty()) return bad("numa_mem_policy=bind and interleave need nodes");
      break;
    default:
      if (!job.numa_mem_nodes().empty()) return bad("numa_mem_policy nodes need prefer, bind or interleave");
  }
  if (job.cpus_allowed_split() && job.cpus_allowed().empty()) return bad("cpus_allowed_policy=split needs cpus_allowed");
  if (job.flow() > 1000) return bad("flow (a weight) must be from 0 to 1000");
  if (!std::isfinite(job.latency_percentile()) || job.latency_percentile() < 0 || job.latency_percentile() > 100) {
    return bad("latency_percentile must be in (0, 100]");
  }
  if (job.latency_target_ns() > 0 && job.disable_lat()) return bad("latency_target judges latency, which disable_lat (or gtod_reduce) leaves unmeasured");
  if (job.has_steadystate()) {
    const v1::SteadyState& ss = job.steadystate();
    if (!v1::SteadyState::Criterion_IsValid(ss.criterion())) return bad("unknown steadystate criterion");
    if (!std::isfinite(ss.limit()) || ss.limit() < 0) return bad("the steadystate limit must be a number of at least 0");
    for (const auto& [option, ns] : {std::pair{"steadystate_duration", ss.duration_ns()}, std::pair{"steadystate_ramp_time", ss.ramp_ns()},
                                     std::pair{"steadystate_check_interval", ss.check_interval_ns()}}) {
      if (absl::Status s = CheckDuration(ns, option); !s.ok()) return bad(s.message());
    }
    const uint64_t check = ss.check_interval_ns() ? ss.check_interval_ns() : 1'000'000'000;
    if (ss.duration_ns() > 0 && ss.duration_ns() < check) return bad("steadystate_duration is shorter than one check interval");
    if (ss.duration_ns() / check > 1'000'000) return bad("steadystate_duration holds more than 1,000,000 check intervals");
    if ((ss.criterion() == v1::SteadyState::LAT || ss.criterion() == v1::SteadyState::LAT_SLOPE) && job.disable_clat()) {
      return bad("steadystate=lat judges completion latency, which disable_clat (or gtod_reduce) leaves unmeasured");
    }
  }
  if (job.percentile_list_size() > 20) return bad("at most 20 percentiles (percentile_list)");
  for (const double p : job.percentile_list()) {
    if (!std::isfinite(p) || p <= 0 || p > 100) return bad(absl::StrCat("percentile ", p, " is not in (0, 100] (percentile_list)"));
  }
  if (job.buffer_compress_percentage() > 100) return bad("buffer_compress_percentage must be between 0 and 100");
  if (job.dedupe_percentage() > 100 || job.dedupe_working_set_percentage() > 100) return bad("dedupe percentages must be between 0 and 100");
  if (!v1::JobSpec::DedupeMode_IsValid(job.dedupe_mode())) return bad("unknown dedupe_mode value");
  if (job.dedupe_percentage() > 0 && job.verify() != v1::JobSpec::VERIFY_NONE) {
    return bad("dedupe_percentage with verify: every verified block carries a header that makes it unique");
  }
  if (job.dedupe_percentage() > 0 && job.zero_buffers()) return bad("dedupe_percentage with zero_buffers: every block is the same already");
  if (job.dedupe_global() && job.dedupe_mode() != v1::JobSpec::DEDUPE_WORKING_SET) {
    return bad("dedupe_global shares a working set: it needs dedupe_mode=working_set");
  }
  if (job.buffer_compress_chunk() > kMaxBlockSize) return bad("buffer_compress_chunk is too large");
  if (job.iodepth_batch_complete_min() > 0 && job.iodepth_batch_complete_max() > 0 &&
      job.iodepth_batch_complete_min() > job.iodepth_batch_complete_max()) {
    return bad("iodepth_batch_complete_min is above iodepth_batch_complete_max");
  }
  if (job.filesize() > 0 && job.offset() > UINT64_MAX - job.filesize()) return bad("offset + filesize overflows");
  if (job.size_percent() > 100) return bad("size=N% must be from 1% to 100%");
  if (job.rw() == v1::READ_WRITE_UNSPECIFIED) return bad("rw is not set");
  for (const auto& [name, range] : {std::pair{"read", &job.read_bs()}, std::pair{"write", &job.write_bs()}, std::pair{"trim", &job.trim_bs()}}) {
    if (range->min() == 0 || range->max() == 0) return bad(absl::StrCat("bs must be greater than 0 (", name, ")"));
    if (range->min() > range->max()) {
      return bad(absl::StrCat("the ", name, " block size range ", range->min(), "-", range->max(), " is reversed"));
    }
    if (job.direct() && (range->min() % 512 != 0 || range->max() % 512 != 0)) {
      return bad(absl::StrCat("direct=1 needs bs to be a multiple of 512 (", name, ": ", range->min(), "-", range->max(), ")"));
    }
  }
  if (job.size_percent() > 0 && job.filename().empty()) {
    return bad("size=N% needs filename= naming existing files (the percentage is of their size)");
  }
  if (job.fill_device()) {
    if (NeedsExistingData(job.rw()) || !WritesData(job.rw())) {
      return bad("fill_device is for jobs that only write: a job that reads needs the data first (fill the file system in a write job before it, as fio's surface-scan.fio does)");
    }
    if (job.size_percent() > 0) return bad("fill_device sizes the job from the free space: drop size=N%");
  }
  if (job.size() == 0 && job.size_percent() == 0 && !job.fill_device()) return bad("size is not set (how many bytes each job thread works on)");
  if (job.size_percent() == 0 && job.size() > 0 && MaxBlockSize(job) > job.size()) {
    return bad(absl::StrCat("bs (", MaxBlockSize(job), ") is larger than size (", job.size(), ")"));
  }
  if (job.offset() > UINT64_MAX - job.size()) return bad("offset + size overflows");
  if (job.offset_increment() > 0 &&
      (job.offset_increment() > (UINT64_MAX - job.offset() - job.size()) / std::max(1u, job.numjobs()))) {
    return bad("offset + offset_increment * numjobs + size overflows");
  }
  if (job.sprandom()) {
    if (job.rw() != v1::RAND_WRITE) return bad("sprandom is for rw=randwrite (it writes a drive into a steady state), as in fio");
    if (!job.norandommap()) return bad("sprandom needs norandommap=1, as in fio (it chooses which blocks are written again itself)");
    if (!(job.spr_over_provisioning() > 0 && job.spr_over_provisioning() < 5.0 / 3)) return bad("spr_op must be above 0 and below 1.67");
    if (job.spr_num_regions() == 0 || job.spr_num_regions() > kMaxSprandomRegions) {
      return bad(absl::StrCat("spr_num_regions must be from 1 to ", kMaxSprandomRegions));
    }
    const uint64_t bs = MaxBlockSize(job);
    if (MinBlockSize(job) != bs || (bs & (bs - 1)) != 0) return bad("sprandom needs one block size, a power of 2 (fio's)");
  } else if (job.spr_over_provisioning() != 0 || job.spr_num_regions() != 0) {
    return bad("spr_op and spr_num_regions have no effect without sprandom=1");
  }
  if (job.verify_backlog() > kMaxVerifyBacklog) return bad(absl::StrCat("verify_backlog above ", kMaxVerifyBacklog, " is not supported"));
  if (job.verify_async() > kMaxVerifyAsyncThreads) return bad(absl::StrCat("verify_async above ", kMaxVerifyAsyncThreads, " threads is not supported"));
  for (const auto* list : {&job.ignore_read_errors(), &job.ignore_write_errors(), &job.ignore_verify_errors()}) {
    if (list->size() > static_cast<int>(kMaxIgnoredErrors)) return bad(absl::StrCat("ignore_error: more than ", kMaxIgnoredErrors, " errors in one list"));
    for (const int32_t e : *list) {
      if (e <= 0 || e >= kMaxErrno) return bad(absl::StrCat("ignore_error: errno ", e, " is out of range"));
    }
  }
  if (job.verify_across_workers_delay_ns() > 0 && !job.verify_across_workers()) {
    return bad("verify_across_workers_delay has no effect without verify_across_workers=1");
  }
  if (job.verify_across_workers() && job.verify() == v1::JobSpec::VERIFY_NONE) {
    return bad("verify_across_workers needs verify= (a checksum, meta or pattern)");
  }
  if (absl::Status s = ValidateVerify(job); !s.ok()) return bad(s.message());
  if (job.nrfiles() > 1 && job.size_percent() == 0 && job.size() > 0 && FileSize(job) < MaxBlockSize(job)) {
    return bad(absl::StrCat("each of the ", job.nrfiles(), " files would hold ", FileSize(job), " bytes, less than one block"));
  }
  if (job.io_size() > 0 && job.io_size() < MinBlockSize(job)) return bad("io_size is smaller than one block");
  if (absl::Status s = ValidateZones(job); !s.ok()) return bad(s.message());
  if (job.thinktime_blocks() > 1 && job.thinktime_ns() == 0) {
    // fio accepts it and does nothing; say so instead of running something else quietly.
    return bad("thinktime_blocks without thinktime has no effect: set thinktime too");
  }
  if (job.rwmix_read() > 100) return bad("rwmixread must be between 0 and 100");
  if (job.time_based() && job.runtime_ns() == 0) return bad("time_based needs a runtime");
  if (job.iodepth() > 4096) return bad("iodepth above 4096 is not supported");
  auto engine = FindEngine(job.ioengine());
  if (!engine.ok()) return bad(engine.status().message());
  const bool nfs_directory = IsNfsUrl(job.directory());
  if ((*engine)->nfs_urls && !nfs_directory) {
    return bad(absl::StrCat("ioengine=", job.ioengine(), " needs nfs_url=nfs://server/export[/path] (where the job's files go)"));
  }
  if (nfs_directory && !(*engine)->nfs_urls) {
    return bad(absl::StrCat("directory ", job.directory(), " is an NFS URL: use ioengine=nfs (a userspace NFS client), or a path where the export is mounted"));
  }
  if (nfs_directory) {
    if (auto url = ParseNfsUrl(job.directory()); !url.ok()) return bad(url.status().message());
    if (job.filename().find('/') != std::string::npos) return bad("with ioengine=nfs, filename= names files inside nfs_url (no '/')");
  }
  for (const std::string& dir : nfs_directory ? std::vector<std::string>{} : JobDirectories(job)) {
    if (dir[0] != '/') return bad(absl::StrCat("directory '", dir, "' must be an absolute path (a path on the workers)"));
  }
  for (const std::string& name : JobFileNames(job)) {
    if (name.find('/') != absl::string_view::npos && name[0] != '/') {
      return bad(absl::StrCat("filename '", name, "' must be an absolute path or a plain name in directory="));
    }
  }
  if (job.filename().find('/') != std::string::npos && !job.directory().empty()) {
    return bad("filename with a '/' cannot be combined with directory");
  }
  if (NeedsDirectory(job)) return bad("no directory= (where the job's files go)");
  if (job.io_submit_offload() && (*engine)->synchronous) {
    return bad(absl::StrCat("io_submit_mode=offload needs an engine that queues (libaio, io_uring, nfs); ioengine=", job.ioengine(),
                            " completes each IO before the next is sent"));
  }
  auto priorities = ResolveIoPriorities(job);
  if (!priorities.ok()) return bad(priorities.status().message());
  if ((!priorities->rules[0].empty() || !priorities->rules[1].empty()) && !(*engine)->per_io_priority) {
    return bad(absl::StrCat("cmdprio_* sets a priority per IO, which needs ioengine=libaio or io_uring (as in fio); ioengine=", job.ioengine(),
                            " has no way to (prio=/prioclass= set the whole job's)"));
  }
  if (job.atomic() && !(*engine)->atomic_writes) {
    std::vector<std::string> able;
    for (const EngineTraits& e : EngineCatalog()) {
      if (e.atomic_writes) able.push_back(e.name);
    }
    return bad(absl::StrCat("atomic=1 needs an engine that sends RWF_ATOMIC (", absl::StrJoin(able, ", "), "); ioengine=", job.ioengine(), " has no way to"));
  }
  if (job.hipri() && job.ioengine() == "io_uring" && !job.direct()) {
    return bad("hipri=1 with io_uring polls for completions, which needs direct=1");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRunSpec(const v1::RunSpec& spec) {
  if (spec.jobs().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(spec.source(), ": no jobs defined"));
  }
  if (spec.jobs_released() && !spec.jobs_in_sequence()) {
    return absl::InvalidArgumentError("jobs_released: only the jobs of a sequence (jobs_in_sequence) are released");
  }
  uint64_t threads = 0;
  for (const v1::JobSpec& job : spec.jobs()) {
    absl::Status status = ValidateJob(job);
    if (!status.ok()) return status;
    if (spec.jobs_in_sequence()) {
      // One thread per task runs every job in turn: each job a metadata phase with the same
      // tasks, none cut short by a stonewall (the next phase's items would depend on it).
      auto bad = [&](absl::string_view what) { return absl::InvalidArgumentError(absl::StrCat(Where(job), "jobs in sequence: ", what)); };
      if (!job.has_metadata()) return bad("every job must be a metadata phase");
      if (job.numjobs() != spec.jobs(0).numjobs()) return bad(absl::StrCat("numjobs=", job.numjobs(), " differs from the first job's ", spec.jobs(0).numjobs()));
      if (job.metadata().stonewall_ns() != 0) return bad("a phase with a stonewall time (-W) cannot be followed at once");
      if (job.startdelay_ns() != 0 || job.ramp_time_ns() != 0) return bad("a phase starts when the previous one ends (no startdelay or ramp_time)");
    }
    threads += job.numjobs();
    if (threads > kMaxThreadsPerRun) {
      return absl::InvalidArgumentError(absl::StrCat(Where(job), "the run has more than ", kMaxThreadsPerRun,
                                                     " threads on each worker (the sum of numjobs over all jobs, ", spec.jobs_size(),
                                                     " of them): split it into several runs"));
    }
  }
  return absl::OkStatus();
}

bool NamesNoPlaceForFiles(const v1::JobSpec& job) {
  return !job.has_metadata() && job.directory().empty() && job.filename().find('/') == std::string::npos;
}

bool NeedsDirectory(const v1::JobSpec& job) {
  if (!NamesNoPlaceForFiles(job)) return false;
  auto engine = FindEngine(job.ioengine());
  return !(engine.ok() && (*engine)->diskless);
}

}  // namespace iofleet
