// The factories of the IO engines (engine_registry.cc), one per entry of the engine catalog
// (engine_catalog.h, which names them and says what they can do): greppable and explicit.
#ifndef IOFLEET_ENGINES_ENGINE_REGISTRY_H_
#define IOFLEET_ENGINES_ENGINE_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine_catalog.h"
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

// The engine the catalog names `name`, made with `options`; an unknown name is
// kInvalidArgument naming the nearest engine.
absl::StatusOr<std::unique_ptr<IoEngine>> CreateEngine(absl::string_view name,
                                                       const EngineOptions& options);

}  // namespace iofleet

#endif  // IOFLEET_ENGINES_ENGINE_REGISTRY_H_
