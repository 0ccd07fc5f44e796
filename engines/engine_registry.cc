#include "engines/engine_registry.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

struct Factory {
  const char* name;
  EngineFactory make;
};

// One factory per catalog entry (engine_conformance_test makes every engine the catalog names).
constexpr Factory kFactories[] = {
    {"sync", &MakeSyncEngine},     {"psync", &MakePsyncEngine},       {"pvsync2", &MakePvsync2Engine}, {"mmap", &MakeMmapEngine},
    {"libaio", &MakeLibaioEngine}, {"io_uring", &MakeIoUringEngine}, {"nfs", &MakeNfsEngine},         {"null", &MakeNullEngine},
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> CreateEngine(absl::string_view name, const EngineOptions& options) {
  auto traits = FindEngine(name);
  if (!traits.ok()) return traits.status();
  if (options.iodepth == 0) return absl::InvalidArgumentError("iodepth must be at least 1");
  for (const Factory& f : kFactories) {
    if (std::strcmp(f.name, (*traits)->name) == 0) return f.make(options);
  }
  return absl::InternalError(absl::StrCat("engine '", name, "' is in the catalog but has no factory"));
}

}  // namespace iofleet
