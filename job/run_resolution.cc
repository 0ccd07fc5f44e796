#include "job/run_resolution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/nfs_url.h"
#include "job/block_sizes.h"
#include "job/file_names.h"
#include "job/rw_mode.h"
#include "job/fio_job_file.h"
#include "job/job_validation.h"

namespace iofleet {
namespace {

// verify_across_workers=1 on a write job: its blocks are read back by another worker after
// every worker finished writing (a stonewalled read job of the same files, shifted by one
// worker), instead of by the writer itself.
absl::Status AddCrossWorkerVerifyJobs(v1::RunSpec* spec) {
  v1::RunSpec expanded = *spec;
  expanded.clear_jobs();
  for (const v1::JobSpec& job : spec->jobs()) {
    v1::JobSpec* writer = expanded.add_jobs();
    *writer = job;
    const bool reads_only = !WritesData(job.rw());
    if (!job.verify_across_workers()) continue;
    if (reads_only) {
      // A re-check of the next worker's files: the delay is a plain start delay.
      writer->set_startdelay_ns(job.startdelay_ns() + job.verify_across_workers_delay_ns());
      writer->set_verify_across_workers_delay_ns(0);
      continue;
    }
    const std::string where = absl::StrCat(job.location().file(), ":", job.location().line(), ": job '", job.name(),
                                           "': verify_across_workers ");
    auto bad = [&](absl::string_view why) { return absl::InvalidArgumentError(absl::StrCat(where, why)); };
    if (job.verify() == v1::JobSpec::VERIFY_NONE) return bad("needs verify= (a checksum, meta or pattern)");
    if (job.rw() != v1::SEQ_WRITE && job.rw() != v1::RAND_WRITE) {
      return bad(absl::StrCat("needs rw=write or rw=randwrite (not ", ReadWriteName(job.rw()), ")"));
    }
    if (!job.filename().empty()) return bad("needs one file per worker (remove filename=)");
    if (job.time_based() || job.runtime_ns() > 0 || job.io_size() > 0 || job.rw_modifier() > 0) {
      return bad("needs every block of the file written once (no time_based, runtime, io_size or rw modifier)");
    }
    if (MinBlockSize(job) != MaxBlockSize(job)) return bad("needs one block size (bs=, not bsrange or bssplit)");
    writer->set_do_verify(false);
    writer->set_verify_across_workers(false);
    writer->set_unlink(false);  // the files must outlive the write phase; the verify job unlinks
    writer->set_verify_across_workers_delay_ns(0);
    v1::JobSpec* verifier = expanded.add_jobs();
    *verifier = job;
    verifier->set_name(absl::StrCat(job.name(), "-verify"));
    verifier->set_files_of_job(job.name());
    verifier->set_rw(v1::SEQ_READ);
    verifier->set_stonewall(true);
    verifier->set_do_verify(false);
    verifier->set_overwrite(false);
    verifier->set_create_on_open(false);
    verifier->set_end_fsync(false);
    verifier->set_fsync_on_close(false);
    verifier->set_startdelay_ns(job.verify_across_workers_delay_ns());
    verifier->set_verify_across_workers_delay_ns(0);
    verifier->set_ramp_time_ns(0);
    verifier->set_thinktime_ns(0);
    verifier->clear_rate_bytes();
    verifier->clear_rate_iops();
  }
  *spec = std::move(expanded);
  return absl::OkStatus();
}

// A compare target: every job runs in `target`, over the userspace NFS client when it is a URL.
absl::Status PlaceInTarget(const std::string& target, ResolvedRun* run) {
  if (absl::Status usable = CheckTarget(target); !usable.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("target ", target, ": ", usable.message()));
  }
  const bool nfs = IsNfsUrl(target);
  for (v1::JobSpec& job : *run->spec.mutable_jobs()) {
    job.set_directory(target);
    if (nfs) {
      if (job.ioengine() != "nfs") {
        run->notes.push_back(absl::StrCat("job '", job.name(), "' runs with ioengine=nfs (libnfs, no mount) instead of ", job.ioengine()));
      }
      job.set_ioengine("nfs");
      job.set_nfs_url(target);
    } else if (job.ioengine() == "nfs") {
      return absl::InvalidArgumentError(absl::StrCat("job '", job.name(), "' uses ioengine=nfs, which cannot run on the local path ", target));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTarget(const std::string& target) {
  if (IsNfsUrl(target)) return ParseNfsUrl(target).status();
  if (target.empty() || target[0] != '/') return absl::InvalidArgumentError("the path must be absolute or an nfs:// URL");
  return absl::OkStatus();
}

absl::StatusOr<ResolvedRun> ResolveRunSpec(v1::RunSpec spec, const RunPlacement& placement) {
  ResolvedRun run{.spec = std::move(spec), .notes = {}};
  if (!placement.target.empty()) {
    if (absl::Status placed = PlaceInTarget(placement.target, &run); !placed.ok()) return placed;
  } else if (!placement.default_directory.empty()) {
    if (placement.default_directory[0] != '/') {
      return absl::InvalidArgumentError(absl::StrCat("--directory ", placement.default_directory, " must be an absolute path"));
    }
    for (v1::JobSpec& job : *run.spec.mutable_jobs()) {
      if (NamesNoPlaceForFiles(job)) job.set_directory(placement.default_directory);
    }
  }
  std::string temporary;  // made on first need
  auto temporary_directory = [&]() -> absl::StatusOr<std::string> {
    if (temporary.empty()) {
      absl::StatusOr<std::string> made = placement.temporary_directory();
      if (!made.ok()) return made.status();
      temporary = *made;
    }
    return temporary;
  };
  const bool local_temporary = placement.local_workers && placement.temporary_directory;
  for (v1::JobSpec& job : *run.spec.mutable_jobs()) {
    if (local_temporary && NamesNoPlaceForFiles(job)) {
      absl::StatusOr<std::string> directory = temporary_directory();
      if (!directory.ok()) return directory.status();
      job.set_directory(*directory);
    } else if (NeedsDirectory(job)) {
      return absl::InvalidArgumentError(absl::StrCat("job '", job.name(), "': no directory= (where the job's files go); with --hosts ",
                                                     "every job needs directory= (a path on the workers)"));
    }
    // fio takes a relative directory= beneath its working directory; a cluster has no common
    // one, so iofleet takes it beneath the run's: --directory, or a local run's temporary one.
    std::vector<std::string> directories = JobDirectories(job);
    if (IsNfsUrl(job.directory()) ||
        std::all_of(directories.begin(), directories.end(), [](const std::string& d) { return d.empty() || d[0] == '/'; })) {
      continue;
    }
    std::string base = placement.default_directory;
    if (base.empty() && local_temporary) {
      absl::StatusOr<std::string> directory = temporary_directory();
      if (!directory.ok()) return directory.status();
      base = *directory;
    }
    if (base.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(job.location().file(), ":", job.location().line(), ": job '", job.name(),
                                                     "': directory=", job.directory(), " is relative: give --directory, ",
                                                     "the path on the workers it is taken beneath"));
    }
    for (std::string& d : directories) {
      if (!d.empty() && d[0] != '/') d = absl::StrCat(base == "/" ? "" : base, "/", d);
    }
    job.set_directory(JoinFioList(directories));
  }
  if (absl::Status expanded = AddCrossWorkerVerifyJobs(&run.spec); !expanded.ok()) return expanded;
  if (absl::Status valid = ValidateRunSpec(run.spec); !valid.ok()) return valid;
  return run;
}

}  // namespace iofleet
