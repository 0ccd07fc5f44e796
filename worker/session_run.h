// What a session forwards to its controller for one run: a worker's own run (WorkerRun), or a
// relay's merge of the runs of the workers behind it. The session renews its lease on every
// controller message and hands its reports on as they come.
#ifndef IOFLEET_WORKER_SESSION_RUN_H_
#define IOFLEET_WORKER_SESSION_RUN_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "proto/worker_service.pb.h"

namespace iofleet {

// The lease a run's prepare asks for (lease_ns; 0: the default, 5 s): the worker's, a relay's
// and a simulated worker's runs all stop when the controller is silent this long.
inline std::chrono::nanoseconds RequestedLease(const v1::PrepareRequest& request) {
  return request.lease_ns() > 0 ? std::chrono::nanoseconds(request.lease_ns()) : std::chrono::seconds(5);
}

// Why a stop request stops a run: LEASE_EXPIRED from a relay whose own controller went silent,
// else REQUESTED (a cause this build does not know, from a newer controller, is a plain stop).
inline v1::StopCause RequestedStopCause(const v1::StopRequest& request) {
  return request.cause() == v1::STOP_CAUSE_LEASE_EXPIRED ? v1::STOP_CAUSE_LEASE_EXPIRED : v1::STOP_CAUSE_REQUESTED;
}

class SessionRun {
 public:
  virtual ~SessionRun() = default;

  virtual const std::string& run_id() const = 0;
  // The controller was heard: the run goes on for another lease().
  virtual void RenewLease() = 0;
  virtual std::chrono::nanoseconds lease() const = 0;

  // Hands the reports to `deliver` as they are produced, all that are ready at a time, until all
  // are delivered (kAll), `deliver` says the reader is gone (kReaderGone), or StopDelivering was
  // called or `stop` holds (kStopped; `stop` is checked at least once a second, StopDelivering
  // wakes it at once).
  enum class Delivered { kAll, kReaderGone, kStopped };
  virtual Delivered DeliverReports(const std::function<bool(std::vector<v1::IntervalReport>)>& deliver,
                                   const std::function<bool()>& stop) = 0;
  virtual void StopDelivering() = 0;
  // Sent after every report, before the run's end (a relay's account of its workers).
  virtual std::optional<v1::RelaySummary> Summary() { return std::nullopt; }
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_SESSION_RUN_H_
