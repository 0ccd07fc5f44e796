#ifndef IOFLEET_JOB_MDTEST_WARNINGS_H_
#define IOFLEET_JOB_MDTEST_WARNINGS_H_

// mdtest 4's WARNING lines for an operation on an item that failed and was gone past, in its
// words and with its paths: the worker names its tasks' failures with them, the controller
// prints them (and says how many went unnamed).

#include <cstdint>
#include <string>

#include "proto/job.pb.h"

namespace iofleet {

// A task names at most this many of its failed operations in a phase (each at most a few
// hundred bytes of path in its final report), and counts the rest.
inline constexpr uint64_t kMdtestNamedFailuresPerTask = 100;
// And the controller keeps at most this many of one worker's tasks' (or a relay's workers'),
// whatever a worker sends.
inline constexpr uint64_t kMdtestNamedFailuresPerWorker = 1000;

// Whether a failed `op` is one mdtest 4 warns of and goes past (mdtest.c's WARNF), rather than
// one it aborts on: a file's creation (and write) and read open it through its POSIX backend,
// which fails the run (ERRF), and so does iofleet.
bool MdtestWarnsAndGoesOn(v1::MetadataPhase::Op op);

// An item's path as mdtest names one it makes or removes: its recursion (create_remove_items)
// appends each tree directory below the top as "/<name>/" and the item as "/<name>", so each of
// the last `level` separators (those below the tree's top directory but the first) is doubled:
// "<top>/mdtest_tree.0.1//mdtest_tree.0.3//dir.mdtest.0.7". (Its stat and rename name items
// with single separators.)
std::string MdtestRecursionPath(const std::string& path, uint32_t level);

// mdtest's warning for a failed `op` on `path` (a rename's: to `other`) by task `rank`, without
// the "WARNING: " prefix, in its words (mdtest.c; its POSIX backend's for a removed file). One
// failure, one entry: a rename's two lines (its backend's, then mdtest's own) are separated by a
// newline, each to be printed with the prefix. A tree directory is named as mdtest names it,
// with a trailing slash; its tree's top directory (`top`) in words of its own. An item made or
// removed `level` directories below its tree's top is named as mdtest's recursion names it.
// Empty for an operation mdtest does not warn of.
std::string MdtestWarning(v1::MetadataPhase::Op op, uint32_t rank, const std::string& path, const std::string& other, bool top,
                          uint32_t level);

}  // namespace iofleet

#endif  // IOFLEET_JOB_MDTEST_WARNINGS_H_
