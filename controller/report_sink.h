#ifndef IOFLEET_CONTROLLER_REPORT_SINK_H_
#define IOFLEET_CONTROLLER_REPORT_SINK_H_

#include <cstddef>
#include <vector>

#include "proto/worker_service.pb.h"

namespace iofleet {

// Where a phase's reports go: the run's aggregator, or a relay's merge (controller/relay.h).
class ReportSink {
 public:
  virtual ~ReportSink() = default;
  // What one message of worker `worker` (an index into the session) carried, in its order.
  virtual void Add(size_t worker, std::vector<v1::IntervalReport> reports) = 0;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_REPORT_SINK_H_
