#include "worker/metadata_task.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/confined_path.h"
#include "common/errno_status.h"
#include "common/nfs_url.h"
#include "job/mdtest_data.h"
#include "job/mdtest_tree.h"
#include "job/mdtest_warnings.h"
#include "worker/block_permutation.h"
#include "worker/dummy_file_system.h"
#include "worker/file_system.h"
#include "worker/job_thread.h"
#include "worker/per_op_csv.h"
#include "worker/thread_placement.h"

namespace iofleet {
namespace {

using Clock = std::chrono::steady_clock;
using Op = v1::MetadataPhase;

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

const char* OpName(Op::Op op) {
  switch (op) {
    case Op::TREE_CREATE: return "tree creation";
    case Op::DIR_CREATE: return "directory creation";
    case Op::DIR_STAT: return "directory stat";
    case Op::DIR_RENAME: return "directory rename";
    case Op::DIR_REMOVE: return "directory removal";
    case Op::FILE_CREATE: return "file creation";
    case Op::FILE_STAT: return "file stat";
    case Op::FILE_READ: return "file read";
    case Op::FILE_REMOVE: return "file removal";
    case Op::TREE_REMOVE: return "tree removal";
    case Op::READDIR: return "directory listing";
    default: return "?";
  }
}

constexpr size_t kLeftoverBatch = 1 << 16;

// Directories a worker's mdtest tasks keep open in all (shared among them; each task keeps at
// least ConfinedTree::kCachedDirectories). A task resolves each directory it works in beneath
// the worker's roots once (openat2) and then works on names beside it; one it does not keep is
// opened again in the timed loop, a system call more per operation than mdtest's. With 2,048
// kept, mdtest -I 1 -z 4 -b 10 -D -u (11,111 directories a task) ran its directory phases at
// 0.64-0.78x mdtest's rate on tmpfs (5 pairs). Each kept directory holds an O_PATH descriptor
// and its dentry (about half a kilobyte with the path): 65,536 is some 30 MB per worker.
constexpr uint64_t kWorkerKeptDirectories = 1 << 16;

// The order of a task's steps without a list of them (a task may have billions of items): in
// sequence, or a pseudo-random permutation (-R) in O(1) memory; the first `skip` of that order
// are passed over (a wear-out's done steps).
class StepOrder {
 public:
  StepOrder(uint64_t total, uint64_t skip, bool random, uint64_t seed)
      : total_(total), permutation_(random && total > 0 ? std::make_optional<BlockPermutation>(total, seed) : std::nullopt) {
    if (permutation_) {
      for (uint64_t i = 0; i < skip && i < total; ++i) permutation_->Next();
    }
    next_ = std::min(skip, total);
  }
  bool Next(uint64_t* step) {
    if (next_ >= total_) return false;
    const uint64_t n = next_++;
    *step = permutation_ ? permutation_->Next() : n;
    return true;
  }

 private:
  uint64_t total_, next_ = 0;
  std::optional<BlockPermutation> permutation_;
};

// The operation `op` would do on `path`, done on a name beside it, so that the timed one
// finds the code, the system call's path in the kernel and the directory warm: a thread that
// slept until the start found them cold, and its first operation took 3-10x the next (a
// directory made in 20-40 us against 5-10 us on tmpfs), which in a phase of a few operations
// is most of its time.
// In a local tree the name `<path>.iofleet-rehearsal` is made and removed again (a removal is
// rehearsed on a name made for it, a rename on one made and renamed): the tree is left as it
// was. Over NFS only what fails and changes nothing on the server is done (a creation of the
// existing parent's name, EEXIST; a lookup, a removal or rename of a missing name, ENOENT).
// Nothing is done when the name exists.
void RehearseOperation(FileSystem& fs, v1::MetadataPhase::Op op, const std::string& path) {
  using Op = v1::MetadataPhase;
  const std::string missing = path + ".iofleet-rehearsal";
  const bool nfs = IsNfsUrl(path);
  if (nfs) {
    switch (op) {
      case Op::TREE_CREATE:
      case Op::DIR_CREATE: fs.MakeDirectory(path.substr(0, path.rfind('/'))); return;
      case Op::FILE_CREATE: return;  // (a create of a directory's name is left to the server's idea)
      default: break;
    }
  }
  if (fs.Stat(missing) != ENOENT) return;
  if (nfs) {
    switch (op) {
      case Op::FILE_REMOVE: fs.Unlink(missing); return;
      case Op::DIR_REMOVE:
      case Op::TREE_REMOVE: fs.RemoveDirectory(missing); return;
      case Op::DIR_RENAME: fs.Rename(missing, missing + "-XX"); return;
      default: break;
    }
  }
  switch (op) {
    case Op::TREE_CREATE:
    case Op::DIR_CREATE:
    case Op::DIR_REMOVE:
    case Op::TREE_REMOVE:
      if (fs.MakeDirectory(missing) == 0) fs.RemoveDirectory(missing);
      return;
    case Op::DIR_RENAME:
      if (fs.MakeDirectory(missing) != 0) return;
      if (fs.Rename(missing, missing + "-XX") == 0) {
        fs.RemoveDirectory(missing + "-XX");
      } else {
        fs.RemoveDirectory(missing);
      }
      return;
    case Op::FILE_CREATE:
    case Op::FILE_REMOVE:
      if (fs.CreateFile(missing, {}, {}) == 0) fs.Unlink(missing);
      return;
    case Op::FILE_READ: {
      char byte;
      fs.ReadFile(missing, absl::MakeSpan(&byte, 1), {});
      return;
    }
    default: return;  // stat (done above), the listing
  }
}

}  // namespace

JobThreadOutcome RunMetadataTask(const JobThreadPlan& plan, const StopSignal& stop, ThreadStats* stats) {
  const v1::MetadataPhase& phase = plan.job->metadata();
  StartGate::Ticket armed(plan.start_gate);  // armed at the gate, or on an early return
  JobThreadOutcome outcome;
  if (stop.stopped()) {  // (a phase of a sequence after one that failed) makes nothing
    outcome.end = Clock::now();
    return outcome;
  }
  // Each task opens and closes its items in a descriptor table of its own, as mdtest's ranks
  // (processes) do: in one shared table the tasks' opens and closes contend (confined_path.h).
  // Everything below is opened and closed by this thread alone. Without it (a kernel before
  // 5.9) the task still runs, slower.
  if (absl::Status own = UseOwnDescriptorTable(); !own.ok()) {
    outcome.notes.push_back(absl::StrCat("tasks share the worker's descriptor table: ", own.message()));
  }
  // Item paths are built without a URL's connection arguments (?nfsport=...).
  v1::MetadataPhase located = phase;
  for (std::string& dir : *located.mutable_test_dirs()) {
    if (auto url = ParseNfsUrl(dir); url.ok()) dir = url->Location();
  }
  const MdtestTree tree(located);
  // Each task has its own connection to the test directories (libnfs contexts are per thread),
  // and keeps open the directories it works in: every one of the tree's, up to this worker's
  // share (kWorkerKeptDirectories among its tasks), and at least ConfinedTree's default.
  const size_t kept = std::max<size_t>(
      ConfinedTree::kCachedDirectories,
      std::min<uint64_t>(tree.all_directories(), kWorkerKeptDirectories / std::max(1u, plan.job->numjobs())));
  // (-a DUMMY: a file system that makes no call, mdtest's DUMMY backend.)
  absl::StatusOr<std::unique_ptr<FileSystem>> opened;
  if (phase.has_dummy()) {
    opened = std::make_unique<DummyFileSystem>(phase.dummy(), plan.rank, phase.collective_creates());
  } else {
    opened = OpenFileSystem({phase.test_dirs().begin(), phase.test_dirs().end()}, kept);
  }
  if (!opened.ok()) {
    outcome.status = opened.status();
    outcome.end = Clock::now();
    return outcome;
  }
  FileSystem& fs = **opened;
  const uint32_t rank = plan.rank;
  const uint32_t tasks = std::max(1u, phase.task_count());
  // With -N every phase but creation works on another task's items, as mdtest does.
  const uint32_t owner = tree.PhaseOwner(rank);

  // What this task does: one step per item (or per tree directory).
  // Without -u the shared tree is made and removed by task 0 alone.
  // (Tasks past the run's task count, -f/-l/-s, sit the phase out.)
  const bool tree_owner = tree.Runs(rank) && (phase.unique_dir() || rank == 0);
  const uint64_t steps = tree.TaskSteps(rank);
  // A wear-out after a stonewall skips the steps the stonewalled pass did (FirstStep).
  const uint64_t first = tree.FirstStep(rank);
  // -c: task 0 creates every task's items.
  const bool creation = phase.op() == Op::DIR_CREATE || phase.op() == Op::FILE_CREATE;
  const bool collective = phase.collective_creates() && creation;
  // Step -> (whose item, which item): the phase owner's (this task's own when creating); -c
  // covers every task's items in turn.
  // (With mdtest's directory loops, stat, read and rename cover the first items of each copy.)
  // (The run of steps the last one was in is kept: a step's item is then an addition, where
  // ItemOfStep would walk the tree from its root, dividing at every level, on every step.)
  MdtestTree::StepRun run{.first = 1, .end = 0};
  auto item_of = [&](uint64_t step) -> std::pair<uint32_t, uint64_t> {
    const uint32_t whose = collective ? static_cast<uint32_t>(step / tree.ItemCount()) : owner;
    if (collective) step %= tree.ItemCount();
    if (step < run.first || step >= run.end) run = tree.RunOfStep(step);
    return {whose, run.first_item + (step - run.first)};
  };
  // (Tree phases walk the tree in mdtest's order: MdtestTree::TreeStepDirectory.)
  StepOrder order(tree.TotalSteps(rank), first, phase.random_order() && (phase.op() == Op::DIR_STAT || phase.op() == Op::FILE_STAT),
                  phase.random_seed() ^ rank);
  // Creation writes mdtest's data (job/mdtest_data.h); a read reads -e bytes and, with -X,
  // checks them against what the item's writer wrote (with -S, as mdtest, the reader's own).
  std::optional<MdtestData> writer;
  uint32_t writer_rank = rank;  // whose data `writer` makes (-c: each file its owner's)
  if (phase.op() == Op::FILE_CREATE) writer.emplace(phase.data_packet(), phase.buffer_seed(), rank, phase.write_bytes());
  std::vector<char> read_buffer(phase.op() == Op::FILE_READ ? phase.read_bytes() : phase.verify_write() ? phase.write_bytes() : 0);
  const FileSystem::ReadOptions reading{.direct = phase.direct_io(), .range_lock = phase.range_locks()};
  std::optional<MdtestData> expected;
  if (phase.op() == Op::FILE_READ && phase.verify_read()) {
    expected.emplace(phase.data_packet(), phase.buffer_seed(), phase.shared_file() ? rank : owner, phase.read_bytes());
  }

  // The path(s) step `step` of the timed loop below works on (a rename's two names; a
  // cleanup's leftovers are named by their listing instead), written into strings the loop
  // keeps, with the item directory's part kept between steps (MdtestPaths).
  MdtestPaths paths(tree);
  auto operation_path = [&](uint64_t step, std::string* path, std::string* other) {
    if (phase.op() == Op::DIR_RENAME) {
      paths.Rename(owner, step, path, other);
    } else if (phase.op() == Op::TREE_CREATE || phase.op() == Op::TREE_REMOVE || phase.op() == Op::READDIR) {
      paths.Operation(rank, step, path);  // this task's own tree directories
    } else {
      const auto [whose, item] = item_of(step);
      paths.Operation(whose, item, path);
    }
  };
  // The directories the phase works in are opened now, untimed, in the order it visits them,
  // as many as the task keeps open (`kept`; the first kReadyPeek steps looked at): with a few
  // items per directory (mdtest -I 20) opening each would otherwise be a tenth of the phase's
  // time, and a phase of a few directories would be timed mostly opening them. Tree creation
  // makes its directories as it goes: only the first one's parent is there to open. (A phase
  // visits each directory once: readying more than are kept would close the first ones, and the
  // loop would then open every directory again, each closing the next it needs.)
  const size_t ready_directories = std::max<size_t>(1, fs.ReadyDirectories());
  constexpr uint64_t kReadyPeek = 65536;
  std::optional<uint64_t> first_step;  // rehearsed before the start
  {
    StepOrder peek = order;
    uint64_t step = 0;
    std::string last_parent;
    size_t readied = 0;
    for (uint64_t peeked = 0; readied < ready_directories && peeked < kReadyPeek && peek.Next(&step); ++peeked) {
      std::string path, other;
      operation_path(step, &path, &other);
      if (phase.op() == Op::TREE_CREATE) {
        // Its first directory's parent, the iteration directory, is made and readied together
        // (make_iteration_directories, below).
        first_step = step;
        break;
      }
      const absl::string_view parent = absl::string_view(path).substr(0, path.rfind('/'));
      if (parent != last_parent) {
        fs.Ready(path);
        last_parent = std::string(parent);
        ++readied;
      }
      if (!first_step.has_value()) first_step = step;
    }
  }
  // A tree phase names a directory per step from its place in the tree (a division per level
  // and a path written from the root down), a fifth of what a step of a tree removal costs on
  // tmpfs beside its rmdir: the first kNamedAhead steps' paths are written now, untimed (fio too
  // names a job's files before it starts), within kNamedAheadBytes; later steps name their own.
  constexpr size_t kNamedAhead = 4096;
  constexpr size_t kNamedAheadBytes = 512 << 10;
  std::vector<std::string> named_ahead;  // the paths of the steps `order` gives first, in turn
  if (phase.op() == Op::TREE_CREATE || phase.op() == Op::TREE_REMOVE || phase.op() == Op::READDIR) {
    StepOrder peek = order;
    uint64_t step = 0;
    size_t bytes = 0;
    std::string unused;
    while (named_ahead.size() < kNamedAhead && bytes < kNamedAheadBytes && peek.Next(&step)) {
      named_ahead.emplace_back();
      operation_path(step, &named_ahead.back(), &unused);
      bytes += named_ahead.back().size();
    }
  }
  // Tree creation's iteration directory is set-up, not measured (mdtest makes it before the
  // timer), and its first directory's parent is readied with it: now, before the gate (on ext4
  // a first mkdir took milliseconds, and made after the gate, a worker began its phase that late),
  // or, after a tree removal of the same directories in the sequence (a task count sweep), once
  // the gate has opened and that removal has ended in every task: made or opened before, the
  // directory could be removed under this task, which would then make its tree in a directory
  // already gone (1 run in 20 of -f 1 -l 2). (One per copy of the tree with directory loops.)
  auto make_iteration_directories = [&]() -> absl::Status {
    if (phase.op() != Op::TREE_CREATE || !tree.Runs(rank)) return absl::OkStatus();
    for (uint64_t loop = 0; loop < tree.loops(); ++loop) {
      const std::string iteration = tree.IterationDirectory(rank, loop);
      int err = fs.MakeDirectory(iteration);
      // The one directory of the tree that may already exist: it must be a real directory, not
      // a symlink (every later call refuses to pass one; this says so before the timer starts).
      // Everything below it is made by this run (mkdir fails on anything already there).
      struct stat st;
      if (err == EEXIST && !IsNfsUrl(iteration) && ConfinedTree().Stat(iteration, &st) == 0 && !S_ISDIR(st.st_mode)) err = ENOTDIR;
      if (err != 0 && err != EEXIST) {
        const std::string why = err == ENOTDIR ? "it exists and is not a directory: a symlink is refused" : ConfinedPathReason(err);
        return ErrnoStatus(err, absl::StrCat("mkdir ", iteration, why.empty() ? "" : " (" + why + ")"));
      }
    }
    if (first_step.has_value()) {
      std::string path, other;
      operation_path(*first_step, &path, &other);
      fs.Ready(path);
    }
    return absl::OkStatus();
  };
  if (!plan.iteration_directories_after_gate) {
    if (absl::Status made = make_iteration_directories(); !made.ok()) {
      outcome.status = made;
      outcome.end = Clock::now();
      return outcome;
    }
  }
  // --savePerOpDataCSV: each task of a file phase writes its own file, made before its clock
  // starts (mdtest opens it before its timer). (Not with -c: the controller refuses the two.)
  std::unique_ptr<PerOperationCsv> per_op;
  if (!phase.per_op_csv().empty() && !phase.cleanup() && tree.Runs(rank)) {
    if (const std::string path = PerOpCsvPath(phase.per_op_csv(), phase.op(), rank); !path.empty()) {
      const double bytes = phase.op() == Op::FILE_STAT ? 1
                           : phase.op() == Op::FILE_READ ? std::max<uint64_t>(1, phase.read_bytes())
                                                         : std::max<uint64_t>(1, phase.write_bytes());
      // (A wear-out adds its lines to its stonewalled pass's.)
      auto csv = PerOperationCsv::Create(path, bytes, /*append=*/phase.task_first_step_size() > 0);
      if (!csv.ok()) {
        outcome.status = csv.status();
        outcome.end = Clock::now();
        return outcome;
      }
      per_op = *std::move(csv);
    }
  }
  // The first samples' histogram pages, committed now rather than by the first timed operation.
  stats->directions[kMetaIndex].Prefault(100, 1'000'000'000);
  const std::optional<Clock::time_point> gate_opened = armed.Wait(plan.start, /*meets=*/true);
  if (!gate_opened.has_value()) {  // stopped before it started
    outcome.end = Clock::now();
    return outcome;
  }
  const Clock::time_point start = *gate_opened;
  if (plan.iteration_directories_after_gate) {
    if (absl::Status made = make_iteration_directories(); !made.ok()) {
      outcome.status = made;
      armed.Meet(stop);  // (the others meet it there, and go on to find nothing to wait for)
      outcome.end = Clock::now();
      return outcome;
    }
  }
  // The last 2 ms before the start instant are not slept: a sleeping thread wakes tens to
  // hundreds of microseconds late (on a 2-vCPU VM with the default timer slack: 80 us most
  // times, 700 us one time in seven), by a different amount on each worker, and a phase of a few
  // directories lasts less than that (mdtest's ranks leave their barrier spinning, within
  // microseconds of each other). They spin on the clock, rehearsing the first operation beside
  // its name (RehearseOperation) every kRehearsalPace up to the instant.
  constexpr auto kSpin = std::chrono::milliseconds(2);
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // this thread's sleeps end when asked (default: up to 50 us later)
  // Each task also waits and works on a CPU of its own (the rank-th of those it may run on)
  // until its phase is done, as mpirun binds mdtest's ranks to cores. Tasks that sleep until
  // the same instant are otherwise woken by one timer interrupt onto one CPU while another
  // idles, and the second waits behind the first's spin until a scheduler tick moves it (70-230
  // us late in half of a tree removal's starts on a 2-vCPU VM); unbound tasks that the
  // scheduler moves about lose 4-11% of the rate of ext4's directory and file phases (removal,
  // rename, creation: bench/mdtest_bench.sh, 9 pairs); and unbinding in the phase costs a
  // call of 4-11 us, a fifth of a tree removal's five operations. (The task of a sequence of
  // phases is held on its CPU from the first to the last by WorkerRun: then this pins nothing.)
  std::optional<CpuPin> pin = CpuPin::Rank(rank);
  bool local = false;  // the rehearsals' names on this host's storage (see below)
  if (first_step.has_value()) {
    std::string path, other;
    operation_path(*first_step, &path, &other);
    local = fs.OnLocalStorage(path);
  }
  if (stop.SleepUntil(start - kSpin)) {
    // Rehearsals go on to the instant, not only at the spin's beginning: a first operation
    // that comes after the CPU spun in user space for 2 ms is nearly as slow as one after a
    // sleep (a C program on this 2-vCPU VM, medians of 15: five rmdirs on tmpfs after a 5 ms
    // sleep took 8.4-9.4 us for the first and 25 us in all after 16 rehearsals and then 2 ms of
    // spinning, as this was; 4.4 us and 20.5 us rehearsing every 20 us to the instant). mdtest's
    // ranks come to a phase straight from the last one's system calls.
    // On ext4 (a loop device) too, where a rehearsal takes about 100 us: five mkdirs of a tree
    // creation, medians of 15 runs, went 18.3k/s -> 20.6k/s (12.6k/s with no rehearsal).
    // At most kRehearsals (one per kRehearsalPace: 2 ms / 20 us), each making and removing a
    // name (a bounded churn). Where an operation may cost a server a request (NFS, FUSE, any
    // file system not known to be on this host) one slower than kCheap, a network round trip,
    // is done twice at most, so that a thousand tasks do not send the server a burst of
    // lookups before every phase.
    constexpr int kRehearsals = 128;
    constexpr auto kRehearsalPace = std::chrono::microseconds(20);
    constexpr auto kCheap = std::chrono::microseconds(20);
    // Until kYieldBefore the instant, the spin gives its CPU to any thread waiting for it at
    // each turn: the instant's messages travel by threads of this host (a release to the other
    // workers, the controller's when it runs here, this worker's gRPC threads), and one woken
    // on this CPU would otherwise wait behind the spin (a 2-vCPU VM, a worker per task: one
    // worker's release came 2.1 ms after the other's, its phase starting 0.45 ms late).
    constexpr auto kYieldBefore = std::chrono::microseconds(30);
    Clock::duration rehearsal{0};
    Clock::time_point rehearsed{};
    int rehearsals = 0;
    for (Clock::time_point now = Clock::now(); now < start && !stop.stopped(); now = Clock::now()) {
      if (start - now > kYieldBefore) std::this_thread::yield();
      if (!first_step.has_value() || now + 2 * rehearsal >= start) continue;  // one more might run past the instant
      if (rehearsals >= kRehearsals || (!local && rehearsals >= 2 && rehearsal > kCheap)) continue;
      if (rehearsals > 0 && now - rehearsed < kRehearsalPace) continue;
      ++rehearsals;
      rehearsed = now;
      std::string path, other;
      operation_path(*first_step, &path, &other);  // (made anew, as the timed one is)
      RehearseOperation(fs, phase.op(), path);
      rehearsal = Clock::now() - now;
    }
  }
  // The worker's tasks leave together (StartGate::Meet), from when the last of them got here.
  armed.Meet(stop);
  if (!stop.stopped()) outcome.start_late_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  // Cleanup after an interruption removes what is there (found by listing), not every item
  // the phase would have made: a run stopped early may have made few of millions.
  // The listing goes in batches of at most kLeftoverBatch names, so a tree of millions left by
  // an interruption costs bounded memory; each batch is removed before the next is listed.
  std::vector<std::string> leftovers;
  const bool listed_cleanup = phase.cleanup() && (phase.op() == Op::FILE_REMOVE || phase.op() == Op::DIR_REMOVE) && steps > 0;
  auto list_leftovers = [&] {
    leftovers.clear();
    const bool file = phase.op() == Op::FILE_REMOVE;
    for (uint64_t d = 0; d < tree.all_directories() && leftovers.size() < kLeftoverBatch; ++d) {
      if (tree.HoldsItems(d)) fs.ListDirectory(tree.ItemDirectoryPath(owner, d), tree.ItemPrefix(owner, file), &leftovers, kLeftoverBatch);
    }
    order = StepOrder(leftovers.size(), 0, false, 0);
    return leftovers.size() == kLeftoverBatch;  // a full batch: list again after removing it
  };
  bool more_leftovers = listed_cleanup && list_leftovers();
  const uint64_t start_ns = NowNs();
  const uint64_t stonewall_at = phase.stonewall_ns() ? start_ns + phase.stonewall_ns() : UINT64_MAX;
  uint64_t done = 0, done_before_batch = 0;
  std::string path, other;  // the step's; their capacity kept from step to step
  uint64_t taken = 0;       // steps `order` gave so far
  for (uint64_t step = 0;;) {
    if (!order.Next(&step)) {
      // Cleanup: the next batch of what is left, as long as the last one made progress.
      if (!more_leftovers || done == done_before_batch || stop.stopped()) break;
      done_before_batch = done;
      more_leftovers = list_leftovers();
      continue;
    }
    const uint64_t nth = taken++;
    if (stop.stopped()) break;
    const uint64_t begin = NowNs();
    if (begin >= stonewall_at) {
      outcome.stonewalled = true;
      break;
    }
    int error = 0;
    uint64_t bytes = 0;     // moved by the operation
    bool mismatch = false;  // -X / --verify-write: the data read back is not what was written
    // The item phases' item (whose, which); tree phases and the listing count directories.
    const auto [whose, item] = item_of(step);
    const std::string* step_path = &path;
    if (nth < named_ahead.size()) {
      step_path = &named_ahead[nth];
    } else if (leftovers.empty()) {
      operation_path(step, &path, &other);
    } else {
      path = leftovers[step];
    }
    switch (phase.op()) {
      case Op::TREE_CREATE: error = fs.MakeDirectory(*step_path); break;
      case Op::TREE_REMOVE: error = fs.RemoveDirectory(*step_path); break;
      case Op::READDIR: {
        const int64_t n = fs.ListDirectory(*step_path, "");
        error = n < 0 ? static_cast<int>(-n) : 0;
        break;
      }
      case Op::DIR_CREATE: error = fs.MakeDirectory(path); break;
      case Op::DIR_STAT: error = fs.Stat(path); break;
      case Op::DIR_RENAME: error = fs.Rename(path, other); break;
      case Op::DIR_REMOVE: error = fs.RemoveDirectory(path); break;
      case Op::FILE_CREATE: {
        // -c: each file holds its owner's data, as in mdtest, where every task writes its own
        // files once task 0 has made them.
        if (whose != writer_rank) {
          writer.emplace(phase.data_packet(), phase.buffer_seed(), whose, phase.write_bytes());
          writer_rank = whose;
        }
        const std::vector<char>& data = writer->ForItem(tree.ItemNumber(item));
        bytes = data.size();
        // --verify-write: read back at once through the same open file (timed, as in mdtest)
        // and checked.
        const bool read_back = phase.verify_write() && !data.empty();
        error = fs.CreateFile(path, data,
                              {.sync = phase.sync_writes(),
                               .node = phase.use_mknod(),
                               .shared = phase.shared_file(),
                               .direct = phase.direct_io(),
                               .range_lock = phase.range_locks(),
                               .read_back = read_back ? absl::MakeSpan(read_buffer) : absl::Span<char>()});
        if (error == 0 && read_back) mismatch = !writer->Matches(tree.ItemNumber(item), read_buffer);
        break;
      }
      case Op::FILE_STAT: error = fs.Stat(path); break;
      case Op::FILE_READ:
        error = fs.ReadFile(path, absl::MakeSpan(read_buffer), reading);
        bytes = read_buffer.size();
        mismatch = error == 0 && expected.has_value() && !expected->Matches(tree.ItemNumber(item), read_buffer);
        break;
      case Op::FILE_REMOVE: error = fs.Unlink(path); break;
      default: error = EINVAL; break;
    }
    // Cleaning up after an interruption: what is already gone is fine.
    if (phase.cleanup() && error == ENOENT) error = 0;
    const uint64_t end = NowNs();
    if (per_op != nullptr) {
      per_op->Add(static_cast<double>(begin - start_ns + phase.per_op_time_offset_ns()) * 1e-9, static_cast<double>(end - begin) * 1e-9);
    }
    // The slowest operations are named by task and item (the collector rebuilds the path).
    // A verification mismatch is counted among the phase's errors (mdtest counts it and goes on).
    stats->directions[kMetaIndex].Record(begin, begin, end, false, error ? 0 : bytes, error != 0 || mismatch,
                                         leftovers.empty() ? RequestIdentity{.offset = item, .file = whose, .tracked = true}
                                                           : RequestIdentity{});
    if (error != 0) {
      // mdtest goes past a failed stat, removal, rename or directory creation, printing a WARNING
      // and counting the item (warn_failed_items); so does the task, naming the first of them.
      // A call the confinement refused (a symlink or '..' in the tree) still ends the phase.
      if (phase.warn_failed_items() && !phase.cleanup() && MdtestWarnsAndGoesOn(phase.op()) && error != EXDEV && error != ELOOP) {
        if (++outcome.item_failures <= kMdtestNamedFailuresPerTask) {
          const bool tree_phase = phase.op() == Op::TREE_CREATE || phase.op() == Op::TREE_REMOVE;
          const bool top = tree_phase && tree.TreeStepDirectory(step) % tree.directory_count() == 0;
          const uint32_t level = tree_phase ? 0 : tree.Level(tree.DirectoryOfItem(item));
          outcome.item_warnings.push_back(MdtestWarning(phase.op(), rank, *step_path, other, top, level));
        }
        ++done;
        continue;
      }
      // Otherwise the first failure ends the task's phase, naming it (cleanup goes on).
      if (outcome.status.ok()) {
        std::string why = ConfinedPathReason(error);
        if (why.empty() && error == EINVAL && phase.direct_io() && (phase.op() == Op::FILE_CREATE || phase.op() == Op::FILE_READ)) {
          why = absl::StrCat("--posix.odirect: the file system refuses O_DIRECT, or -w ", phase.write_bytes(), " / -e ", phase.read_bytes(),
                             " is not a multiple of its block size");
        }
        outcome.status = ErrnoStatus(error, absl::StrCat(OpName(phase.op()), " of ", *step_path, other.empty() ? "" : " to " + other,
                                                                 " (task ", rank, why.empty() ? "" : "; " + why, ")"));
      }
      if (!phase.cleanup()) break;
      continue;
    }
    ++done;
  }
  // -Y: mdtest's sync after the phase, inside its time.
  if (phase.sync_after_phase() && outcome.status.ok()) fs.Sync();
  outcome.end = Clock::now();
  pin.reset();
  outcome.items = done;
  // What is left of the per-operation file is written after the clock (mdtest's task 0 writes
  // its rest before its timer stops, the other tasks after). A file that could not be written
  // whole fails the phase, as one whose header could not be written does (mdtest fails on that
  // one and says nothing of later write errors): the run stops with it named.
  if (per_op != nullptr) {
    if (absl::Status closed = per_op->Close(); !closed.ok() && outcome.status.ok()) outcome.status = closed;
  }
  // What follows waits for the worker's other tasks to end the phase (StartGate::Finish).
  armed.Finish(stop);

  // Item accounting, after the clock: what creation made must be there (mdtest assumes it).
  // (-a DUMMY makes nothing.)
  const bool accounted = !phase.has_dummy();
  if (outcome.status.ok() && creation && steps > 0 && accounted) {
    const bool file = phase.op() == Op::FILE_CREATE;
    uint64_t present = 0;
    const uint32_t owners = collective ? tasks : 1;
    for (uint32_t o = 0; o < owners; ++o) {
      const uint32_t whose = collective ? o : rank;
      for (uint64_t d = 0; d < tree.all_directories() && outcome.status.ok(); ++d) {
        if (!tree.HoldsItems(d)) continue;
        const std::string directory = tree.ItemDirectoryPath(whose, d);
        const int64_t n = fs.ListDirectory(directory, tree.ItemPrefix(whose, file));
        if (n > 0) present += static_cast<uint64_t>(n);
        if (n < 0) {
          const std::string why = ConfinedPathReason(static_cast<int>(-n));
          outcome.status = ErrnoStatus(static_cast<int>(-n), absl::StrCat(OpName(phase.op()), ": listing ", directory, " to count what task ",
                                                                                   rank, " made", why.empty() ? "" : ": " + why));
        }
      }
    }
    if (!outcome.status.ok()) return outcome;
    // A wear-out adds to what the stonewalled creation made; with -S every task makes the same
    // names, so others may have made more by now.
    // A creation that failed and was gone past (warn_failed_items; a name already there, say)
    // may or may not have left its name: then only the ones that succeeded must be there.
    const uint64_t expected = (collective ? 0 : first) + done - outcome.item_failures;
    if (phase.shared_file() || outcome.item_failures > 0 ? present < expected : present != expected) {
      outcome.status = absl::DataLossError(absl::StrCat(OpName(phase.op()), ": task ", rank, " created ", expected, " items but ", present,
                                                        " are present in its tree under ", tree.IterationDirectory(rank)));
    }
  }
  if (outcome.status.ok() && phase.op() == Op::TREE_CREATE && tree_owner && !outcome.stonewalled && accounted) {
    // The whole tree must be there: 1 + b + ... + b^depth directories.
    // (in every copy with mdtest's directory loops).
    uint64_t present = 0;
    for (uint64_t d = 0; d < tree.all_directories(); ++d) present += fs.Stat(tree.DirectoryPath(rank, d)) == 0;
    if (present != tree.all_directories()) {
      outcome.status = absl::DataLossError(absl::StrCat("tree creation: task ", rank, " made ", done, " directories but ", present, " of ",
                                                        tree.all_directories(), " are present under ", tree.IterationDirectory(rank)));
    }
  }
  if (phase.op() == Op::TREE_REMOVE && tree_owner && outcome.status.ok()) {
    // The shared iteration directories go once the last tree in them is gone, and so does the
    // test directory the run made (mdtest removes the one it made): each owner tries after its
    // own tree, and the last one's removal is the one that succeeds.
    // (Whether each went, or is left, tells the controller which are left once every owner tried:
    // mdtest warns of one left, as after a tree directory it could not remove.)
    for (uint64_t loop = 0; loop < tree.loops(); ++loop) {
      const std::string iteration = tree.IterationDirectory(rank, loop);
      const int error = fs.RemoveDirectory(iteration);
      auto& named = error == 0 || error == ENOENT ? outcome.iteration_directories_gone : outcome.iteration_directories_left;
      if (named.size() < kMdtestNamedFailuresPerTask) named.push_back(iteration);  // (-n/-I copies: one a copy)
    }
    const uint32_t mine = rank % static_cast<uint32_t>(phase.test_dirs_size());
    if (std::find(phase.remove_test_dirs().begin(), phase.remove_test_dirs().end(), mine) != phase.remove_test_dirs().end()) {
      const std::string& test_dir = located.test_dirs(static_cast<int>(mine));  // (as the tree's paths name it)
      const int error = fs.RemoveDirectory(test_dir);
      if (error != 0 && error != ENOTEMPTY && error != EEXIST && error != ENOENT) {
        const std::string why = ConfinedPathReason(error);
        outcome.notes.push_back(absl::StrCat("cannot remove the test directory ", test_dir, " this run made: ", std::strerror(error),
                                             why.empty() ? "" : " (" + why + ")"));
      }
    }
  }
  return outcome;
}

}  // namespace iofleet
