#include "worker/dummy_file_system.h"

#include <time.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace iofleet {

DummyFileSystem::DummyFileSystem(const v1::MetadataPhase::DummyBackend& backend, uint32_t rank, bool creates_open)
    : backend_(backend), delays_(!backend.delay_only_rank0() || rank == 0), creates_open_(creates_open) {}

void DummyFileSystem::Delay(uint64_t us) const {
  if (!delays_ || us == 0) return;
  // As aiori-DUMMY.c: one nanosleep of the whole delay (a signal cuts it short there too).
  timespec wait{.tv_sec = static_cast<time_t>(us / 1'000'000), .tv_nsec = static_cast<long>(us % 1'000'000) * 1000};
  ::nanosleep(&wait, nullptr);
}

int DummyFileSystem::Stat(const std::string&, uint64_t* size) {
  if (size != nullptr) *size = 0;
  return 0;
}

int DummyFileSystem::CreateFile(const std::string&, absl::Span<const char> data, const CreateOptions& how) {
  // mdtest: create (or -c's open, undelayed), the data's write if -w (and its read-back with
  // --verify-write, which reads nothing), then close.
  if (!creates_open_) Delay(backend_.delay_create_us());
  if (!data.empty()) Delay(backend_.delay_xfer_us());
  if (!data.empty() && !how.read_back.empty()) Delay(backend_.delay_xfer_us());
  Delay(backend_.delay_close_us());
  return 0;
}

int DummyFileSystem::ReadFile(const std::string&, absl::Span<char> buffer, const ReadOptions&) {
  // mdtest: open (undelayed), the data's read if -e, then close.
  if (!buffer.empty()) Delay(backend_.delay_xfer_us());
  Delay(backend_.delay_close_us());
  return 0;
}

void DummyFileSystem::Sync() { Delay(backend_.delay_sync_us()); }

absl::StatusOr<bool> DummyFileSystem::EnsureFile(const std::string& path, uint64_t, bool, bool, const std::function<bool()>&,
                                                 v1::JobSpec::Fallocate) {
  return absl::UnimplementedError(absl::StrCat(path, ": mdtest's DUMMY backend lays out no files"));
}

absl::StatusOr<uint64_t> DummyFileSystem::WritableSpace(const std::string& path) {
  return absl::UnimplementedError(absl::StrCat(path, ": mdtest's DUMMY backend has no file system"));
}

absl::Status DummyFileSystem::DropCachedPages(const std::string& path) {
  return absl::UnimplementedError(absl::StrCat(path, ": mdtest's DUMMY backend caches nothing"));
}

}  // namespace iofleet
