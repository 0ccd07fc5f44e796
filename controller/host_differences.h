// Finds where workers differ in the facts that change results (kernel, CPU, memory, and per
// target path: filesystem, NFS options, FUSE daemon, device queue settings) and writes, on
// each worker that departs from the most common value, what differs — "scheduler of /mnt/x:
// kyber (others: none)" — so the one slow host explains itself next to the per-worker table.
#ifndef IOFLEET_CONTROLLER_HOST_DIFFERENCES_H_
#define IOFLEET_CONTROLLER_HOST_DIFFERENCES_H_

#include "proto/report.pb.h"

namespace iofleet {

// Fills WorkerInfo.differs for every worker of `report`.
void MarkHostDifferences(v1::RunReport* report);

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_HOST_DIFFERENCES_H_
