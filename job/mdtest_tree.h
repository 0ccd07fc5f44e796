// mdtest's directory tree and item layout, shared by the worker (which builds it) and the
// controller (which checks the counts): a tree of `depth` levels with `branch` children per
// directory, named as mdtest names it ("mdtest_tree.<n>", root 0, children of n at b*n+1+k),
// and each task's items spread over its directories.
//
// mdtest's directory loops: -n with -I and no -u makes -n/-I copies of the tree, one per test
// directory "test-dir.<iteration>-<loop>", with -I items in every directory of each (creation
// and removal cover them all; stat, read and rename only the first -I items of each copy, as
// mdtest's loops go). An item is then named by one number across the copies: loop x (items in
// one copy) + its number in the copy; without loops there is one copy and the two agree.
#ifndef IOFLEET_JOB_MDTEST_TREE_H_
#define IOFLEET_JOB_MDTEST_TREE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "proto/job.pb.h"

namespace iofleet {

class MdtestTree {
 public:
  explicit MdtestTree(const v1::MetadataPhase& phase);

  // 1 + b + b^2 + ... + b^depth (b = max(branch, 1)), or UINT64_MAX where that overflows.
  static uint64_t DirectoryCount(uint32_t depth, uint32_t branch);
  // Whether the phase's options make mdtest's directory loops: -n and -I both, without -u.
  static bool HasDirectoryLoops(const v1::MetadataPhase& phase) {
    return phase.items_per_task() > 0 && phase.items_per_dir() > 0 && !phase.unique_dir();
  }

  // The phase's operation.
  v1::MetadataPhase::Op op() const { return phase_.op(); }
  // Directories in the tree: 1 + b + b^2 + ... + b^depth.
  uint64_t directory_count() const { return directories_; }
  // The directories that hold items: all of them, or the leaves with -L.
  uint64_t first_item_directory() const { return first_item_dir_; }
  uint64_t item_directory_count() const { return directories_ - first_item_dir_; }
  uint64_t items_per_task() const { return items_per_task_; }
  uint64_t items_per_directory() const { return items_per_dir_; }
  // Copies of the tree (mdtest's directory loops): -n / -I with both and no -u, else 1.
  uint64_t loops() const { return loops_; }
  bool looped() const { return looped_; }
  // Tree directories over every copy, numbered copy by copy (what DirectoryPath takes).
  uint64_t all_directories() const { return loops_ * directories_; }
  // Whether directory `n` (of all_directories()) holds items.
  bool HoldsItems(uint64_t n) const { return n % directories_ >= first_item_dir_; }
  // The items of task whose directory renames rotate through in one copy (mdtest renames
  // nothing when that is 1).
  uint64_t RenameItems() const { return looped_ ? items_per_dir_ : ItemCount(); }

  // The operations task `rank` performs in the phase (`phase.op()`): one per item, or per tree
  // directory for tree phases; none for tasks that sit a phase out (the shared tree is made
  // and removed by task 0, -c has task 0 create every task's items, -S has it remove them).
  // After a stonewall (a wear-out), the steps a task did already are skipped: TaskSteps =
  // TotalSteps - FirstStep.
  uint64_t TaskSteps(uint32_t rank) const { return TotalSteps(rank) - FirstStep(rank); }
  // The phase's steps for task `rank` from the start.
  uint64_t TotalSteps(uint32_t rank) const;
  // The steps task `rank` skips (task_first_step; 0 outside a wear-out).
  uint64_t FirstStep(uint32_t rank) const;
  // How many items of each task the phase covers: -n, or fewer after a stonewalled creation.
  uint64_t ItemCount() const;
  // The item (its number across the copies) a task's step `step` of an item phase works on, in
  // mdtest's order. Creation and removal go directory by directory as mdtest's recursion
  // (create_remove_items) visits them, depth first: a directory's items, then its first child's
  // and that child's subtree's, then its second child's (-z 2 -b 2: directories 0, 1, 3, 4, 2,
  // 5, 6). Stat, read and rename go by item number (mdtest computes each item's directory from
  // its number: 0, 1, 2, 3, ...), and with directory loops cover only the first -I items of
  // each copy. After a stonewall (a limited or resumed phase, whose items are the first by
  // number) creation and removal go by item number too.
  uint64_t ItemOfStep(uint64_t step) const;
  // The steps around `step` whose items are consecutive, [first, end), and the item of `first`:
  // a task's loop finds an item by an addition within the run it is in (ItemOfStep walks the
  // tree from its root).
  struct StepRun {
    uint64_t first = 0;
    uint64_t end = 0;
    uint64_t first_item = 0;
  };
  StepRun RunOfStep(uint64_t step) const;
  // The phase's operations on all tasks (what "100%" of it is).
  uint64_t PhaseSteps() const;

  // The path the phase's operation number `n` (an item, or a tree directory) of task `task`'s
  // tree works on, as a task names it.
  std::string OperationPath(uint32_t task, uint64_t n) const;
  // The tree directory (a DirectoryPath number) that step `n` of a tree phase makes or removes,
  // in mdtest's order (its create_remove_directory_tree recursion): copy by copy, and in each,
  // creation depth first, a directory before its children (0, 1, its children, 2, ...),
  // removal children first (the first branch's deepest directories, ..., 1, ..., 0).
  uint64_t TreeStepDirectory(uint64_t n) const;

  // Rename number `n` of task `rank` (from, to), as mdtest's directory rename goes: item 0 is
  // parked under "<its path>-XX", each next item takes the name of the one before it, and the
  // parked one takes the name of the last but one. The tree then has the names it had (the
  // last item is not renamed), so later phases, and a later run's -r, find every item.
  std::pair<std::string, std::string> RenameStep(uint32_t rank, uint64_t n) const;
  // A name a rename step uses: an item's, or the parked one ("<item's path>-XX").
  struct RenameName {
    uint64_t item = 0;
    bool parked = false;
  };
  // The names RenameStep(rank, n) moves from and to (the same for every task).
  std::pair<RenameName, RenameName> RenameStepNames(uint64_t n) const;

  // "test-dir.<iteration>-<loop>" under the task's test directory.
  std::string IterationDirectory(uint32_t rank, uint64_t loop = 0) const;
  // Path of tree directory `n` of the tree `rank` uses (its own with -u, else the shared one);
  // n counts the directories of every copy (all_directories()), copy by copy.
  std::string DirectoryPath(uint32_t rank, uint64_t n) const;
  // What DirectoryPath(rank, n) adds to its copy's IterationDirectory: the tree's names from its
  // top down to directory n ("/mdtest_tree.<rank>.0/mdtest_tree.<rank>.3"), appended to *out.
  void AppendTreeNames(uint32_t rank, uint64_t n, std::string* out) const;
  // How many directories above tree directory `n` its path names (0: the tree's top), as
  // AppendTreeNames walks them.
  uint32_t Level(uint64_t n) const;
  // The tree directory (a DirectoryPath number) operation `n` of a tree phase (TreeStepDirectory)
  // or of the listing (--readdir: the directories that hold items, copy by copy) works on.
  uint64_t OperationDirectory(uint64_t n) const;
  // Whether task `rank` takes part in the phase: -f/-l/-s runs with fewer tasks than there are,
  // and the others sit it out.
  bool Runs(uint32_t rank) const { return phase_.task_count() == 0 || rank < phase_.task_count(); }
  // Whose items task `rank` works on in the phase, as mdtest's -N stride shifts them: its own
  // when creating, those of task rank + N when it stats or renames, rank + 2N when it reads,
  // rank + 3N when it removes (modulo the task count).
  uint32_t PhaseOwner(uint32_t rank) const;
  // Tree directory `n` (of all_directories()) of the tree that holds task `owner`'s items:
  // with -u the tree of task owner + N (mdtest creates each task's items in its neighbour's
  // tree), else the shared one.
  std::string ItemDirectoryPath(uint32_t owner, uint64_t n) const;
  // Whose tree holds `owner`'s items (ItemDirectoryPath is a directory of that task's tree).
  uint32_t ItemTreeRank(uint32_t owner) const;
  // The directory (of all_directories()) that holds item `i` of a task.
  uint64_t DirectoryOfItem(uint64_t i) const;
  // The items that share item `i`'s directory, [first, end): consecutive numbers, in one copy.
  std::pair<uint64_t, uint64_t> ItemsBeside(uint64_t i) const;
  // The number in the name of item `i` (mdtest's item number in its copy of the tree, which
  // its data packets carry).
  uint64_t ItemNumber(uint64_t i) const { return i % loop_items_ + first_item_dir_ * items_per_dir_; }
  // "file.mdtest.<rank>.<n>" / "dir.mdtest.<rank>.<n>" inside their tree directory
  // (ItemDirectoryPath)
  // ("file.mdtest.shared.<n>" with -S), n counting from the first item directory's first
  // number (item i is n = i with items in every directory; with -L the leaves' numbers).
  std::string ItemPath(uint32_t rank, uint64_t i, bool file) const;
  // The name prefix of a task's items ("file.mdtest.3.").
  std::string ItemPrefix(uint32_t rank, bool file) const;

 private:
  const v1::MetadataPhase phase_;
  uint64_t directories_ = 1, first_item_dir_ = 0, items_per_task_ = 0, items_per_dir_ = 0;
  // Items of the phase per task, over every copy.
  uint64_t PhaseItems() const;
  // Whether the phase covers only the first -I items of each copy (stat, read, rename with
  // directory loops: mdtest's stop_items).
  bool FirstItemsOfEachCopy() const;
  // Whether creation and removal visit item directories in mdtest's recursion order rather
  // than by number (they differ with items in directories of three levels or more).
  bool ItemsInRecursionOrder() const;
  // The directory (of one copy) that is the k-th of mdtest's recursion over the tree: a
  // directory before its children (creation), or after them (`children_first`: removal).
  uint64_t RecursionDirectory(uint64_t k, bool children_first) const;
  // Where item `i` lies: its copy of the tree, and which of that copy's item directories (0 ..
  // item_directory_count() - 1) holds it (DirectoryOfItem and ItemsBeside divide alike).
  struct ItemSlot {
    uint64_t copy = 0;
    uint64_t directory = 0;
  };
  ItemSlot SlotOfItem(uint64_t i) const;

  bool looped_ = false;      // -n with -I and no -u: mdtest's directory loops
  uint64_t loops_ = 1;       // copies of the tree
  uint64_t loop_items_ = 1;  // a task's items in one copy (never 0: items are divided by it)
};

// A task's paths for its timed loop, the same as MdtestTree's OperationPath and RenameStep
// give, without building each one whole: the item directory's path and the name prefix are
// kept for the last directory used, so a step appends only the item's number, into the
// caller's string (whose capacity is reused). Building every path whole (the directory chain,
// the test directory, the prefix: six allocations) was a tenth of the time of a tmpfs rename
// and a third of a stat. One per task (not thread-safe); `tree` must outlive it.
class MdtestPaths {
 public:
  explicit MdtestPaths(const MdtestTree& tree) : tree_(tree) {}
  // MdtestTree::ItemPath(rank, i, file), into *out.
  void Item(uint32_t rank, uint64_t i, bool file, std::string* out);
  // MdtestTree::OperationPath(task, n), into *out.
  void Operation(uint32_t task, uint64_t n, std::string* out);
  // MdtestTree::RenameStep(rank, n), into *from and *to.
  void Rename(uint32_t rank, uint64_t n, std::string* from, std::string* to);

 private:
  void Name(uint32_t rank, MdtestTree::RenameName name, std::string* out);
  // MdtestTree::IterationDirectory(rank, copy), kept while the same one is asked for.
  const std::string& Iteration(uint32_t rank, uint64_t copy);

  const MdtestTree& tree_;
  // The iteration directory of (directory_rank_, directory_copy_) when directory_cached_: a tree
  // phase names a directory per step, an item phase a directory every few steps, and its copy's
  // part is the same from step to step.
  bool directory_cached_ = false;
  uint32_t directory_rank_ = 0;
  uint64_t directory_copy_ = 0;
  std::string iteration_;
  // The items [first_, end_) of one directory, named "<prefix_><item + number_offset_>" (the
  // name's number, ItemNumber, counts on with the item within a copy): a step finds its name
  // with two comparisons and one number, not the three divisions of DirectoryOfItem.
  bool cached_ = false;
  uint32_t rank_ = 0;
  bool file_ = false;
  uint64_t first_ = 0, end_ = 0, number_offset_ = 0;
  std::string prefix_;  // "<item directory>/<item prefix>" of (rank_, first_'s directory, file_)
  // ItemPrefix(rank_, file_). (A directory's items are named anew in the strings kept here, not
  // in new ones: with two items per directory, -I 2, a directory change every second step.)
  std::string item_prefix_;
};

// mdtest's name for an operation ("File creation"), as its tables and files name it.
const char* OperationName(v1::MetadataPhase::Op op);
// One of the four phases on the items that are files (creation, stat, read, removal).
bool IsFilePhase(v1::MetadataPhase::Op op);

// mdtest's --savePerOpDataCSV file of task `rank` in a phase of `op`:
// "<prefix>-<operation>-<rank %05u>.csv"; empty for the phases mdtest writes none for (all but
// the four file phases).
std::string PerOpCsvPath(const std::string& prefix, v1::MetadataPhase::Op op, uint32_t rank);
// The directory those files go in: the prefix up to its last '/' ("/" for "/ops"), or empty
// when the prefix is not an absolute path.
std::string PerOpCsvDirectory(const std::string& prefix);

}  // namespace iofleet

#endif  // IOFLEET_JOB_MDTEST_TREE_H_
