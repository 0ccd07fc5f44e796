#include "job/mdtest_tree.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iofleet {

uint64_t MdtestTree::DirectoryCount(uint32_t depth, uint32_t branch) {
  const uint64_t b = std::max(1u, branch);
  // A chain: one directory per level (counted, not looped: -z can be 4 billion in a request).
  if (b == 1) return uint64_t{depth} + 1;
  uint64_t level = 1, directories = 1;  // (b >= 2 saturates within 64 levels)
  for (uint32_t d = 1; d <= depth; ++d) {
    if (level > UINT64_MAX / b) return UINT64_MAX;
    level *= b;
    if (directories > UINT64_MAX - level) return UINT64_MAX;
    directories += level;
  }
  return directories;
}

MdtestTree::MdtestTree(const v1::MetadataPhase& phase) : phase_(phase) {
  directories_ = DirectoryCount(phase.depth(), phase.branch());
  // With -L only the deepest level holds items: everything above it comes first.
  first_item_dir_ = phase.leaf_only() && phase.depth() > 0 ? DirectoryCount(phase.depth() - 1, phase.branch()) : 0;
  if (phase.items_per_dir() > 0) {
    items_per_dir_ = phase.items_per_dir();
    items_per_task_ = phase.items_per_task() ? phase.items_per_task() : items_per_dir_ * item_directory_count();
    // mdtest's directory loops (its directory_loops = items / items_per_dir without -u).
    looped_ = HasDirectoryLoops(phase);
    if (looped_) loops_ = std::max<uint64_t>(1, phase.items_per_task() / items_per_dir_);
  } else {
    // mdtest's rule: -n spread evenly over the directories that hold items, rounded down (-n
    // 10 over 4 directories: 2 each, 8 items).
    items_per_dir_ = phase.items_per_task() / item_directory_count();
    items_per_task_ = items_per_dir_ * item_directory_count();
  }
  loop_items_ = std::max<uint64_t>(1, looped_ ? items_per_dir_ * item_directory_count() : items_per_task_);
}

std::string MdtestTree::IterationDirectory(uint32_t rank, uint64_t loop) const {
  const auto& dirs = phase_.test_dirs();
  const std::string& base = dirs.empty() ? std::string(".") : dirs[static_cast<int>(rank % dirs.size())];
  // mdtest's prep_testdir: "test-dir.<iteration>-<directory loop>".
  return absl::StrCat(base, "/test-dir.", phase_.iteration(), "-", loop);
}

std::string MdtestTree::DirectoryPath(uint32_t rank, uint64_t n) const {
  std::string path = IterationDirectory(rank, n / directories_);
  AppendTreeNames(rank, n, &path);
  return path;
}

void MdtestTree::AppendTreeNames(uint32_t rank, uint64_t n, std::string* out) const {
  // The directory's ancestors, found from it upwards, written from the top down. (On the stack
  // for any usual depth: a tree phase names a directory per step, and mdtest's loop makes its
  // name with one sprintf; allocations here cost tree removal on tmpfs 5% of its rate.)
  absl::InlinedVector<uint64_t, 32> chain;
  const uint64_t b = std::max(1u, phase_.branch());
  for (uint64_t node = n % directories_;; node = (node - 1) / b) {
    chain.push_back(node);
    if (node == 0) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (phase_.unique_dir()) {
      absl::StrAppend(out, "/mdtest_tree.", rank, ".", *it);
    } else {
      absl::StrAppend(out, "/mdtest_tree.", *it);
    }
  }
}

uint32_t MdtestTree::Level(uint64_t n) const {
  const uint64_t b = std::max(1u, phase_.branch());
  uint32_t level = 0;
  for (uint64_t node = n % directories_; node != 0; node = (node - 1) / b) ++level;
  return level;
}

uint64_t MdtestTree::OperationDirectory(uint64_t n) const {
  if (phase_.op() != v1::MetadataPhase::READDIR) return TreeStepDirectory(n);
  const uint64_t per_copy = std::max<uint64_t>(1, item_directory_count());
  return n / per_copy * directories_ + first_item_dir_ + n % per_copy;
}

uint64_t MdtestTree::RecursionDirectory(uint64_t k, bool children_first) const {
  // Directories are numbered level by level (node k's children are b*k+1 .. b*k+b); the walk
  // goes down from the root, one level per step, choosing the child whose subtree holds the
  // k-th place in the recursion's order.
  // A subtree of `size` directories is its root and b subtrees of (size - 1) / b each.
  const uint64_t b = std::max(1u, phase_.branch());
  uint64_t node = 0;
  for (uint64_t size = directories_; size > 1; size = (size - 1) / b) {
    if (children_first ? k + 1 == size : k == 0) break;  // this subtree's root itself
    if (!children_first) --k;                            // (its root came first)
    const uint64_t child_size = (size - 1) / b;
    node = b * node + 1 + k / child_size;
    k %= child_size;
  }
  return node;
}

uint64_t MdtestTree::TreeStepDirectory(uint64_t n) const {
  return n / directories_ * directories_ + RecursionDirectory(n % directories_, phase_.op() == v1::MetadataPhase::TREE_REMOVE);
}

MdtestTree::ItemSlot MdtestTree::SlotOfItem(uint64_t i) const {
  // -I items a directory (at least one), the last directory of a copy taking the rest.
  const uint64_t copy = i / loop_items_;
  return {copy, std::min((i - copy * loop_items_) / std::max<uint64_t>(1, items_per_dir_), item_directory_count() - 1)};
}

uint64_t MdtestTree::DirectoryOfItem(uint64_t i) const {
  const ItemSlot slot = SlotOfItem(i);
  return slot.copy * directories_ + first_item_dir_ + slot.directory;
}

std::pair<uint64_t, uint64_t> MdtestTree::ItemsBeside(uint64_t i) const {
  const ItemSlot slot = SlotOfItem(i);
  const uint64_t copy_start = slot.copy * loop_items_;
  const uint64_t per_directory = std::max<uint64_t>(1, items_per_dir_);
  const uint64_t first = copy_start + slot.directory * per_directory;
  return {first, slot.directory + 1 == item_directory_count() ? copy_start + loop_items_ : first + per_directory};
}

bool MdtestTree::FirstItemsOfEachCopy() const {
  using Op = v1::MetadataPhase;
  return looped_ &&
         (phase_.op() == Op::DIR_STAT || phase_.op() == Op::FILE_STAT || phase_.op() == Op::FILE_READ || phase_.op() == Op::DIR_RENAME);
}

bool MdtestTree::ItemsInRecursionOrder() const {
  using Op = v1::MetadataPhase;
  const Op::Op op = phase_.op();
  if (op != Op::DIR_CREATE && op != Op::FILE_CREATE && op != Op::DIR_REMOVE && op != Op::FILE_REMOVE) return false;
  // With items only in the leaves (-L), or fewer than three levels, the recursion meets the
  // item directories in the order of their numbers. A stonewalled creation (and the phases
  // after it) covers the first items by number: mdtest's own tree after a stonewall is not
  // that of a whole pass in any order (its helper makes one more item in every directory
  // left), and the phases after it must find what was made.
  if (first_item_dir_ != 0 || phase_.depth() < 2 || phase_.branch() < 2 || items_per_dir_ == 0) return false;
  return phase_.item_limit() == 0 && phase_.stonewall_ns() == 0 && phase_.task_first_step_size() == 0 &&
         loop_items_ == items_per_dir_ * directories_;
}

MdtestTree::StepRun MdtestTree::RunOfStep(uint64_t step) const {
  const bool first_items = FirstItemsOfEachCopy();
  if (!first_items && !ItemsInRecursionOrder()) return {.first = 0, .end = UINT64_MAX, .first_item = 0};
  // A directory's items at a time: with loops, the first -I of each copy; in the recursion, the
  // copy, then the directory's place in it.
  const uint64_t first = step - step % items_per_dir_;
  if (first_items) return {.first = first, .end = first + items_per_dir_, .first_item = first / items_per_dir_ * loop_items_};
  const uint64_t copy = first / loop_items_;
  const uint64_t directory = RecursionDirectory((first - copy * loop_items_) / items_per_dir_, false);
  return {.first = first, .end = first + items_per_dir_, .first_item = copy * loop_items_ + directory * items_per_dir_};
}

uint64_t MdtestTree::ItemOfStep(uint64_t step) const {
  const StepRun run = RunOfStep(step);
  return run.first_item + (step - run.first);
}

std::string MdtestTree::ItemPrefix(uint32_t rank, bool file) const {
  if (phase_.shared_file() && file) return "file.mdtest.shared.";
  return absl::StrCat(file ? "file" : "dir", ".mdtest.", rank, ".");
}

uint32_t MdtestTree::PhaseOwner(uint32_t rank) const {
  using Op = v1::MetadataPhase;
  uint64_t shifts = 0;
  switch (phase_.op()) {
    case Op::DIR_STAT:
    case Op::FILE_STAT:
    case Op::DIR_RENAME: shifts = 1; break;
    case Op::FILE_READ: shifts = 2; break;
    case Op::DIR_REMOVE:
    case Op::FILE_REMOVE: shifts = 3; break;
    default: break;
  }
  if (shifts == 0 || phase_.stride() == 0) return rank;
  const uint64_t tasks = std::max(1u, phase_.task_count());
  return static_cast<uint32_t>((rank + shifts * phase_.stride()) % tasks);
}

uint32_t MdtestTree::ItemTreeRank(uint32_t owner) const {
  // With -u, task t's items live in the tree of task t + N (mdtest's unique_chdir_dir).
  if (!phase_.unique_dir() || phase_.stride() == 0) return owner;
  const uint64_t tasks = std::max(1u, phase_.task_count());
  return static_cast<uint32_t>((owner + uint64_t{phase_.stride()}) % tasks);
}

std::string MdtestTree::ItemDirectoryPath(uint32_t owner, uint64_t n) const { return DirectoryPath(ItemTreeRank(owner), n); }

std::string MdtestTree::ItemPath(uint32_t rank, uint64_t i, bool file) const {
  // mdtest numbers items as if every directory held them: with -L the first leaf's first item
  // is number (directories above the leaves) x (items per directory), not 0.
  return absl::StrCat(ItemDirectoryPath(rank, DirectoryOfItem(i)), "/", ItemPrefix(rank, file), ItemNumber(i));
}

std::string MdtestTree::OperationPath(uint32_t task, uint64_t n) const {
  using Op = v1::MetadataPhase;
  switch (phase_.op()) {
    case Op::TREE_CREATE:
    case Op::TREE_REMOVE:
    case Op::READDIR: return DirectoryPath(task, OperationDirectory(n));
    case Op::DIR_CREATE:
    case Op::DIR_STAT:
    case Op::DIR_RENAME:
    case Op::DIR_REMOVE: return ItemPath(task, n, false);
    default: return ItemPath(task, n, true);
  }
}

std::pair<MdtestTree::RenameName, MdtestTree::RenameName> MdtestTree::RenameStepNames(uint64_t n) const {
  // One rotation per copy of the tree.
  const uint64_t items = std::max<uint64_t>(1, RenameItems());
  const uint64_t first = looped_ ? n / items * loop_items_ : 0;
  n %= items;
  const RenameName parked{.item = first, .parked = true};
  if (n == 0) return {{.item = first}, parked};
  if (n + 1 < items) return {{.item = first + n}, {.item = first + n - 1}};
  return {parked, {.item = first + items - 2}};
}

std::pair<std::string, std::string> MdtestTree::RenameStep(uint32_t rank, uint64_t n) const {
  const auto [from, to] = RenameStepNames(n);
  auto path = [&](RenameName name) { return ItemPath(rank, name.item, false) + (name.parked ? "-XX" : ""); };
  return {path(from), path(to)};
}

const std::string& MdtestPaths::Iteration(uint32_t rank, uint64_t copy) {
  if (!directory_cached_ || rank != directory_rank_ || copy != directory_copy_) {
    iteration_ = tree_.IterationDirectory(rank, copy);
    directory_cached_ = true;
    directory_rank_ = rank;
    directory_copy_ = copy;
  }
  return iteration_;
}

void MdtestPaths::Item(uint32_t rank, uint64_t i, bool file, std::string* out) {
  if (!cached_ || rank != rank_ || file != file_ || i < first_ || i >= end_) {
    // ItemDirectoryPath(rank, directory) + "/" + ItemPrefix(rank, file), built in prefix_.
    const uint64_t directory = tree_.DirectoryOfItem(i);
    const uint32_t tree_rank = tree_.ItemTreeRank(rank);
    if (!cached_ || rank != rank_ || file != file_) item_prefix_ = tree_.ItemPrefix(rank, file);
    prefix_.assign(Iteration(tree_rank, directory / tree_.directory_count()));
    tree_.AppendTreeNames(tree_rank, directory, &prefix_);
    prefix_.push_back('/');
    prefix_.append(item_prefix_);
    std::tie(first_, end_) = tree_.ItemsBeside(i);
    number_offset_ = tree_.ItemNumber(first_) - first_;  // (modulo 2^64: only the sum is used)
    cached_ = true;
    rank_ = rank;
    file_ = file;
  }
  out->assign(prefix_);
  absl::StrAppend(out, i + number_offset_);
}

void MdtestPaths::Operation(uint32_t task, uint64_t n, std::string* out) {
  using Op = v1::MetadataPhase;
  switch (tree_.op()) {
    case Op::TREE_CREATE:
    case Op::TREE_REMOVE:
    case Op::READDIR: {  // a directory per step, named anew in its copy's directory
      const uint64_t directory = tree_.OperationDirectory(n);
      out->assign(Iteration(task, directory / tree_.directory_count()));
      tree_.AppendTreeNames(task, directory, out);
      return;
    }
    case Op::DIR_CREATE:
    case Op::DIR_STAT:
    case Op::DIR_RENAME:
    case Op::DIR_REMOVE: Item(task, n, false, out); return;
    default: Item(task, n, true, out); return;
  }
}

void MdtestPaths::Name(uint32_t rank, MdtestTree::RenameName name, std::string* out) {
  Item(rank, name.item, false, out);
  if (name.parked) out->append("-XX");
}

void MdtestPaths::Rename(uint32_t rank, uint64_t n, std::string* from, std::string* to) {
  const auto [from_name, to_name] = tree_.RenameStepNames(n);
  Name(rank, from_name, from);
  Name(rank, to_name, to);
}

uint64_t MdtestTree::ItemCount() const {
  return phase_.item_limit() > 0 ? std::min(phase_.item_limit(), items_per_task_) : items_per_task_;
}

uint64_t MdtestTree::PhaseItems() const {
  if (!looped_) return ItemCount();
  return loops_ * (FirstItemsOfEachCopy() ? items_per_dir_ : loop_items_);
}

uint64_t MdtestTree::FirstStep(uint32_t rank) const {
  return rank < static_cast<uint32_t>(phase_.task_first_step_size()) ? std::min(phase_.task_first_step(rank), TotalSteps(rank)) : 0;
}

uint64_t MdtestTree::TotalSteps(uint32_t rank) const {
  using Op = v1::MetadataPhase;
  const uint64_t tasks = std::max(1u, phase_.task_count());
  if (!Runs(rank)) return 0;
  const uint64_t items = PhaseItems();
  switch (phase_.op()) {
    case Op::TREE_CREATE:
    case Op::TREE_REMOVE:
      return phase_.unique_dir() || rank == 0 ? all_directories() : 0;
    case Op::READDIR:
      return loops_ * item_directory_count();
    case Op::DIR_CREATE:
    case Op::FILE_CREATE:
      if (phase_.collective_creates()) return rank == 0 ? items * tasks : 0;
      return items;
    case Op::FILE_REMOVE:
      return phase_.shared_file() && rank != 0 ? 0 : items;
    default:
      return items;
  }
}

uint64_t MdtestTree::PhaseSteps() const {
  uint64_t steps = 0;
  for (uint32_t rank = 0; rank < std::max(1u, phase_.task_count()); ++rank) steps += TaskSteps(rank);
  return steps;
}

const char* OperationName(v1::MetadataPhase::Op op) {
  switch (op) {
    case v1::MetadataPhase::DIR_CREATE: return "Directory creation";
    case v1::MetadataPhase::DIR_STAT: return "Directory stat";
    case v1::MetadataPhase::DIR_RENAME: return "Directory rename";
    case v1::MetadataPhase::DIR_REMOVE: return "Directory removal";
    case v1::MetadataPhase::FILE_CREATE: return "File creation";
    case v1::MetadataPhase::FILE_STAT: return "File stat";
    case v1::MetadataPhase::FILE_READ: return "File read";
    case v1::MetadataPhase::FILE_REMOVE: return "File removal";
    case v1::MetadataPhase::TREE_CREATE: return "Tree creation";
    case v1::MetadataPhase::TREE_REMOVE: return "Tree removal";
    case v1::MetadataPhase::READDIR: return "Directory listing";
    default: return "?";
  }
}

bool IsFilePhase(v1::MetadataPhase::Op op) {
  using Op = v1::MetadataPhase;
  return op == Op::FILE_CREATE || op == Op::FILE_STAT || op == Op::FILE_READ || op == Op::FILE_REMOVE;
}

std::string PerOpCsvPath(const std::string& prefix, v1::MetadataPhase::Op op, uint32_t rank) {
  if (!IsFilePhase(op)) return "";
  return absl::StrFormat("%s-%s-%05u.csv", prefix, OperationName(op), rank);
}

std::string PerOpCsvDirectory(const std::string& prefix) {
  const size_t slash = prefix.rfind('/');
  if (prefix.empty() || prefix[0] != '/' || slash == std::string::npos) return "";
  return slash == 0 ? "/" : prefix.substr(0, slash);
}

}  // namespace iofleet
