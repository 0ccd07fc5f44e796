#include "controller/mdtest_plan.h"

#include "absl/strings/str_cat.h"
#include "job/mdtest_tree.h"

namespace iofleet {

using Op = v1::MetadataPhase;

// mdtest's phase order for one iteration.
std::vector<Op::Op> PhasesOf(const MdtestOptions& o) {
  std::vector<Op::Op> ops;
  if (o.create) ops.push_back(Op::TREE_CREATE);
  if (o.dirs) {
    if (o.create) ops.push_back(Op::DIR_CREATE);
    if (o.readdir && !o.files) ops.push_back(Op::READDIR);
    if (o.stat) ops.push_back(Op::DIR_STAT);
    // mdtest renames with -U or when no phase is named, and only when a task has two items or
    // more (a rotation of its names needs two; in each copy of the tree with directory loops).
    if (o.rename && MdtestTree(o.phase).RenameItems() > 1) ops.push_back(Op::DIR_RENAME);
    if (o.remove) ops.push_back(Op::DIR_REMOVE);
  }
  if (o.files) {
    if (o.create) ops.push_back(Op::FILE_CREATE);
    if (o.readdir) ops.push_back(Op::READDIR);
    if (o.stat) ops.push_back(Op::FILE_STAT);
    if (o.read) ops.push_back(Op::FILE_READ);
    if (o.remove) ops.push_back(Op::FILE_REMOVE);
  }
  if (o.remove) ops.push_back(Op::TREE_REMOVE);
  return ops;
}

// -W stops directory and file creation, as mdtest 4 does (--stonewall-every-phase: every phase).
// A stopped phase that changes the tree is followed by a wear-out job, run only when the stonewall
// cut it short: after creation every task goes on to the largest count (mdtest's "Continue
// stonewall"), so later phases find every item of every task; renames, removals and the tree
// are finished, so nothing is left half-renamed or behind.
MdtestPlan PlanMdtest(const MdtestOptions& o) {
  MdtestPlan plan;
  v1::RunSpec& spec = plan.spec;
  spec.set_source("mdtest");
  for (uint32_t iteration = 0; iteration < o.iterations; ++iteration) {
    for (Op::Op op : PhasesOf(o)) {
      const bool looks = op == Op::DIR_STAT || op == Op::FILE_STAT || op == Op::FILE_READ || op == Op::READDIR;
      const bool stonewalled = o.phase.stonewall_ns() > 0 && (o.stonewall_every_phase || op == Op::DIR_CREATE || op == Op::FILE_CREATE);
      for (bool wear_out : {false, true}) {
        if (wear_out && (looks || !stonewalled)) break;
        v1::JobSpec* job = spec.add_jobs();
        job->set_name(wear_out ? absl::StrCat(OperationName(op), " (wear-out)") : OperationName(op));
        job->set_numjobs(o.tasks_per_worker);
        job->set_stonewall(true);
        *job->mutable_metadata() = o.phase;
        job->mutable_metadata()->set_op(op);
        job->mutable_metadata()->set_iteration(iteration);
        if (wear_out || !stonewalled) job->mutable_metadata()->set_stonewall_ns(0);
        plan.phases.push_back({op, iteration, wear_out, o.phase.task_count()});
      }
    }
  }
  return plan;
}

std::vector<v1::RunSpec> PlanCleanup(const MdtestOptions& o, uint32_t iteration) {
  std::vector<v1::RunSpec> specs;
  for (Op::Op cleanup : {Op::FILE_REMOVE, Op::DIR_REMOVE, Op::TREE_REMOVE}) {
    if ((cleanup == Op::FILE_REMOVE && !o.files) || (cleanup == Op::DIR_REMOVE && !o.dirs)) continue;
    v1::RunSpec& spec = specs.emplace_back();
    spec.set_source("mdtest");
    v1::JobSpec* job = spec.add_jobs();
    job->set_name(absl::StrCat("cleanup: ", OperationName(cleanup)));
    job->set_numjobs(o.tasks_per_worker);
    *job->mutable_metadata() = o.phase;
    job->mutable_metadata()->set_op(cleanup);
    job->mutable_metadata()->set_iteration(iteration);
    job->mutable_metadata()->set_cleanup(true);
    job->mutable_metadata()->set_stonewall_ns(0);
  }
  return specs;
}

}  // namespace iofleet
