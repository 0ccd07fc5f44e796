#include "worker/file_layout.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errno_status.h"
#include "common/nfs_url.h"
#include "engines/engine_catalog.h"
#include "job/block_sizes.h"
#include "job/file_names.h"
#include "job/mdtest_tree.h"
#include "job/rw_mode.h"
#include "worker/file_system.h"
#include "worker/host_facts.h"

namespace iofleet {
namespace {

bool JobReads(const v1::JobSpec& job) { return NeedsExistingData(job.rw()); }

// A file of a job to lay out, and how that went.
struct PendingFile {
  std::string path;
  FileSystem* fs = nullptr;
  uint64_t size = 0;
  absl::StatusOr<bool> changed = false;
};

// create_serialize=0: files laid out at once, at most this many at a time.
constexpr size_t kParallelLayouts = 64;

}  // namespace

absl::StatusOr<RunLayout> LayOutRunFiles(const v1::PrepareRequest& request, const PathPolicy& policy,
                                         const std::function<bool()>& cancelled) {
  RunLayout layout;
  std::set<std::string> seen;
  for (const v1::JobSpec& requested : request.spec().jobs()) {
    v1::JobSpec& job = layout.jobs.emplace_back(requested);
    auto in_job = [&](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat("job '", job.name(), "': ", s.message()));
    };
    auto& job_paths = layout.paths.emplace_back();
    if (job.has_metadata()) {
      // --savePerOpDataCSV: the tasks write their files beside the prefix's name, in a directory
      // of this host that exists beneath the roots (resolved first, before a test directory is
      // made; each task opens its files beneath the root at the phase, so a directory swapped
      // since for a way out is refused).
      if (std::string* prefix = job.mutable_metadata()->mutable_per_op_csv(); !prefix->empty()) {
        const std::string directory = PerOpCsvDirectory(*prefix);
        auto resolved = policy.ResolveExistingDirectory(directory);  // (refuses "", not absolute)
        if (!resolved.ok()) {
          return in_job(absl::Status(resolved.status().code(), absl::StrCat("--savePerOpDataCSV ", *prefix, ": ", resolved.status().message())));
        }
        *prefix = absl::StrCat(*resolved == "/" ? "" : *resolved, prefix->substr(prefix->rfind('/')));
      }
      // -a DUMMY (mdtest's DUMMY backend): no call is made on the test directories, nothing is
      // made; its file system is the one mdtest's DUMMY statfs describes (one of everything).
      if (job.metadata().has_dummy()) {
        for (const std::string& dir : job.metadata().test_dirs()) {
          v1::TargetFacts* target = layout.response.mutable_facts()->add_targets();
          target->set_path(dir);
          target->set_fs_type("none (-a DUMMY)");
          target->set_fs_bytes(1);
          target->set_fs_free_bytes(1);
          target->set_fs_inodes(1);
          target->set_fs_free_inodes(1);
        }
        job_paths.assign(job.numjobs(), {});
        continue;
      }
      // A metadata phase works in its test directories, which must lie under the roots.
      // The tasks work on the resolved directories, so every symlink on the way is behind them
      // and any met later is refused (a tree changed under the run).
      for (std::string& dir : *job.mutable_metadata()->mutable_test_dirs()) {
        bool made = false;
        auto resolved = policy.ResolveTestDirectory(dir, &made);
        if (!resolved.ok()) return in_job(resolved.status());
        if (made) layout.response.add_made_test_dirs(dir);
        *layout.response.mutable_facts()->add_targets() = DescribeTarget(*resolved);
        if (!IsNfsUrl(dir)) dir = *resolved;
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
    std::map<std::string, std::unique_ptr<FileSystem>> file_systems;  // by resolved directory
    // fio's directory=a:b spreads generated names over the directories by thread; named files
    // (filename=) live in the first.
    const std::vector<std::string> directories = JobDirectories(job);
    auto path_of = [&](const std::string& name, uint32_t jobnum = 0) -> absl::StatusOr<std::string> {
      std::string directory = directories.empty() ? "" : directories[jobnum % directories.size()], base = name;
      if (const size_t slash = name.rfind('/'); slash != std::string::npos) {
        directory = name.substr(0, std::max<size_t>(slash, 1));  // "/f" lives in "/"
        base = name.substr(slash + 1);
      }
      auto it = resolved_directories.find(directory);
      if (it == resolved_directories.end()) {
        auto resolved = policy.ResolveDirectory(directory);
        if (!resolved.ok()) return resolved.status();
        it = resolved_directories.emplace(directory, *resolved).first;
        auto fs = OpenFileSystem({*resolved});
        if (!fs.ok()) return fs.status();
        file_systems[*resolved] = std::move(*fs);
        bool known = false;
        for (const v1::TargetFacts& t : layout.response.facts().targets()) known |= t.path() == *resolved;
        if (!known) *layout.response.mutable_facts()->add_targets() = DescribeTarget(*resolved);
      }
      if (auto url = ParseNfsUrl(it->second); url.ok()) return url->Child(base).ToString();
      return absl::StrCat(it->second == "/" ? "" : it->second, "/", base);
    };
    // The file system of a path path_of() made.
    auto fs_of = [&](const std::string& path) -> FileSystem& {
      for (auto& [dir, fs] : file_systems) {
        if (absl::StartsWith(path, dir == "/" ? "/" : dir + "/")) return *fs;
        if (auto url = ParseNfsUrl(dir); url.ok() && absl::StartsWith(path, url->Location() + "/")) return *fs;
      }
      return *file_systems.begin()->second;
    };
    const std::vector<std::string> shared_names = JobFileNames(job);
    if (job.size_percent() > 0) {
      // fio's size=N%: a share of each existing file (the smallest, so every file has it).
      uint64_t smallest = UINT64_MAX;
      for (const std::string& name : shared_names) {
        auto path = path_of(name);
        if (!path.ok()) return in_job(path.status());
        uint64_t file_size = 0;
        if (const int error = fs_of(*path).Stat(*path, &file_size); error != 0) {
          return in_job(ErrnoStatus(error, absl::StrCat("size=", job.size_percent(), "% of ", *path)));
        }
        smallest = std::min(smallest, file_size);
      }
      const uint64_t unit = std::max<uint64_t>(1, OffsetUnit(job));
      // offset_increment: the last thread's start must leave it its share too.
      const uint64_t start = job.offset() + job.offset_increment() * (job.numjobs() - 1);
      const uint64_t share = smallest > start ? (smallest - start) * job.size_percent() / 100 / unit * unit : 0;
      if (share < MaxBlockSize(job)) {
        return in_job(absl::InvalidArgumentError(absl::StrCat("size=", job.size_percent(), "% of ", smallest, " bytes leaves less than one block")));
      }
      job.set_filesize(share);
      job.set_size(share * std::max(1u, job.nrfiles()));
    }
    if (job.fill_device() && job.size() == 0) {
      // fio's fill_device: write until the file system is full. Every file may grow to the file
      // system's size, so ENOSPC is what ends the writes, as in fio (root fills the blocks
      // reserved for it too); a block device ends at its size.
      std::string first = shared_names.empty() ? "" : shared_names[0];
      if (first.empty()) {
        auto generated = GeneratedFileName(job.filename_format(), GeneratedFile{.job_name = job.name(), .worker = request.worker_index()});
        if (!generated.ok()) return in_job(generated.status());
        first = *generated;
      }
      auto path = path_of(first);
      if (!path.ok()) return in_job(path.status());
      auto space = fs_of(*path).WritableSpace(*path);
      if (!space.ok()) return in_job(space.status());
      const uint64_t unit = std::max<uint64_t>(1, MaxBlockSize(job));
      const uint64_t share = (*space - std::min(*space, job.offset())) / unit * unit;
      if (share < unit) {
        return in_job(absl::ResourceExhaustedError(absl::StrCat("fill_device: where ", *path, " lives, ", *space, " bytes are less than one block past offset=")));
      }
      job.set_filesize(share);
      job.set_size(share * nrfiles);
    }
    // offset_increment: thread N starts N increments further in (its own file, or the shared one).
    const uint64_t file_size = job.offset() + job.offset_increment() * (job.numjobs() - 1) + FileSize(job);
    auto file_size_of = [&](uint32_t jobnum) {
      return shared_names.empty() ? job.offset() + job.offset_increment() * jobnum + FileSize(job) : file_size;
    };
    // Write jobs get data only when asked to overwrite; reads always need it.
    const bool fill = JobReads(job) || job.overwrite();
    // verify_across_workers: read what the next worker wrote, as it left it (no layout here;
    // that worker's job created the files in an earlier phase).
    const bool peer_files = job.verify_across_workers() && shared_names.empty();
    const uint32_t file_worker =
        peer_files ? (request.worker_index() + 1) % std::max(1u, request.worker_count()) : request.worker_index();
    const std::string& file_job = peer_files && !job.files_of_job().empty() ? job.files_of_job() : job.name();
    std::vector<PendingFile> pending;
    for (uint32_t jobnum = 0; jobnum < job.numjobs(); ++jobnum) {
      auto& thread_paths = job_paths.emplace_back();
      for (uint32_t filenum = 0; filenum < nrfiles; ++filenum) {
        std::string name;
        if (shared_names.empty()) {
          auto generated = GeneratedFileName(job.filename_format(), GeneratedFile{.job_name = file_job, .worker = file_worker,
                                                                                  .jobnum = jobnum, .filenum = filenum});
          if (!generated.ok()) return in_job(generated.status());
          name = *generated;
        } else {
          name = shared_names[filenum % shared_names.size()];
        }
        auto path = path_of(name, shared_names.empty() ? jobnum : 0);
        if (!path.ok()) return in_job(path.status());
        thread_paths.push_back(*path);
        if (!seen.insert(*path).second) continue;
        if (job.no_file_create()) {
          if (const int error = fs_of(*path).Stat(*path); error != 0) {
            return in_job(ErrnoStatus(error, absl::StrCat("allow_file_create=0, and ", *path, " cannot be used")));
          }
        }
        if (job.create_on_open()) continue;
        if (peer_files) {
          if (const int error = fs_of(*path).Stat(*path); error != 0) {
            return in_job(ErrnoStatus(error, absl::StrCat("verify_across_workers: ", *path, " (written by worker ",
                                                                   file_worker, ")")));
          }
          continue;
        }
        // fio's fill_device: the job's writes fill the file system; nothing is laid out first.
        if (job.fill_device()) continue;
        pending.push_back(PendingFile{.path = *path, .fs = &fs_of(*path), .size = file_size_of(jobnum)});
      }
    }
    // fio's create_serialize=0: the job's files are laid out at once, one thread each (at most
    // kParallelLayouts at a time); by default one after another, as fio.
    auto lay_out = [&](PendingFile& f) {
      f.changed = f.fs->EnsureFile(f.path, f.size, fill, job.direct(), cancelled, job.fallocate());
      if (f.changed.ok() && job.invalidate()) {
        if (absl::Status dropped = f.fs->DropCachedPages(f.path); !dropped.ok()) f.changed = dropped;
      }
    };
    if (job.create_in_parallel() && pending.size() > 1) {
      for (size_t first = 0; first < pending.size(); first += kParallelLayouts) {
        std::vector<std::thread> threads;
        for (size_t i = first; i < std::min(pending.size(), first + kParallelLayouts); ++i) threads.emplace_back(lay_out, std::ref(pending[i]));
        for (std::thread& t : threads) t.join();
      }
    } else {
      for (PendingFile& f : pending) {
        lay_out(f);
        if (!f.changed.ok()) break;
      }
    }
    for (const PendingFile& f : pending) {
      if (!f.changed.ok()) return in_job(f.changed.status());
      v1::PreparedFile* file = layout.response.add_files();
      file->set_path(f.path);
      file->set_size(f.size);
      file->set_laid_out(*f.changed);
    }
  }
  return layout;
}

}  // namespace iofleet
