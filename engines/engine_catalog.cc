#include "engines/engine_catalog.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/nearest_name.h"

namespace iofleet {

const std::vector<EngineTraits>& EngineCatalog() {
  static const std::vector<EngineTraits> kEngines = {
      {"sync", "lseek + read/write", true, false, false, false, false},
      {"psync", "pread/pwrite", true, false, false, false, false},
      {"pvsync2", "preadv2/pwritev2, RWF_HIPRI with hipri=1, RWF_ATOMIC with atomic=1", true, false, false, true, false},
      {"mmap", "memcpy to/from a shared mapping of the file", true, false, false, false, false},
      {"libaio", "Linux native AIO (io_submit/io_getevents)", false, false, false, true, true},
      {"io_uring", "io_uring via liburing", false, false, false, true, true},
      {"nfs", "userspace NFSv3 client (libnfs), asynchronous; nfs_url=nfs://server/export", false, false, true, false, false},
      {"null", "no IO at all: the harness's own ceiling", false, true, false, false, false},
  };
  return kEngines;
}

std::vector<std::string> EngineNames() {
  std::vector<std::string> names;
  for (const EngineTraits& e : EngineCatalog()) names.push_back(e.name);
  return names;
}

absl::StatusOr<const EngineTraits*> FindEngine(absl::string_view name) {
  for (const EngineTraits& e : EngineCatalog()) {
    if (name == e.name) return &e;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ioengine '", name, "'", DidYouMean(name, EngineNames()), "; available: ",
                                                 absl::StrJoin(EngineNames(), ", ")));
}

}  // namespace iofleet
