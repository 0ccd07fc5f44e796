// What a job's rw= does, asked one way everywhere: which data directions it issues, whether
// offsets are random, whether it mixes reads and writes. (A new rw mode is added here, not in
// every `rw == SEQ_READ || ...` of the code base.)
#ifndef IOFLEET_JOB_RW_MODE_H_
#define IOFLEET_JOB_RW_MODE_H_

#include <cstdint>

#include "proto/job.pb.h"

namespace iofleet {

// fio's data directions, in the order of its per-direction options (bs=read,write,trim) and of
// the reports' read/write/trim.
enum class DataDirection : uint8_t { kRead = 0, kWrite = 1, kTrim = 2 };

inline bool ReadsData(v1::ReadWrite rw) {
  return rw == v1::SEQ_READ || rw == v1::RAND_READ || rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED;
}
inline bool WritesData(v1::ReadWrite rw) {
  return rw == v1::SEQ_WRITE || rw == v1::RAND_WRITE || rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED;
}
inline bool TrimsData(v1::ReadWrite rw) { return rw == v1::SEQ_TRIM || rw == v1::RAND_TRIM; }
inline bool RandomAccess(v1::ReadWrite rw) {
  return rw == v1::RAND_READ || rw == v1::RAND_WRITE || rw == v1::RAND_MIXED || rw == v1::RAND_TRIM;
}
inline bool MixesReadsAndWrites(v1::ReadWrite rw) { return rw == v1::SEQ_MIXED || rw == v1::RAND_MIXED; }
// Whether the job's files must hold data before it starts (it reads or trims them).
inline bool NeedsExistingData(v1::ReadWrite rw) { return ReadsData(rw) || TrimsData(rw); }

}  // namespace iofleet

#endif  // IOFLEET_JOB_RW_MODE_H_
