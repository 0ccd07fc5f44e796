// What of fio's engine and option space iofleet does not do, and why: fio's IO engines that
// are not iofleet's (RDMA, NVMe passthrough, object stores...) and the options that only mean
// something to hardware or engines iofleet does not drive. The job-file parser refuses them
// with these reasons, so a user learns what is missing instead of reading "unknown option".
#ifndef IOFLEET_JOB_FIO_REFUSALS_H_
#define IOFLEET_JOB_FIO_REFUSALS_H_

#include "absl/strings/string_view.h"

namespace iofleet {

// Why fio's ioengine `name` is not available in iofleet ("RDMA transfers between hosts"), or
// nullptr when fio has no such engine either.
const char* FioEngineRefusal(absl::string_view name);

// Why option `name` (one fio has only for particular hardware or for an engine iofleet does
// not have) cannot be run, or nullptr.
const char* FioHardwareOptionRefusal(absl::string_view name);

}  // namespace iofleet

#endif  // IOFLEET_JOB_FIO_REFUSALS_H_
