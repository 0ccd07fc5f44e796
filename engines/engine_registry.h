// The one table of IO engines a worker offers (engine_registry.cc): greppable, explicit, and
// the source of the "engines" list a worker announces in its handshake.
#ifndef IOFLEET_ENGINES_ENGINE_REGISTRY_H_
#define IOFLEET_ENGINES_ENGINE_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/io_engine.h"

namespace iofleet {

using EngineFactory = absl::StatusOr<std::unique_ptr<IoEngine>> (*)(const EngineOptions&);

// Factories, one per engine file.
absl::StatusOr<std::unique_ptr<IoEngine>> MakeSyncEngine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakePsyncEngine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakePvsync2Engine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakeMmapEngine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakeNullEngine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakeLibaioEngine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakeIoUringEngine(const EngineOptions& options);
absl::StatusOr<std::unique_ptr<IoEngine>> MakeNfsEngine(const EngineOptions& options);

struct EngineInfo {
  const char* name;
  const char* description;
  bool synchronous;  // completes every request inside Submit()
  bool diskless;     // does no IO to files: nothing to lay out (fio's null)
  bool nfs_urls;     // its files are nfs:// URLs reached by a userspace client (fio's nfs)
  EngineFactory make;
};

const std::vector<EngineInfo>& RegisteredEngines();
std::vector<std::string> EngineNames();
// The engine's table entry; an unknown name is kInvalidArgument naming the nearest engine.
absl::StatusOr<const EngineInfo*> FindEngine(absl::string_view name);
absl::StatusOr<std::unique_ptr<IoEngine>> CreateEngine(absl::string_view name,
                                                       const EngineOptions& options);

}  // namespace iofleet

#endif  // IOFLEET_ENGINES_ENGINE_REGISTRY_H_
