// mdtest's test as iofleet runs it: the phases of every iteration in mdtest's order, each a
// job of one spec (its own stonewall phase), and after each phase that changes the tree a
// wear-out job that finishes what a stonewall (-W) cut short, untimed. Pure: no I/O, so the
// plan is unit-tested (mdtest_plan_test.cc); mdtest_command.cc runs it.
#ifndef IOFLEET_CONTROLLER_MDTEST_PLAN_H_
#define IOFLEET_CONTROLLER_MDTEST_PLAN_H_

#include <cstdint>
#include <vector>

#include "controller/mdtest_options.h"
#include "job/mdtest_tree.h"  // OperationName
#include "proto/job.pb.h"

namespace iofleet {

struct PlannedPhase {
  v1::MetadataPhase::Op op;
  uint32_t iteration;
  bool wear_out;  // runs only when the stonewall cut the phase before it short
  uint32_t tasks;  // the tasks that run it (o.phase.task_count())
};

struct MdtestPlan {
  std::vector<PlannedPhase> phases;
  v1::RunSpec spec;  // one job per planned phase, in the same order
};

// mdtest's phase order for one iteration.
std::vector<v1::MetadataPhase::Op> PhasesOf(const MdtestOptions& o);
MdtestPlan PlanMdtest(const MdtestOptions& o);
// After an interrupted or failed iteration: the removal of what it made, in order (files,
// directories, the tree), each a spec of one job that removes whatever of its kind exists.
std::vector<v1::RunSpec> PlanCleanup(const MdtestOptions& o, uint32_t iteration);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_MDTEST_PLAN_H_
