// A worker's number among the set a launcher started (MPI rank, Slurm task, Kubernetes Indexed
// Job index), from the environment the launcher gives each process. A worker that dials in
// sends it, and the controller makes it worker number `rank`: mpirun -np 64 iofleet-worker ...
// numbers its workers as mpirun numbers its ranks.
#ifndef IOFLEET_COMMON_LAUNCH_RANK_H_
#define IOFLEET_COMMON_LAUNCH_RANK_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace iofleet {

struct LaunchRank {
  uint32_t rank = 0;
  std::string source;  // the variable it came from, e.g. "SLURM_PROCID"
};

// The variables read, first found wins: iofleet's own (iofleet run --ssh sets it), OpenMPI's
// (mpirun), PMIx's (srun --mpi=pmix, mpirun), Slurm's task number (srun), a Kubernetes Indexed
// Job's completion index.
inline constexpr const char* kLaunchRankVariables[] = {"IOFLEET_LAUNCH_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID",
                                                       "JOB_COMPLETION_INDEX"};

// nullopt when none is set; kInvalidArgument naming the variable when its value is not a
// number from 0 to 1,000,000. `getenv` is std::getenv unless a test gives another.
absl::StatusOr<std::optional<LaunchRank>> LaunchRankFromEnvironment(
    const std::function<const char*(const char*)>& getenv = nullptr);

}  // namespace iofleet

#endif  // IOFLEET_COMMON_LAUNCH_RANK_H_
