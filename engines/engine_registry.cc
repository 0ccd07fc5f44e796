#include "engines/engine_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/nearest_name.h"

namespace iofleet {

const std::vector<EngineInfo>& RegisteredEngines() {
  static const std::vector<EngineInfo> kEngines = {
      {"sync", "lseek + read/write", true, false, false, &MakeSyncEngine},
      {"psync", "pread/pwrite", true, false, false, &MakePsyncEngine},
      {"pvsync2", "preadv2/pwritev2, RWF_HIPRI with hipri=1", true, false, false, &MakePvsync2Engine},
      {"mmap", "memcpy to/from a shared mapping of the file", true, false, false, &MakeMmapEngine},
      {"libaio", "Linux native AIO (io_submit/io_getevents)", false, false, false, &MakeLibaioEngine},
      {"io_uring", "io_uring via liburing", false, false, false, &MakeIoUringEngine},
      {"nfs", "userspace NFSv3 client (libnfs), asynchronous; nfs_url=nfs://server/export", false, false, true, &MakeNfsEngine},
      {"null", "no IO at all: the harness's own ceiling", false, true, false, &MakeNullEngine},
  };
  return kEngines;
}

std::vector<std::string> EngineNames() {
  std::vector<std::string> names;
  for (const EngineInfo& e : RegisteredEngines()) names.push_back(e.name);
  return names;
}

absl::StatusOr<const EngineInfo*> FindEngine(absl::string_view name) {
  for (const EngineInfo& e : RegisteredEngines()) {
    if (name == e.name) return &e;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ioengine '", name, "'",
                                                 DidYouMean(name, EngineNames()), "; available: ",
                                                 absl::StrJoin(EngineNames(), ", ")));
}

absl::StatusOr<std::unique_ptr<IoEngine>> CreateEngine(absl::string_view name,
                                                       const EngineOptions& options) {
  auto info = FindEngine(name);
  if (!info.ok()) return info.status();
  if (options.iodepth == 0) return absl::InvalidArgumentError("iodepth must be at least 1");
  return (*info)->make(options);
}

}  // namespace iofleet
