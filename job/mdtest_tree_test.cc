#include "job/mdtest_tree.h"

#include <cstring>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

TEST(MdtestTree, CountsAndNamesAsMdtest) {
  v1::MetadataPhase phase;
  phase.add_test_dirs("/mnt/perf");
  phase.set_items_per_dir(20);
  phase.set_depth(2);
  phase.set_branch(10);
  MdtestTree tree(phase);
  EXPECT_EQ(tree.directory_count(), 111u);  // 1 + 10 + 100
  EXPECT_EQ(tree.items_per_task(), 111u * 20);
  EXPECT_EQ(tree.DirectoryPath(3, 0), "/mnt/perf/test-dir.0-0/mdtest_tree.0");
  // Node 12 is child 1 of node 1 (children of n are 10n+1 .. 10n+10).
  EXPECT_EQ(tree.DirectoryPath(3, 12), "/mnt/perf/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/mdtest_tree.12");
  EXPECT_EQ(tree.ItemPath(3, 45, false), "/mnt/perf/test-dir.0-0/mdtest_tree.0/mdtest_tree.2/dir.mdtest.3.45");
  // The directories above each one in its path (mdtest's WARNINGs name items by their level).
  EXPECT_EQ(tree.Level(0), 0u);
  EXPECT_EQ(tree.Level(10), 1u);
  EXPECT_EQ(tree.Level(12), 2u);
  EXPECT_EQ(tree.Level(110), 2u);

  phase.set_unique_dir(true);
  phase.set_leaf_only(true);
  phase.set_iteration(2);
  phase.clear_items_per_dir();
  phase.set_items_per_task(250);
  MdtestTree leaves(phase);
  EXPECT_EQ(leaves.item_directory_count(), 100u);
  EXPECT_EQ(leaves.first_item_directory(), 11u);
  EXPECT_EQ(leaves.items_per_directory(), 2u);  // 250 over 100 leaves, rounded down as mdtest does
  EXPECT_EQ(leaves.items_per_task(), 200u);
  EXPECT_EQ(leaves.DirectoryPath(7, 0), "/mnt/perf/test-dir.2-0/mdtest_tree.7.0");
  EXPECT_EQ(leaves.DirectoryOfItem(199), 11u + 99);
  EXPECT_EQ(leaves.DirectoryOfItem(2), 11u + 1);
  // mdtest's names: the first leaf's items are numbered after the 11 directories above, 2 each.
  EXPECT_EQ(leaves.ItemPath(7, 0, true), "/mnt/perf/test-dir.2-0/mdtest_tree.7.0/mdtest_tree.7.1/mdtest_tree.7.11/file.mdtest.7.22");

  phase.set_shared_file(true);
  EXPECT_EQ(MdtestTree(phase).ItemPrefix(5, true), "file.mdtest.shared.");
}

// The path an operation number names, per phase (what the slowest-operations lists show).
TEST(MdtestTree, OperationPathPerPhase) {
  using Op = v1::MetadataPhase;
  v1::MetadataPhase phase;
  phase.add_test_dirs("/mnt/perf");
  phase.set_items_per_dir(2);
  phase.set_depth(1);
  phase.set_branch(2);
  phase.set_unique_dir(true);
  auto path = [&](Op::Op op, uint32_t task, uint64_t n) {
    phase.set_op(op);
    return MdtestTree(phase).OperationPath(task, n);
  };
  EXPECT_EQ(path(Op::TREE_CREATE, 1, 2), "/mnt/perf/test-dir.0-0/mdtest_tree.1.0/mdtest_tree.1.2");
  EXPECT_EQ(path(Op::READDIR, 1, 0), "/mnt/perf/test-dir.0-0/mdtest_tree.1.0");
  EXPECT_EQ(path(Op::FILE_STAT, 3, 5), "/mnt/perf/test-dir.0-0/mdtest_tree.3.0/mdtest_tree.3.2/file.mdtest.3.5");
  EXPECT_EQ(path(Op::DIR_CREATE, 0, 0), "/mnt/perf/test-dir.0-0/mdtest_tree.0.0/dir.mdtest.0.0");
  EXPECT_EQ(path(Op::DIR_REMOVE, 0, 3), "/mnt/perf/test-dir.0-0/mdtest_tree.0.0/mdtest_tree.0.1/dir.mdtest.0.3");
}

// mdtest's -N stride: with -u each task's items go in the next task's tree, and each phase after
// creation works on the items of a task further along (stat and rename 1, read 2, removal 3).
TEST(MdtestTree, StrideShiftsOwnersAndTreesAsMdtest) {
  using Op = v1::MetadataPhase;
  v1::MetadataPhase phase;
  phase.add_test_dirs("/m");
  phase.set_items_per_task(4);
  phase.set_unique_dir(true);
  phase.set_task_count(4);
  phase.set_stride(1);
  auto owner = [&](Op::Op op, uint32_t rank) {
    phase.set_op(op);
    return MdtestTree(phase).PhaseOwner(rank);
  };
  EXPECT_EQ(owner(Op::FILE_CREATE, 3), 3u);
  EXPECT_EQ(owner(Op::FILE_STAT, 3), 0u);
  EXPECT_EQ(owner(Op::DIR_RENAME, 1), 2u);
  EXPECT_EQ(owner(Op::FILE_READ, 3), 1u);
  EXPECT_EQ(owner(Op::DIR_REMOVE, 0), 3u);
  EXPECT_EQ(MdtestTree(phase).ItemPath(3, 1, true), "/m/test-dir.0-0/mdtest_tree.0.0/file.mdtest.3.1");
  phase.set_unique_dir(false);
  EXPECT_EQ(MdtestTree(phase).ItemPath(3, 1, true), "/m/test-dir.0-0/mdtest_tree.0/file.mdtest.3.1");
}

// mdtest's directory rename: a rotation through a parked name that leaves every name as it was.
TEST(MdtestTree, RenameRotatesNamesAndLeavesTheSameNames) {
  v1::MetadataPhase phase;
  phase.add_test_dirs("/m");
  phase.set_items_per_task(4);
  phase.set_op(v1::MetadataPhase::DIR_RENAME);
  const MdtestTree tree(phase);
  const std::string d = "/m/test-dir.0-0/mdtest_tree.0/dir.mdtest.2.";
  std::set<std::string> names = {d + "0", d + "1", d + "2", d + "3"};
  const std::set<std::string> before = names;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {d + "0", d + "0-XX"}, {d + "1", d + "0"}, {d + "2", d + "1"}, {d + "0-XX", d + "2"}};
  for (uint64_t n = 0; n < tree.TaskSteps(2); ++n) {
    const auto [from, to] = tree.RenameStep(2, n);
    EXPECT_EQ(std::make_pair(from, to), expected[n]) << "rename " << n;
    ASSERT_EQ(names.erase(from), 1u) << from << " is not there to rename";
    ASSERT_TRUE(names.insert(to).second) << to << " exists already";
  }
  EXPECT_EQ(names, before);
}

// Who does what in a phase: what the progress line counts as 100%.
TEST(MdtestTree, StepsPerTaskAndPhase) {
  using Op = v1::MetadataPhase;
  v1::MetadataPhase phase;
  phase.add_test_dirs("/mnt/perf");
  phase.set_items_per_task(100);
  phase.set_depth(1);
  phase.set_branch(3);
  phase.set_task_count(4);
  auto steps = [&](Op::Op op) {
    phase.set_op(op);
    MdtestTree tree(phase);
    return std::vector<uint64_t>{tree.TaskSteps(0), tree.TaskSteps(1), tree.PhaseSteps()};
  };
  EXPECT_EQ(steps(Op::FILE_CREATE), (std::vector<uint64_t>{100, 100, 400}));
  EXPECT_EQ(steps(Op::TREE_CREATE), (std::vector<uint64_t>{4, 0, 4})) << "the shared tree: task 0 alone";
  EXPECT_EQ(steps(Op::READDIR), (std::vector<uint64_t>{4, 4, 16}));
  phase.set_unique_dir(true);
  EXPECT_EQ(steps(Op::TREE_REMOVE), (std::vector<uint64_t>{4, 4, 16})) << "-u: a tree per task";
  phase.set_collective_creates(true);
  EXPECT_EQ(steps(Op::DIR_CREATE), (std::vector<uint64_t>{400, 0, 400})) << "-c: task 0 creates every task's items";
  EXPECT_EQ(steps(Op::DIR_STAT), (std::vector<uint64_t>{100, 100, 400}));
  phase.set_collective_creates(false);
  phase.set_unique_dir(false);
  phase.set_shared_file(true);
  EXPECT_EQ(steps(Op::FILE_REMOVE), (std::vector<uint64_t>{100, 0, 100})) << "-S: task 0 removes the shared files";

  // After a stonewall: later phases cover item_limit items, and a wear-out skips the steps
  // each task did already.
  phase.set_shared_file(false);
  phase.set_item_limit(60);
  EXPECT_EQ(steps(Op::FILE_STAT), (std::vector<uint64_t>{60, 60, 240}));
  for (uint64_t done : {60, 45, 70, 0}) phase.add_task_first_step(done);
  EXPECT_EQ(steps(Op::FILE_CREATE), (std::vector<uint64_t>{0, 15, 0 + 15 + 0 + 60}));
  phase.set_op(Op::FILE_CREATE);
  EXPECT_EQ(MdtestTree(phase).FirstStep(2), 60u) << "clamped to the task's steps";
  phase.clear_item_limit();
  phase.clear_task_first_step();
  phase.add_task_first_step(3);
  EXPECT_EQ(steps(Op::TREE_REMOVE), (std::vector<uint64_t>{1, 0, 1})) << "the shared tree of 4 directories, 3 removed";
}

// mdtest's directory loops: -n with -I and no -u makes -n/-I copies of the tree, each with -I
// items in every directory; creation and removal cover them all, stat, read and rename the
// first -I of each copy (mdtest's stop_items), and the tree phases every copy.
TEST(MdtestTree, DirectoryLoopsAsMdtest) {
  using Op = v1::MetadataPhase;
  v1::MetadataPhase phase;
  phase.add_test_dirs("/m");
  phase.set_items_per_task(6);
  phase.set_items_per_dir(3);
  phase.set_depth(1);
  phase.set_branch(2);
  phase.set_task_count(2);
  phase.set_op(Op::FILE_CREATE);
  const MdtestTree create(phase);
  EXPECT_EQ(create.loops(), 2u);
  EXPECT_EQ(create.items_per_task(), 6u) << "what mdtest's rates count";
  EXPECT_EQ(create.all_directories(), 6u);
  EXPECT_EQ(create.TaskSteps(1), 2u * 3 * 3) << "two copies of three directories, three items in each";
  EXPECT_EQ(create.ItemPath(1, 0, true), "/m/test-dir.0-0/mdtest_tree.0/file.mdtest.1.0");
  EXPECT_EQ(create.ItemPath(1, 4, true), "/m/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/file.mdtest.1.4");
  EXPECT_EQ(create.ItemPath(1, 9 + 8, true), "/m/test-dir.0-1/mdtest_tree.0/mdtest_tree.2/file.mdtest.1.8");
  EXPECT_EQ(create.ItemNumber(9 + 8), 8u);
  EXPECT_EQ(create.DirectoryPath(0, 3 + 2), "/m/test-dir.0-1/mdtest_tree.0/mdtest_tree.2");
  EXPECT_EQ(create.IterationDirectory(0, 1), "/m/test-dir.0-1");

  phase.set_op(Op::FILE_STAT);
  const MdtestTree stat(phase);
  EXPECT_EQ(stat.TaskSteps(0), 2u * 3) << "the first -I items of each copy";
  std::vector<std::string> stated;
  for (uint64_t n = 0; n < stat.TaskSteps(0); ++n) stated.push_back(stat.OperationPath(0, stat.ItemOfStep(n)));
  EXPECT_EQ(stated, (std::vector<std::string>{
                        "/m/test-dir.0-0/mdtest_tree.0/file.mdtest.0.0", "/m/test-dir.0-0/mdtest_tree.0/file.mdtest.0.1",
                        "/m/test-dir.0-0/mdtest_tree.0/file.mdtest.0.2", "/m/test-dir.0-1/mdtest_tree.0/file.mdtest.0.0",
                        "/m/test-dir.0-1/mdtest_tree.0/file.mdtest.0.1", "/m/test-dir.0-1/mdtest_tree.0/file.mdtest.0.2"}));

  phase.set_op(Op::TREE_CREATE);
  EXPECT_EQ(MdtestTree(phase).TaskSteps(0), 6u);
  EXPECT_EQ(MdtestTree(phase).TaskSteps(1), 0u) << "the shared trees: task 0 alone";
  // Removed copy by copy, each whole (children first) before the next, as mdtest's loops go.
  phase.set_op(Op::TREE_REMOVE);
  const MdtestTree removal(phase);
  std::vector<std::string> removed;
  for (uint64_t n = 0; n < removal.TaskSteps(0); ++n) removed.push_back(removal.OperationPath(0, n));
  EXPECT_EQ(removed, (std::vector<std::string>{"/m/test-dir.0-0/mdtest_tree.0/mdtest_tree.1", "/m/test-dir.0-0/mdtest_tree.0/mdtest_tree.2",
                                               "/m/test-dir.0-0/mdtest_tree.0", "/m/test-dir.0-1/mdtest_tree.0/mdtest_tree.1",
                                               "/m/test-dir.0-1/mdtest_tree.0/mdtest_tree.2", "/m/test-dir.0-1/mdtest_tree.0"}));
  phase.set_op(Op::READDIR);
  EXPECT_EQ(MdtestTree(phase).OperationPath(1, 4), "/m/test-dir.0-1/mdtest_tree.0/mdtest_tree.1");

  // The rename rotates within each copy and leaves every name as it was.
  phase.set_op(Op::DIR_RENAME);
  phase.set_depth(0);
  const MdtestTree rename(phase);
  EXPECT_EQ(rename.RenameItems(), 3u);
  std::set<std::string> names;
  for (const char* copy : {"0", "1"}) {
    for (int i = 0; i < 3; ++i) names.insert(absl::StrCat("/m/test-dir.0-", copy, "/mdtest_tree.0/dir.mdtest.1.", i));
  }
  const std::set<std::string> before = names;
  ASSERT_EQ(rename.TaskSteps(1), 6u);
  for (uint64_t n = 0; n < rename.TaskSteps(1); ++n) {
    const auto [from, to] = rename.RenameStep(1, n);
    ASSERT_EQ(names.erase(from), 1u) << from << " is not there to rename";
    ASSERT_TRUE(names.insert(to).second) << to << " exists already";
  }
  EXPECT_EQ(names, before);

  // -u: never loops (mdtest refuses -n with -I there).
  phase.set_unique_dir(true);
  EXPECT_EQ(MdtestTree(phase).loops(), 1u);
}

// Tree phases make and remove directories in mdtest's order: its create_remove_directory_tree
// recursion, replayed here (node k's children are b*k+1 .. b*k+b): a directory, then each
// child's subtree in turn; removal the same walk with each directory after its children.
TEST(MdtestTree, TreePhasesWalkTheTreeAsMdtestsRecursion) {
  using Op = v1::MetadataPhase;
  for (const auto& [depth, branch] : std::vector<std::pair<uint32_t, uint32_t>>{{0, 3}, {1, 4}, {2, 2}, {3, 1}, {2, 4}, {3, 3}}) {
    std::vector<uint64_t> created, removed;
    std::function<void(uint64_t, uint32_t)> walk = [&](uint64_t node, uint32_t level) {
      created.push_back(node);
      if (level < depth) {
        for (uint32_t c = 0; c < branch; ++c) walk(uint64_t{branch} * node + 1 + c, level + 1);
      }
      removed.push_back(node);
    };
    walk(0, 0);
    v1::MetadataPhase phase;
    phase.add_test_dirs("/m");
    phase.set_items_per_task(4);
    phase.set_depth(depth);
    phase.set_branch(branch);
    for (const Op::Op op : {Op::TREE_CREATE, Op::TREE_REMOVE}) {
      phase.set_op(op);
      const MdtestTree tree(phase);
      ASSERT_EQ(tree.TotalSteps(0), created.size());
      std::vector<uint64_t> walked;
      for (uint64_t n = 0; n < tree.TotalSteps(0); ++n) walked.push_back(tree.TreeStepDirectory(n));
      EXPECT_EQ(walked, op == Op::TREE_CREATE ? created : removed) << "-z " << depth << " -b " << branch << " " << Op::Op_Name(op);
    }
  }
}

// Item phases go as mdtest's go. Creation and removal: its create_remove_items recursion,
// replayed here as mdtest.c writes it (at depth 0 the root's items, then for each child in
// turn that directory's items and its subtree; item numbers currDir * -I + i): -z 2 -b 2 visits
// directories 0, 1, 3, 4, 2, 5, 6. Stat, read and rename go by item number (mdtest_stat and
// mdtest_read compute each item's directory from its number). With -L, or fewer than three
// levels, the two orders are one; after a stonewall (item_limit) creation and removal go by
// number, so that every later phase finds the items made.
TEST(MdtestTree, ItemPhasesGoInMdtestsOrder) {
  using Op = v1::MetadataPhase;
  int checked = 0;
  for (const auto& [depth, branch] : std::vector<std::pair<uint32_t, uint32_t>>{{0, 3}, {1, 4}, {2, 2}, {3, 1}, {2, 4}, {3, 3}}) {
    for (const bool leaf_only : {false, true}) {
      for (const bool loops : {false, true}) {
        const uint64_t per_dir = 3;
        v1::MetadataPhase phase;
        phase.add_test_dirs("/m");
        phase.set_depth(depth);
        phase.set_branch(branch);
        phase.set_leaf_only(leaf_only);
        phase.set_items_per_dir(per_dir);
        const uint64_t directories = MdtestTree::DirectoryCount(depth, branch);
        uint64_t leaves = 1;
        for (uint32_t level = 0; level < depth; ++level) leaves *= std::max(1u, branch);
        const uint64_t item_directories = leaf_only && depth > 0 ? leaves : directories;
        // Directory loops: -n of two -I's without -u, two copies of the tree (mdtest's
        // directory_loops = items / items_per_dir).
        if (loops) phase.set_items_per_task(2 * per_dir);
        phase.set_unique_dir(!loops);
        // mdtest's recursion, one copy: the item numbers in the order it makes them.
        std::vector<uint64_t> recursion;
        std::function<void(uint32_t, uint64_t)> items = [&](uint32_t level, uint64_t dir) {
          if (!leaf_only || level == depth) {
            const uint64_t first = (leaf_only && depth > 0 ? dir - (directories - leaves) : dir) * per_dir;
            for (uint64_t i = 0; i < per_dir; ++i) recursion.push_back(first + i);
          }
          if (level < depth) {
            for (uint32_t c = 0; c < branch; ++c) items(level + 1, uint64_t{branch} * dir + 1 + c);
          }
        };
        items(0, 0);
        ASSERT_EQ(recursion.size(), per_dir * item_directories);
        for (const Op::Op op : {Op::DIR_CREATE, Op::FILE_CREATE, Op::DIR_REMOVE, Op::FILE_REMOVE, Op::DIR_STAT, Op::FILE_STAT, Op::FILE_READ}) {
          phase.set_op(op);
          const MdtestTree tree(phase);
          const bool by_recursion = op == Op::DIR_CREATE || op == Op::FILE_CREATE || op == Op::DIR_REMOVE || op == Op::FILE_REMOVE;
          std::vector<uint64_t> expected;
          for (uint64_t copy = 0; copy < (loops ? 2 : 1); ++copy) {
            for (uint64_t k = 0; k < recursion.size(); ++k) {
              // (With loops, stat and read cover the first -I items of each copy.)
              if (!by_recursion && loops && k >= per_dir) break;
              expected.push_back(copy * recursion.size() + (by_recursion ? recursion[k] : k));
            }
          }
          std::vector<uint64_t> walked;
          for (uint64_t n = 0; n < tree.TaskSteps(0); ++n) walked.push_back(tree.ItemOfStep(n));
          EXPECT_EQ(walked, expected) << "-z " << depth << " -b " << branch << (leaf_only ? " -L" : "") << (loops ? " loops " : " ")
                                      << Op::Op_Name(op);
          // Each run of steps (what the worker's loop keeps) gives the same items.
          for (uint64_t n = 0; n < tree.TaskSteps(0); ++n) {
            const MdtestTree::StepRun run = tree.RunOfStep(n);
            ASSERT_TRUE(run.first <= n && n < run.end);
            ASSERT_EQ(run.first_item + (n - run.first), walked[n]) << Op::Op_Name(op) << " step " << n;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 6 * 2 * 2 * 7);

  // -z 2 -b 2 -I 3, written out (as strace shows mdtest 4 making them): the third directory
  // made is mdtest_tree.3, under mdtest_tree.1, before mdtest_tree.2.
  v1::MetadataPhase phase;
  phase.add_test_dirs("/m");
  phase.set_op(Op::FILE_CREATE);
  phase.set_depth(2);
  phase.set_branch(2);
  phase.set_items_per_dir(3);
  phase.set_unique_dir(true);
  const MdtestTree create(phase);
  EXPECT_EQ(create.OperationPath(0, create.ItemOfStep(6)), "/m/test-dir.0-0/mdtest_tree.0.0/mdtest_tree.0.1/mdtest_tree.0.3/file.mdtest.0.9");
  EXPECT_EQ(create.OperationPath(0, create.ItemOfStep(12)), "/m/test-dir.0-0/mdtest_tree.0.0/mdtest_tree.0.2/file.mdtest.0.6");
  // After a stonewalled creation every phase covers the first items by number.
  phase.set_item_limit(10);
  phase.set_op(Op::FILE_REMOVE);
  const MdtestTree limited(phase);
  ASSERT_EQ(limited.TaskSteps(0), 10u);
  for (uint64_t n = 0; n < 10; ++n) EXPECT_EQ(limited.ItemOfStep(n), n);
}

// Counted, never walked level by level: a request's -z of 4 billion with -b 1 (or 0) is a chain
// of 4 billion and one directories, and saying so takes no time (the worker then refuses it).
TEST(MdtestTree, DirectoryCountOfDeepChainsAndWideTrees) {
  EXPECT_EQ(MdtestTree::DirectoryCount(0, 10), 1u);
  EXPECT_EQ(MdtestTree::DirectoryCount(2, 10), 111u);
  EXPECT_EQ(MdtestTree::DirectoryCount(3, 1), 4u);
  EXPECT_EQ(MdtestTree::DirectoryCount(UINT32_MAX, 1), uint64_t{UINT32_MAX} + 1);
  EXPECT_EQ(MdtestTree::DirectoryCount(UINT32_MAX, 0), uint64_t{UINT32_MAX} + 1);
  EXPECT_EQ(MdtestTree::DirectoryCount(UINT32_MAX, 2), UINT64_MAX);
  EXPECT_EQ(MdtestTree::DirectoryCount(64, UINT32_MAX), UINT64_MAX);
}

// The timed loop's paths (MdtestPaths, which keeps a directory's part between steps) are the
// tree's own, step by step, in every layout: -u or shared, -N, -L, -S, directory loops, files
// and directories, across directory boundaries and back (a rename's two names straddle them).
TEST(MdtestPaths, SameAsTheTreeInEveryLayout) {
  using Op = v1::MetadataPhase;
  int layouts = 0;
  for (const bool unique : {false, true}) {
    for (const uint32_t stride : {0u, 1u}) {
      for (const bool leaf_only : {false, true}) {
        for (const bool shared : {false, true}) {
          for (const uint64_t per_dir : {0u, 3u}) {
            for (const Op::Op op : {Op::DIR_CREATE, Op::DIR_STAT, Op::DIR_RENAME, Op::FILE_READ, Op::FILE_REMOVE, Op::TREE_REMOVE, Op::READDIR}) {
              v1::MetadataPhase phase;
              phase.add_test_dirs("/m/a");
              phase.add_test_dirs("/m/b");
              phase.set_op(op);
              phase.set_depth(2);
              phase.set_branch(2);
              phase.set_items_per_task(per_dir ? 42 : 40);
              phase.set_items_per_dir(per_dir);
              phase.set_unique_dir(unique);
              phase.set_stride(stride);
              phase.set_leaf_only(leaf_only);
              phase.set_shared_file(shared);
              phase.set_task_count(3);
              const MdtestTree tree(phase);
              MdtestPaths paths(tree);
              std::string path, other;
              ++layouts;
              for (uint32_t rank = 0; rank < 3; ++rank) {
                // (Steps in reverse too: the kept directory changes back and forth.)
                const uint64_t steps = tree.TotalSteps(rank);
                for (uint64_t k = 0; k < 2 * steps; ++k) {
                  const uint64_t step = k < steps ? k : 2 * steps - 1 - k;
                  const uint64_t n = op == Op::TREE_REMOVE || op == Op::READDIR ? step : tree.ItemOfStep(step);
                  if (op == Op::DIR_RENAME) {
                    paths.Rename(rank, step, &path, &other);
                    ASSERT_EQ(std::make_pair(path, other), tree.RenameStep(rank, step)) << layouts << " rank " << rank << " step " << step;
                  } else {
                    paths.Operation(rank, n, &path);
                    ASSERT_EQ(path, tree.OperationPath(rank, n)) << layouts << " rank " << rank << " step " << step;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(layouts, 224);
}

// mdtest's --savePerOpDataCSV names: a file per task of the four file phases only, in the
// prefix's directory.
TEST(MdtestPerOpCsv, FilePhasesOnlyNamedAsMdtest) {
  EXPECT_EQ(PerOpCsvPath("/tmp/ops", v1::MetadataPhase::FILE_CREATE, 7), "/tmp/ops-File creation-00007.csv");
  EXPECT_EQ(PerOpCsvPath("/tmp/d/", v1::MetadataPhase::FILE_REMOVE, 123456), "/tmp/d/-File removal-123456.csv");
  for (const auto op : {v1::MetadataPhase::DIR_CREATE, v1::MetadataPhase::TREE_REMOVE, v1::MetadataPhase::READDIR}) {
    EXPECT_EQ(PerOpCsvPath("/tmp/ops", op, 0), "") << OperationName(op);
  }
  EXPECT_EQ(PerOpCsvDirectory("/tmp/csv/ops"), "/tmp/csv");
  EXPECT_EQ(PerOpCsvDirectory("/tmp/csv/"), "/tmp/csv");
  EXPECT_EQ(PerOpCsvDirectory("/ops"), "/");
  EXPECT_EQ(PerOpCsvDirectory("ops"), "");
  EXPECT_EQ(PerOpCsvDirectory(""), "");
}

}  // namespace
}  // namespace iofleet
