#include "job/job_validation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/nfs_url.h"
#include "engines/engine_registry.h"
#include "job/block_sizes.h"

namespace iofleet {
namespace {

std::string Where(const v1::JobSpec& job) {
  std::string where;
  if (!job.location().file().empty()) {
    where = absl::StrCat(job.location().file(), ":", job.location().line(), ": ");
  }
  return absl::StrCat(where, "job '", job.name(), "': ");
}

absl::Status ValidateMetadataJob(const v1::JobSpec& job) {
  const v1::MetadataPhase& phase = job.metadata();
  auto bad = [&](absl::string_view what) { return absl::InvalidArgumentError(absl::StrCat(Where(job), what)); };
  if (phase.op() == v1::MetadataPhase::OP_UNSPECIFIED) return bad("no metadata operation");
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
  if (job.numjobs() == 0 || phase.task_count() == 0) return bad("no tasks");
  if (phase.items_per_task() == 0 && phase.items_per_dir() == 0 && phase.op() != v1::MetadataPhase::TREE_CREATE &&
      phase.op() != v1::MetadataPhase::TREE_REMOVE && phase.op() != v1::MetadataPhase::READDIR) {
    return bad("no items (-n or -I)");
  }
  if (phase.depth() > 0 && phase.branch() == 0) return bad("a tree deeper than 0 (-z) needs a branching factor (-b) of at least 1");
  return absl::OkStatus();
}

absl::Status ValidateJob(const v1::JobSpec& job) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(Where(job), what));
  };
  if (job.name().empty()) return bad("a job needs a name");
  if (job.has_metadata()) return ValidateMetadataJob(job);
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
  if (job.size() == 0 && job.size_percent() == 0) return bad("size is not set (how many bytes each job thread works on)");
  if (job.size_percent() == 0 && MaxBlockSize(job) > job.size()) {
    return bad(absl::StrCat("bs (", MaxBlockSize(job), ") is larger than size (", job.size(), ")"));
  }
  if (job.numjobs() == 0) return bad("numjobs must be at least 1");
  if (job.offset() > UINT64_MAX - job.size()) return bad("offset + size overflows");
  if (job.verify_across_workers_delay_ns() > 0 && !job.verify_across_workers()) {
    return bad("verify_across_workers_delay has no effect without verify_across_workers=1");
  }
  if (job.verify_across_workers() && job.verify() == v1::JobSpec::VERIFY_NONE) {
    return bad("verify_across_workers needs verify=crc32c or verify=md5");
  }
  if (job.verify() != v1::JobSpec::VERIFY_NONE && MinBlockSize(job) < 128) {
    return bad("verify needs blocks of at least 128 bytes (each carries an 80-byte header)");
  }
  if (job.nrfiles() > 1 && job.size_percent() == 0 && FileSize(job) < MaxBlockSize(job)) {
    return bad(absl::StrCat("each of the ", job.nrfiles(), " files would hold ", FileSize(job), " bytes, less than one block"));
  }
  if (job.io_size() > 0 && job.io_size() < MinBlockSize(job)) return bad("io_size is smaller than one block");
  if (job.thinktime_blocks() > 1 && job.thinktime_ns() == 0) {
    // fio accepts it and does nothing; say so instead of running something else quietly.
    return bad("thinktime_blocks without thinktime has no effect: set thinktime too");
  }
  if (job.numjobs() > 4096) return bad("numjobs above 4096 per worker is not supported");
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
  if (!nfs_directory && !job.directory().empty() && job.directory()[0] != '/') {
    return bad(absl::StrCat("directory '", job.directory(), "' must be an absolute path (a path on the workers)"));
  }
  for (absl::string_view name : absl::StrSplit(job.filename(), ':', absl::SkipEmpty())) {
    if (name.find('/') != absl::string_view::npos && name[0] != '/') {
      return bad(absl::StrCat("filename '", name, "' must be an absolute path or a plain name in directory="));
    }
  }
  if (job.filename().find('/') != std::string::npos && !job.directory().empty()) {
    return bad("filename with a '/' cannot be combined with directory");
  }
  if (!(*engine)->diskless && job.directory().empty() && job.filename().find('/') == std::string::npos) {
    return bad("no directory= (where the job's files go)");
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
  for (const v1::JobSpec& job : spec.jobs()) {
    absl::Status status = ValidateJob(job);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace iofleet
