// mdtest's DUMMY backend (-a DUMMY) as a FileSystem: no system call on any path. Every
// operation succeeds at once, after the delays mdtest's --dummy.* options give (aiori-DUMMY.c:
// a file's create, its data's write or read, its close, -Y's sync), so a run measures what the
// tool itself costs per operation.
#ifndef IOFLEET_WORKER_DUMMY_FILE_SYSTEM_H_
#define IOFLEET_WORKER_DUMMY_FILE_SYSTEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/job.pb.h"
#include "worker/file_system.h"

namespace iofleet {

class DummyFileSystem : public FileSystem {
 public:
  // The delays of `backend` apply in task `rank` (in task 0 alone with delay_only_rank0).
  // `creates_open`: -c, whose files mdtest opens rather than creates (no create delay).
  DummyFileSystem(const v1::MetadataPhase::DummyBackend& backend, uint32_t rank, bool creates_open);

  int MakeDirectory(const std::string&) override { return 0; }
  int RemoveDirectory(const std::string&) override { return 0; }
  int Stat(const std::string&, uint64_t* size = nullptr) override;
  int Rename(const std::string&, const std::string&) override { return 0; }
  int Unlink(const std::string&) override { return 0; }
  int CreateFile(const std::string& path, absl::Span<const char> data, const CreateOptions& how) override;
  // Reads nothing: `buffer` is left as it was.
  int ReadFile(const std::string& path, absl::Span<char> buffer, const ReadOptions& how) override;
  // No entries (mdtest's DUMMY lists none).
  int64_t ListDirectory(const std::string&, const std::string&, std::vector<std::string>* = nullptr, size_t = SIZE_MAX) override { return 0; }
  void Sync() override;

  // A DUMMY task lays out no files and has no device: these are refused.
  absl::StatusOr<bool> EnsureFile(const std::string& path, uint64_t, bool, bool, const std::function<bool()>&,
                                  v1::JobSpec::Fallocate) override;
  absl::StatusOr<uint64_t> WritableSpace(const std::string& path) override;
  absl::Status DropCachedPages(const std::string& path) override;

 private:
  void Delay(uint64_t us) const;

  const v1::MetadataPhase::DummyBackend backend_;
  const bool delays_;
  const bool creates_open_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_DUMMY_FILE_SYSTEM_H_
