#include "controller/mdtest_plan.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "job/run_resolution.h"

namespace iofleet {
namespace {

using Op = v1::MetadataPhase;

MdtestOptions Parsed(const std::vector<std::string>& args) {
  MdtestOptions o;
  const absl::Status parsed = ParseMdtestArgs(args, &o);
  EXPECT_TRUE(parsed.ok()) << parsed;
  return o;
}

std::vector<std::string> Names(const MdtestPlan& plan) {
  std::vector<std::string> names;
  for (const auto& job : plan.spec.jobs()) names.push_back(job.name());
  return names;
}

// mdtest's order: tree, directories (create, stat, rename, remove), files, tree removal.
TEST(MdtestPlan, MdtestsPhaseOrder) {
  const MdtestPlan plan = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10"}));
  EXPECT_EQ(Names(plan), (std::vector<std::string>{"Tree creation", "Directory creation", "Directory stat", "Directory rename",
                                                   "Directory removal", "File creation", "File stat", "File read", "File removal",
                                                   "Tree removal"}));
  ASSERT_EQ(plan.phases.size(), static_cast<size_t>(plan.spec.jobs_size()));
  for (const auto& job : plan.spec.jobs()) EXPECT_TRUE(job.stonewall()) << job.name() << ": each phase is its own barrier";
}

// mdtest renames directories with -U, or when no phase is named; never with -C and -r alone, and
// not when a task has a single item.
TEST(MdtestPlan, DirectoryRenameAsMdtestDecidesIt) {
  EXPECT_EQ(Names(PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-D", "-C", "-r"}))),
            (std::vector<std::string>{"Tree creation", "Directory creation", "Directory removal", "Tree removal"}));
  EXPECT_EQ(Names(PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-D", "-C", "-U", "-r"}))),
            (std::vector<std::string>{"Tree creation", "Directory creation", "Directory rename", "Directory removal", "Tree removal"}));
  EXPECT_EQ(Names(PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-U"}))), (std::vector<std::string>{"Directory rename"}));
  EXPECT_EQ(Names(PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "1", "-D"}))),
            (std::vector<std::string>{"Tree creation", "Directory creation", "Directory stat", "Directory removal", "Tree removal"}));
}

// mdtest's directory loops (-n with -I, no -u): renamed only when each copy of the tree has two
// items per task or more; -R, -W, -c and -x are refused with them, and -B as mdtest 4 refuses it.
TEST(MdtestPlan, DirectoryLoopsAndTheirRefusals) {
  EXPECT_EQ(Names(PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-I", "1", "-D"}))),
            (std::vector<std::string>{"Tree creation", "Directory creation", "Directory stat", "Directory removal", "Tree removal"}))
      << "one item per copy: nothing to rotate";
  EXPECT_EQ(Names(PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-I", "2", "-D"}))),
            (std::vector<std::string>{"Tree creation", "Directory creation", "Directory stat", "Directory rename", "Directory removal",
                                      "Tree removal"}));
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{{"-R"}, {"-W", "5"}, {"-c"}, {"-x", "/tmp/s"}}) {
    std::vector<std::string> args = {"-d", "/tmp/x", "-n", "10", "-I", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    MdtestOptions o;
    const absl::Status parsed = ParseMdtestArgs(args, &o);
    EXPECT_FALSE(parsed.ok()) << extra[0];
    EXPECT_NE(parsed.message().find(extra[0] + " is not supported with them"), std::string::npos) << parsed;
  }
  MdtestOptions o;
  const absl::Status no_barriers = ParseMdtestArgs({"-d", "/tmp/x", "-n", "10", "-B", "1"}, &o);
  EXPECT_NE(no_barriers.message().find("mdtest 4 refuses every run with it"), std::string::npos) << no_barriers;
}

// An option iofleet mdtest does not take is refused as mdtest's own (named, with what it does)
// or as one mdtest lacks too; -h is the help, as in mdtest.
TEST(MdtestPlan, RefusedOptionsSayWhetherMdtestHasThem) {
  auto refusal = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"-d", "/tmp/x", "-n", "10"};
    args.insert(args.end(), extra.begin(), extra.end());
    MdtestOptions o;
    return ParseMdtestArgs(args, &o);
  };
  const absl::Status q = refusal({"-q"});
  EXPECT_TRUE(absl::IsInvalidArgument(q)) << q;
  EXPECT_EQ(q.message(), "unknown option -q: neither mdtest nor iofleet mdtest has it");
  const absl::Status g = refusal({"-uFg"});
  EXPECT_NE(g.message().find("mdtest option -g (a global default directory layout for test subdirectories, Lustre's) is not implemented"),
            std::string::npos)
      << g;
  const absl::Status before = refusal({"--run-cmd-before-phase=sync"});
  EXPECT_NE(before.message().find("mdtest option --run-cmd-before-phase (an external command every task runs before each phase; iofleet's workers run no command "
                                 "they are sent)"), std::string::npos) << before;
  const absl::Status typo = refusal({"--showRankStatistic"});
  EXPECT_NE(typo.message().find("unknown option --showRankStatistic (did you mean --showRankStatistics?)"), std::string::npos) << typo;
  EXPECT_TRUE(absl::IsCancelled(refusal({"-h"})));
}

// mdtest 4's POSIX backend and random-order options: --posix.odirect reaches every phase (and
// is refused where libnfs has no O_DIRECT); a --random-seed above 0 turns the random stat order
// on without -R, 0 does not.
TEST(MdtestPlan, OdirectAndRandomSeedAsMdtest4) {
  const MdtestPlan direct = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-w", "4096", "--posix.odirect"}));
  ASSERT_FALSE(direct.spec.jobs().empty());
  for (const auto& job : direct.spec.jobs()) EXPECT_TRUE(job.metadata().direct_io()) << job.name();
  const MdtestPlan locked = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-w", "4096", "--posix.rangelocks"}));
  for (const auto& job : locked.spec.jobs()) EXPECT_TRUE(job.metadata().range_locks()) << job.name();
  MdtestOptions nfs_locks;
  const absl::Status no_locks = ParseMdtestArgs({"-d", "nfs://127.0.0.1/export/md", "-n", "10", "--posix.rangelocks"}, &nfs_locks);
  EXPECT_NE(no_locks.message().find("--posix.rangelocks: iofleet's NFS client (an nfs:// test directory) takes no locks"), std::string::npos)
      << no_locks;
  EXPECT_FALSE(Parsed({"-d", "/tmp/x", "-n", "10"}).phase.direct_io());
  MdtestOptions nfs;
  const absl::Status refused = ParseMdtestArgs({"-d", "nfs://127.0.0.1/export/md", "-n", "10", "--posix.odirect"}, &nfs);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_NE(refused.message().find("--posix.odirect: an nfs:// test directory has no O_DIRECT"), std::string::npos) << refused;

  const MdtestOptions seeded = Parsed({"-d", "/tmp/x", "-n", "10", "--random-seed=9"});
  EXPECT_TRUE(seeded.phase.random_order());
  EXPECT_EQ(seeded.phase.random_seed(), 9u);
  EXPECT_FALSE(Parsed({"-d", "/tmp/x", "-n", "10", "--random-seed=0"}).phase.random_order());
  const MdtestOptions r = Parsed({"-d", "/tmp/x", "-n", "10", "-R"});
  EXPECT_TRUE(r.phase.random_order());
  EXPECT_EQ(r.phase.random_seed(), 0u) << "the seed from the clock is the command's, at the start";
}

// mdtest's backends: POSIX (the default) and DUMMY (any case), whose options reach every phase
// and come only with it; anything else is named with the two there are.
TEST(MdtestPlan, DummyBackendAndItsOptions) {
  const MdtestPlan dummy = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-a", "dummy", "--dummy.delay-create=250", "--dummy.delay-xfer", "7",
                                              "--dummy.delay-only-rank0"}));
  ASSERT_FALSE(dummy.spec.jobs().empty());
  for (const auto& job : dummy.spec.jobs()) {
    ASSERT_TRUE(job.metadata().has_dummy()) << job.name();
    EXPECT_EQ(job.metadata().dummy().delay_create_us(), 250u);
    EXPECT_EQ(job.metadata().dummy().delay_xfer_us(), 7u);
    EXPECT_EQ(job.metadata().dummy().delay_close_us(), 0u);
    EXPECT_TRUE(job.metadata().dummy().delay_only_rank0());
  }
  EXPECT_FALSE(Parsed({"-d", "/tmp/x", "-n", "10", "-a", "POSIX"}).phase.has_dummy());
  EXPECT_FALSE(Parsed({"-d", "/tmp/x", "-n", "10"}).phase.has_dummy());
  auto refusal = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"-d", "/tmp/x", "-n", "10", "-e", "8", "-w", "8"};
    args.insert(args.end(), extra.begin(), extra.end());
    MdtestOptions o;
    return std::string(ParseMdtestArgs(args, &o).message());
  };
  EXPECT_EQ(refusal({"-a", "MMAP"}), "-a MMAP: iofleet mdtest has mdtest's POSIX and DUMMY backends (-a POSIX, -a DUMMY); an nfs:// -d goes through libnfs");
  EXPECT_EQ(refusal({"--dummy.delay-close=5"}), "--dummy.delay-close: an option of mdtest's DUMMY backend; give -a DUMMY");
  EXPECT_EQ(refusal({"-a", "DUMMY", "--dummy.delay-sync=2000000"}), "--dummy.delay-sync=2000000: microseconds, a whole number from 0 to 1000000");
  EXPECT_EQ(refusal({"-a", "DUMMY", "--dummy.delay-sync=-1"}), "--dummy.delay-sync=-1: microseconds, a whole number from 0 to 1000000");
  EXPECT_EQ(refusal({"-a", "DUMMY", "-k", "-w", "0"}), "-k: mdtest's DUMMY backend has no mknod (mdtest's -k with it ends in a segmentation fault)");
  EXPECT_EQ(refusal({"-a", "DUMMY", "--posix.odirect"}), "--posix.odirect: an option of mdtest's POSIX backend, and -a DUMMY is given");
  EXPECT_EQ(refusal({"-a", "DUMMY", "--posix.rangelocks"}), "--posix.rangelocks: an option of mdtest's POSIX backend, and -a DUMMY is given");
}

// --savePerOpDataCSV: a relative prefix is taken from the directory the controller runs in (as
// mdtest's ranks take it from the one mpirun started them in); every phase carries it (the
// workers' file phases write their files), and "dir/" stays a directory's prefix.
TEST(MdtestPlan, PerOpDataCsvPrefixIsAbsoluteInEveryPhase) {
  const std::string cwd = std::filesystem::current_path().string();
  const MdtestPlan plan = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "--savePerOpDataCSV", "out/../ops"}));
  ASSERT_GT(plan.spec.jobs_size(), 0);
  for (const auto& job : plan.spec.jobs()) EXPECT_EQ(job.metadata().per_op_csv(), cwd + "/ops") << job.name();
  EXPECT_EQ(Parsed({"-d", "/tmp/x", "-n", "10", "--savePerOpDataCSV=/tmp/csv/"}).phase.per_op_csv(), "/tmp/csv/");
  MdtestOptions o;
  const absl::Status empty = ParseMdtestArgs({"-d", "/tmp/x", "-n", "10", "--savePerOpDataCSV="}, &o);
  EXPECT_EQ(empty.message(), "--savePerOpDataCSV '': give a file name prefix");
  // mdtest's tasks record their own writes of the files task 0 made for them (-c); iofleet's
  // task 0 does both: refused rather than written differently.
  const absl::Status collective = ParseMdtestArgs({"-d", "/tmp/x", "-n", "10", "-c", "--savePerOpDataCSV", "/tmp/ops"}, &o);
  EXPECT_NE(collective.message().find("--savePerOpDataCSV is not supported with -c in iofleet mdtest"), std::string::npos) << collective;
}

// -F -C -r: files only, created then removed; -i 2 repeats the whole iteration.
TEST(MdtestPlan, SelectedPhasesAndIterations) {
  const MdtestPlan plan = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-F", "-C", "-r", "-i", "2"}));
  EXPECT_EQ(Names(plan), (std::vector<std::string>{"Tree creation", "File creation", "File removal", "Tree removal", "Tree creation",
                                                   "File creation", "File removal", "Tree removal"}));
  EXPECT_EQ(plan.phases[4].iteration, 1u);
  EXPECT_EQ(plan.spec.jobs(5).metadata().iteration(), 1u);
}

// -W: as mdtest 4, only creation stops at the stonewall, and a stopped creation is followed by
// its wear-out; --stonewall-every-phase stops every phase, and each phase that changes the tree
// has a wear-out (no stonewall of its own); stat and read, which change nothing, have none.
TEST(MdtestPlan, StonewallAddsWearOutAfterPhasesThatChangeTheTree) {
  const MdtestPlan creation = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-W", "2"}));
  EXPECT_EQ(Names(creation), (std::vector<std::string>{"Tree creation", "Directory creation", "Directory creation (wear-out)",
                                                       "Directory stat", "Directory rename", "Directory removal", "File creation",
                                                       "File creation (wear-out)", "File stat", "File read", "File removal",
                                                       "Tree removal"}));
  for (const auto& job : creation.spec.jobs()) {
    EXPECT_EQ(job.metadata().stonewall_ns() > 0, job.name() == "Directory creation" || job.name() == "File creation") << job.name();
  }
  const MdtestPlan plan = PlanMdtest(Parsed({"-d", "/tmp/x", "-n", "10", "-F", "-W", "2", "--stonewall-every-phase"}));
  EXPECT_EQ(Names(plan), (std::vector<std::string>{"Tree creation", "Tree creation (wear-out)", "File creation",
                                                   "File creation (wear-out)", "File stat", "File read", "File removal",
                                                   "File removal (wear-out)", "Tree removal", "Tree removal (wear-out)"}));
  for (size_t k = 0; k < plan.phases.size(); ++k) {
    const auto& m = plan.spec.jobs(static_cast<int>(k)).metadata();
    EXPECT_EQ(m.stonewall_ns() == 0, plan.phases[k].wear_out) << plan.spec.jobs(static_cast<int>(k)).name();
  }
}

// After an interrupted iteration the cleanup removes what that iteration made: files (when
// files were tested), directories (when directories were), then the tree — each a valid spec
// through the same resolution stage as every run.
TEST(MdtestPlan, CleanupRemovesFilesDirectoriesThenTheTree) {
  auto names = [](const std::vector<v1::RunSpec>& specs) {
    std::vector<std::string> out;
    for (const v1::RunSpec& spec : specs) {
      EXPECT_TRUE(ResolveRunSpec(spec, RunPlacement{}).ok()) << ResolveRunSpec(spec, RunPlacement{}).status();
      out.push_back(spec.jobs(0).name());
    }
    return out;
  };
  // The task count is known once the workers are (ExecuteMdtest sets it).
  auto with_tasks = [](MdtestOptions o) {
    o.phase.set_task_count(2 * o.tasks_per_worker);
    return o;
  };
  EXPECT_EQ(names(PlanCleanup(with_tasks(Parsed({"-d", "/tmp/x", "-n", "10"})), 0)),
            (std::vector<std::string>{"cleanup: File removal", "cleanup: Directory removal", "cleanup: Tree removal"}));
  const std::vector<v1::RunSpec> files_only = PlanCleanup(with_tasks(Parsed({"-d", "/tmp/x", "-n", "10", "-F", "--tasks-per-worker", "3"})), 2);
  EXPECT_EQ(names(files_only), (std::vector<std::string>{"cleanup: File removal", "cleanup: Tree removal"}));
  const v1::JobSpec& removal = files_only[0].jobs(0);
  EXPECT_EQ(removal.numjobs(), 3u);
  EXPECT_EQ(removal.metadata().iteration(), 2u);
  EXPECT_TRUE(removal.metadata().cleanup());
  EXPECT_EQ(removal.metadata().stonewall_ns(), 0u);
}

}  // namespace
}  // namespace iofleet
