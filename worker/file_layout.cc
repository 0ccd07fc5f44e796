#include "worker/file_layout.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "engines/engine_registry.h"
#include "job/block_sizes.h"
#include "worker/host_facts.h"

namespace iofleet {
namespace {

bool JobReads(const v1::JobSpec& job) {
  return job.rw() == v1::SEQ_READ || job.rw() == v1::RAND_READ || job.rw() == v1::SEQ_MIXED ||
         job.rw() == v1::RAND_MIXED;
}

// Brings `path` to at least `size` bytes: written with data when the job reads it (reads of
// holes would measure nothing), allocated otherwise. Returns whether anything was done.
absl::StatusOr<bool> EnsureFile(const std::string& path, uint64_t size, bool fill, bool direct) {
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && S_ISBLK(existing.st_mode)) {
    // A block device (filename=/dev/...): never written by layout; it must be big enough.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
    if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
    uint64_t device_size = 0;
    const int rc = ::ioctl(fd, BLKGETSIZE64, &device_size);
    ::close(fd);
    if (rc != 0) return absl::ErrnoToStatus(errno, absl::StrCat("size of ", path));
    if (device_size < size) {
      return absl::OutOfRangeError(absl::StrCat(path, " holds ", device_size, " bytes, less than the ", size, " the job needs"));
    }
    return false;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("create ", path));
  struct stat st;
  absl::Status status;
  bool changed = false;
  if (::fstat(fd, &st) != 0) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("stat ", path));
  } else if (static_cast<uint64_t>(st.st_size) < size) {
    changed = true;
    if (fill) {
      std::vector<char> chunk(1 << 20);
      std::mt19937_64 rng(size);
      for (size_t i = 0; i + 8 <= chunk.size(); i += 8) {
        const uint64_t word = rng();
        std::memcpy(chunk.data() + i, &word, 8);
      }
      for (uint64_t offset = st.st_size; offset < size && status.ok();) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - offset));
        const ssize_t w = ::pwrite(fd, chunk.data(), n, static_cast<off_t>(offset));
        if (w <= 0) status = absl::ErrnoToStatus(w < 0 ? errno : ENOSPC, absl::StrCat("lay out ", path));
        else offset += static_cast<uint64_t>(w);
      }
    } else {
      const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
      if (rc != 0 && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        status = absl::ErrnoToStatus(errno, absl::StrCat("allocate ", path));
      }
    }
  }
  ::close(fd);
  RETURN_IF_ERROR(status);
  if (direct) {
    // Fail at prepare, not mid-run, where the filesystem refuses O_DIRECT (tmpfs does).
    const int probe = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (probe < 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("open ", path, " with O_DIRECT (direct=1): the filesystem refuses it"));
    }
    ::close(probe);
  }
  return changed;
}

// fio's invalidate=1: write back and drop the file's cached pages so that the run starts cold.
absl::Status DropCachedPages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  ::fdatasync(fd);
  const int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (rc != 0) return absl::ErrnoToStatus(rc, absl::StrCat("drop cached pages of ", path, " (invalidate=1)"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunLayout> LayOutRunFiles(const v1::PrepareRequest& request, const PathPolicy& policy) {
  RunLayout layout;
  std::set<std::string> seen;
  for (const v1::JobSpec& requested : request.spec().jobs()) {
    v1::JobSpec& job = layout.jobs.emplace_back(requested);
    auto in_job = [&](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat("job '", job.name(), "': ", s.message()));
    };
    auto& job_paths = layout.paths.emplace_back();
    if (job.has_metadata()) {
      // A metadata phase works in its test directories, which must lie under the roots.
      for (const std::string& dir : job.metadata().test_dirs()) {
        auto resolved = policy.ResolveDirectory(dir);
        if (!resolved.ok()) return in_job(resolved.status());
        *layout.response.mutable_facts()->add_targets() = DescribeTarget(*resolved);
      }
      job_paths.assign(job.numjobs(), {});
      continue;
    }
    auto engine = FindEngine(job.ioengine());
    if (!engine.ok()) return engine.status();
    const uint32_t nrfiles = std::max(1u, job.nrfiles());
    if ((*engine)->diskless) {
      // Nothing is opened or written: the threads only need names.
      job_paths.assign(job.numjobs(), std::vector<std::string>(nrfiles, absl::StrCat("(", job.ioengine(), ")")));
      continue;
    }
    // A path for a file name: in the job's directory, or its own (absolute) one.
    std::map<std::string, std::string> resolved_directories;
    auto path_of = [&](const std::string& name) -> absl::StatusOr<std::string> {
      std::string directory = job.directory(), base = name;
      if (const size_t slash = name.rfind('/'); slash != std::string::npos) {
        directory = name.substr(0, std::max<size_t>(slash, 1));  // "/f" lives in "/"
        base = name.substr(slash + 1);
      }
      auto it = resolved_directories.find(directory);
      if (it == resolved_directories.end()) {
        auto resolved = policy.ResolveDirectory(directory);
        if (!resolved.ok()) return resolved.status();
        it = resolved_directories.emplace(directory, *resolved).first;
        bool known = false;
        for (const v1::TargetFacts& t : layout.response.facts().targets()) known |= t.path() == *resolved;
        if (!known) *layout.response.mutable_facts()->add_targets() = DescribeTarget(*resolved);
      }
      return absl::StrCat(it->second == "/" ? "" : it->second, "/", base);
    };
    const std::vector<std::string> shared_names =
        job.filename().empty() ? std::vector<std::string>{} : absl::StrSplit(job.filename(), ':');
    if (job.size_percent() > 0) {
      // fio's size=N%: a share of each existing file (the smallest, so every file has it).
      uint64_t smallest = UINT64_MAX;
      for (const std::string& name : shared_names) {
        auto path = path_of(name);
        if (!path.ok()) return in_job(path.status());
        struct stat st;
        if (::stat(path->c_str(), &st) != 0) {
          return in_job(absl::ErrnoToStatus(errno, absl::StrCat("size=", job.size_percent(), "% of ", *path)));
        }
        smallest = std::min<uint64_t>(smallest, static_cast<uint64_t>(st.st_size));
      }
      const uint64_t unit = std::max<uint64_t>(1, OffsetUnit(job));
      const uint64_t share = smallest > job.offset() ? (smallest - job.offset()) * job.size_percent() / 100 / unit * unit : 0;
      if (share < MaxBlockSize(job)) {
        return in_job(absl::InvalidArgumentError(absl::StrCat("size=", job.size_percent(), "% of ", smallest, " bytes leaves less than one block")));
      }
      job.set_filesize(share);
      job.set_size(share * std::max(1u, job.nrfiles()));
    }
    const uint64_t file_size = job.offset() + FileSize(job);
    // Write jobs get data only when asked to overwrite; reads always need it.
    const bool fill = JobReads(job) || job.overwrite();
    // verify_across_workers: read what the next worker wrote, as it left it (no layout here;
    // that worker's job created the files in an earlier phase).
    const bool peer_files = job.verify_across_workers() && shared_names.empty();
    const uint32_t file_worker =
        peer_files ? (request.worker_index() + 1) % std::max(1u, request.worker_count()) : request.worker_index();
    const std::string& file_job = peer_files && !job.files_of_job().empty() ? job.files_of_job() : job.name();
    for (uint32_t jobnum = 0; jobnum < job.numjobs(); ++jobnum) {
      auto& thread_paths = job_paths.emplace_back();
      for (uint32_t filenum = 0; filenum < nrfiles; ++filenum) {
        const std::string name = shared_names.empty()
                                     ? absl::StrCat(file_job, ".w", file_worker, ".", jobnum, ".", filenum)
                                     : shared_names[filenum % shared_names.size()];
        auto path = path_of(name);
        if (!path.ok()) return in_job(path.status());
        thread_paths.push_back(*path);
        if (!seen.insert(*path).second || job.create_on_open()) continue;
        if (peer_files) {
          struct stat st;
          if (::stat(path->c_str(), &st) != 0) {
            return in_job(absl::ErrnoToStatus(errno, absl::StrCat("verify_across_workers: ", *path, " (written by worker ",
                                                                   file_worker, ")")));
          }
          continue;
        }
        auto changed = EnsureFile(*path, file_size, fill, job.direct());
        if (!changed.ok()) return in_job(changed.status());
        if (job.invalidate()) {
          if (absl::Status dropped = DropCachedPages(*path); !dropped.ok()) return in_job(dropped);
        }
        v1::PreparedFile* file = layout.response.add_files();
        file->set_path(*path);
        file->set_size(file_size);
        file->set_laid_out(*changed);
      }
    }
  }
  return layout;
}

}  // namespace iofleet
