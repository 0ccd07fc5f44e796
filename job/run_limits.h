// The bounds every run is held to — one set of rules with two checkers: the controller applies
// them when it reads its flags and job definition, and each worker applies them again to every
// request it receives (a request may come from anything that holds the token), so a value out
// of range is refused with a message naming it and the limit, never acted on.
#ifndef IOFLEET_JOB_RUN_LIMITS_H_
#define IOFLEET_JOB_RUN_LIMITS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/job.pb.h"

namespace iofleet {

// Interval reports: at least 10 ms (a worker cuts one per interval and job), at most 1 h.
inline constexpr uint64_t kMinIntervalNs = 10'000'000;
inline constexpr uint64_t kMaxIntervalNs = 3'600'000'000'000;
// Leases: long enough to survive a busy controller, short enough that IO stops soon after
// the controller is gone.
inline constexpr uint64_t kMinLeaseNs = 500'000'000;
inline constexpr uint64_t kMaxLeaseNs = 600'000'000'000;
// Interval reports one run may make a worker produce per second (jobs / interval): the worker
// cuts every job every interval, and a controller has to read them all.
inline constexpr uint64_t kMaxReportsPerSecond = 10'000;
// Reports a worker keeps for a controller that does not read them; past that it stops the run.
inline constexpr size_t kMaxQueuedReports = 65'536;
// A start instant may lie this far ahead of the worker's clock...
inline constexpr int64_t kMaxStartLeadNs = 300'000'000'000;
// ...or this far behind it: a start that arrives late (a slow network, a clock a little off)
// begins at once, its intervals still counted from the common instant, so it ends with the
// others. Further in the past the worker refuses it rather than replay the missed intervals.
inline constexpr int64_t kMaxStartLagNs = 10'000'000'000;
inline constexpr size_t kMaxRunIdLength = 128;
inline constexpr uint32_t kMaxWorkerCount = 1 << 20;
// Every duration in a job (runtime, startdelay, ramp_time, thinktime, delays, stonewall):
// at most a year, so sums of them with clock readings never overflow.
inline constexpr uint64_t kMaxDurationNs = 365ull * 24 * 3600 * 1'000'000'000;
// Threads one worker runs for one run (the sum of numjobs over all jobs and phases), as fio's
// limit on jobs.
inline constexpr uint64_t kMaxThreadsPerRun = 4096;
inline constexpr uint32_t kMaxFilesPerThread = 65536;
// CPU and NUMA node numbers (cpus_allowed, numa_*): Linux's CONFIG_NR_CPUS and MAX_NUMNODES
// ceilings.
inline constexpr uint32_t kMaxCpu = 8192;
inline constexpr uint32_t kMaxNumaNode = 1024;
// Block indices in random_distribution=sequence:...
inline constexpr int kMaxSequenceLength = 65536;
// zonemode=zbd: fio's ZBD_MAX_OPEN_ZONES (zones written at once per file).
inline constexpr uint32_t kMaxOpenZones = 4096;
// zonemode=zbd: zones a worker emulates for one file (each is a few bytes of bookkeeping; a
// 1 MiB zone size over 64 TiB is this many).
inline constexpr uint64_t kMaxEmulatedZones = uint64_t{1} << 26;

// fio verify_backlog: writes held for read-back between checks (each a few bytes).
inline constexpr uint32_t kMaxVerifyBacklog = 1u << 24;
// fio verify_async: checking threads beside each IO thread.
inline constexpr uint32_t kMaxVerifyAsyncThreads = 64;
// mdtest -a DUMMY's --dummy.delay-* (microseconds, each operation's): a task sleeps through
// them between its checks of the run's stop, so a second at most.
inline constexpr uint64_t kMaxDummyDelayUs = 1'000'000;
// fio verify_dump: bad blocks a thread writes out (more are counted, not dumped).
inline constexpr uint32_t kMaxVerifyDumps = 16;
// fio ignore_error: errnos per list, and the bound on an errno's value.
inline constexpr uint32_t kMaxIgnoredErrors = 64;
inline constexpr int kMaxErrno = 4096;
// fio sprandom: regions of the physical space.
inline constexpr uint32_t kMaxSprandomRegions = 1u << 20;
inline constexpr uint64_t kMaxBlockSize = 1ull << 30;
inline constexpr size_t kMaxNameLength = 255;   // a file-name component
inline constexpr size_t kMaxPathLength = 4096;  // PATH_MAX
// mdtest: items per task, tree directories, and bytes written/read per file.
inline constexpr uint64_t kMaxItemsPerTask = 1ull << 40;
inline constexpr uint64_t kMaxTreeDirectories = 1ull << 32;
// Levels of an mdtest tree (-z): each adds at least 14 bytes ("/mdtest_tree.0") to the deepest
// path, so much deeper trees have paths no system call takes (a chain of billions of levels is
// few enough directories, but a worker would build its deepest path in memory first).
inline constexpr uint32_t kMaxTreeDepth = 256;
static_assert(kMaxTreeDepth * 14 <= kMaxPathLength);
inline constexpr uint64_t kMaxMetadataIoBytes = 1ull << 30;
// What a worker lets one run make it allocate, unless started with --max-run-memory.
inline constexpr uint64_t kDefaultMaxRunMemory = 4ull << 30;
// Local workers a controller starts on its own host when no hosts are given (one process each).
inline constexpr int kMaxLocalWorkers = 64;

// kInvalidArgument "<what> <value> is below the minimum of ..." / "above the maximum of ...".
absl::Status CheckIntervalNs(uint64_t ns, absl::string_view what = "interval");
// --local-workers N, the same for run, mdtest and compare: 1 to kMaxLocalWorkers.
absl::StatusOr<int> ParseLocalWorkers(absl::string_view value);
absl::Status CheckLeaseNs(uint64_t ns, absl::string_view what = "lease");
// `start_unix_ns` against the worker's wall clock `now_unix_ns`: OK (possibly late, within
// kMaxStartLagNs), or kInvalidArgument saying how far off it is.
absl::Status CheckStartInstant(int64_t start_unix_ns, int64_t now_unix_ns);
absl::Status CheckRunId(absl::string_view run_id, absl::string_view field = "run_id");
// kInvalidArgument when `jobs` jobs cut every `interval_ns` exceed kMaxReportsPerSecond.
absl::Status CheckReportRate(size_t jobs, uint64_t interval_ns);
absl::Status CheckWorkerPlace(uint32_t worker_index, uint32_t worker_count);

// The memory a worker allocates for `spec` before and during the run: per-thread statistics,
// IO buffers, write tracking for do_verify, mdtest data buffers. An upper estimate, checked
// before anything is allocated.
uint64_t EstimateRunMemory(const v1::RunSpec& spec);
// kResourceExhausted naming the estimate (EstimateRunMemory, or a sum of them), the limit and
// how to change it, when over.
absl::Status CheckRunMemory(uint64_t estimate, uint64_t limit);

}  // namespace iofleet

#endif  // IOFLEET_JOB_RUN_LIMITS_H_
