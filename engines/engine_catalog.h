// The names and capabilities of the IO engines iofleet has — what the job model validates
// against and what a worker announces — without the engines themselves, so that the parser,
// the controller and the fuzzers link none of liburing, libaio or libnfs. The factories that
// make them live in engine_registry.h (the worker's side), one per catalog entry.
#ifndef IOFLEET_ENGINES_ENGINE_CATALOG_H_
#define IOFLEET_ENGINES_ENGINE_CATALOG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace iofleet {

struct EngineTraits {
  const char* name;
  const char* description;
  bool synchronous;  // completes every request inside Submit()
  bool diskless;     // does no IO to files: nothing to lay out (fio's null)
  bool nfs_urls;     // its files are nfs:// URLs reached by a userspace client (fio's nfs)
  bool atomic_writes;  // can send writes with RWF_ATOMIC (fio's atomic=1)
  bool per_io_priority;  // each IO can carry its own ioprio (fio's cmdprio_*)
};

// Every engine, in the order `--help` and a worker's handshake list them.
const std::vector<EngineTraits>& EngineCatalog();
std::vector<std::string> EngineNames();
// The engine's entry; an unknown name is kInvalidArgument naming the nearest engine.
absl::StatusOr<const EngineTraits*> FindEngine(absl::string_view name);

}  // namespace iofleet

#endif  // IOFLEET_ENGINES_ENGINE_CATALOG_H_
