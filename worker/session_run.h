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

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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

  // RunSpec.jobs_released: `arrived(job, not_run)` once the run's tasks have all arrived at
  // job `job`'s gate, in order (called on a thread of the run's that is not a task's: a task
  // works in a descriptor table of its own, without the process's sockets). Arrivals before the
  // watcher is set are passed to it once it is; none after it is unset (null).
  using ArrivalWatcher = std::function<void(uint32_t job, bool not_run)>;
  virtual void WatchArrivals(ArrivalWatcher arrived) { (void)arrived; }
  // The controller's release of job `job` (every worker arrived): it starts at
  // `start_unix_ns` (validated as a start instant already).
  virtual absl::Status Release(uint32_t job, int64_t start_unix_ns) {
    (void)start_unix_ns;
    return absl::FailedPreconditionError(absl::StrCat("run ", run_id(), ": job ", job, " cannot be released here (a relay does not pass releases on)"));
  }
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_SESSION_RUN_H_
