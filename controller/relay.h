// iofleet relay: one session towards the controller that stands for many workers. Workers dial
// the relay (iofleet-worker --controller RELAY) exactly as they would a controller; the relay
// dials the controller as a worker would (worker/controller_dialer.h) and says in its hello how
// many workers it stands for, so the controller gives it that many consecutive worker indices.
// Each command of the controller's is carried out on the relay's own session with its workers
// (controller/cluster_session.h, the code the controller itself runs), and what they report is
// merged: one report per job and interval, the exact bucket-wise sum of the workers' (so the
// controller's cluster percentiles are those it would compute from every worker), and at the
// end one summary per worker (ops, bytes, errors, p50, p99, late intervals, loss). Relays stack:
// a relay behind a relay is one more worker with a weight.
//
// A merged interval goes up once every worker expected for it has reported, or when its grace
// (a quarter of the controller's) is over; workers' reports that come later go up as one more report
// for that interval (those arriving together merged), which the controller adds as an
// amendment. Nothing is dropped, so totals stay exact.
#ifndef IOFLEET_CONTROLLER_RELAY_H_
#define IOFLEET_CONTROLLER_RELAY_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "controller/carried_reports.h"
#include "controller/cluster_session.h"
#include "controller/report_sink.h"
#include "histogram/latency_histogram.h"
#include "worker/awake_clock.h"
#include "worker/session_registry.h"
#include "worker/session_run.h"
#include "worker/worker_session.h"

namespace iofleet {

// One run of the controller's, as the relay forwards it: the workers' reports in, merged
// reports out.
class RelayRun final : public SessionRun, public ReportSink {
 public:
  // `workers`: the relay's session's workers (addresses) in index order; `relayed`: for each,
  // the workers it stands for if it is a relay itself (0: a worker); `grace`: how long an
  // interval waits for a worker's report after its end before it goes up without it.
  RelayRun(v1::PrepareRequest request, std::vector<std::string> workers, std::vector<uint32_t> relayed, absl::Duration grace);
  // The grace a relay gives its workers at intervals of `interval_ns`: half the controller's
  // (twice the interval, at least 2 s), so one interval, at least 1 s. A partial interval still
  // reaches the controller well before it publishes without the relay, so that through relays
  // the live view is as fresh as direct (a worker later than this is an amendment, as it is to
  // the controller after its grace). Not sooner: every interval sent up partial is sent again
  // with its late reports (a second merge, serialisation and parse up the line), and a quarter
  // (0.5 s) was within the time a loaded relay host takes to take in one interval's reports: at
  // 10,000 behind 100 relays half the workers had late intervals, and the extra work made the
  // next interval later still.
  static absl::Duration GraceFor(uint64_t interval_ns) { return std::max(absl::Nanoseconds(interval_ns), absl::Seconds(1)); }

  const v1::PrepareRequest& request() const { return request_; }

  // SessionRun
  const std::string& run_id() const override { return request_.run_id(); }
  void RenewLease() override { last_heard_ = AwakeClock::Now(); }
  std::chrono::nanoseconds lease() const override { return lease_; }
  Delivered DeliverReports(const std::function<bool(std::vector<v1::IntervalReport>)>& deliver,
                           const std::function<bool()>& stop) override;
  void StopDelivering() override;
  std::optional<v1::RelaySummary> Summary() override;

  bool LeaseExpired(AwakeClock::time_point now) const { return now - last_heard_.load() > lease_; }

  // ReportSink: worker `worker`'s reports (malformed histograms are cleared and counted).
  void Add(size_t worker, std::vector<v1::IntervalReport> reports) override;

  // Sends up every interval whose grace is over, and the late reports merged since the batch
  // began (kLateBatch after the first call that found it); returns when the next of those is due.
  absl::Time ForwardDue(absl::Time now);
  // `wake` is called (without the run's lock) when a late report arrives with none waiting: the
  // caller of ForwardDue then calls it again to learn when the new batch is due, instead of
  // looking every kLateBatch. Set before the run takes reports.
  void OnLateReport(std::function<void()> wake) { on_late_ = std::move(wake); }
  // How long late reports of forwarded intervals gather before they go up together (a relay
  // whose workers are all late sends one amendment per interval, not one per worker).
  static constexpr absl::Duration kLateBatch = absl::Milliseconds(100);
  // The phase is over: the lost workers are not waited for, everything still held goes up, then
  // each job's final report and the summary (`states`: the relay's session's, after the phase).
  void Finish(const std::vector<ClusterSession::PeerState>& states);

 private:
  using Key = std::pair<uint32_t, uint32_t>;  // job, interval
  // Workers' reports of one job and interval added up, the histograms dense while they fill (a
  // relay adds each worker's few hundred buckets per job and interval: indexed adds, where
  // merging wire forms would search), made one report again when it goes up.
  class ReportSum {
   public:
    // For the job and interval of `first` (nothing of it added yet).
    explicit ReportSum(const v1::IntervalReport& first);
    // `report`'s directions, direction by direction (its histograms are taken).
    void Add(v1::IntervalReport& report);
    // Widens the interval to take `report`'s in (workers' clocks differ slightly).
    void Span(const v1::IntervalReport& report);
    int64_t start_unix_ns() const { return header_.start_unix_ns(); }
    int64_t end_unix_ns() const { return header_.end_unix_ns(); }
    // The workers' reports it carries (IntervalReport.reports_carried when it goes up).
    void Carry(uint32_t reports) { header_.set_reports_carried(header_.reports_carried() + reports); }
    // The workers' reports owed for the interval when it goes up (IntervalReport.reports_owed).
    void Owe(uint32_t reports) { header_.set_reports_owed(reports); }
    v1::IntervalReport Take() &&;

   private:
    v1::IntervalReport header_;
    std::vector<DirectionSum> directions_;
    google::protobuf::RepeatedPtrField<v1::BlockDeviceStages> block_devices_;
    google::protobuf::RepeatedPtrField<v1::HostProfile> profiles_;
  };
  struct Held {
    explicit Held(const v1::IntervalReport& first) : sum(first) {}
    ReportSum sum;
    std::vector<CarriedReports> in;  // [worker]: has it reported, and (a relay) how much
    size_t reporting = 0;            // workers in
  };
  struct WorkerFigures {
    uint64_t ops = 0, bytes = 0, errors = 0, elapsed_ns = 0;
    uint32_t late_intervals = 0;
    LatencyHistogram latency;  // every job and direction
    int64_t start_late_ns = 0;
    std::string stop_reason;  // the first its finals gave
    v1::StopCause stop_cause = v1::STOP_CAUSE_UNSPECIFIED;
  };
  // Whether worker `w` still owes a report for the interval of `job` that starts then.
  bool ExpectedLocked(uint32_t job, size_t w, int64_t interval_start_unix_ns) const;
  // Sends up what of `job` every expected worker has reported; then its final, once every
  // worker's is in.
  void ForwardCompleteLocked(uint32_t job);
  void ForwardLocked(std::map<Key, Held>::iterator held);
  void ForwardFinalLocked(uint32_t job);
  // Sends up what is held of `job`, whoever is missing.
  void ForwardHeldLocked(uint32_t job);
  // Sends up the late reports of `job` merged so far.
  void ForwardLateLocked(uint32_t job);

  const v1::PrepareRequest request_;
  const std::vector<std::string> workers_;
  std::vector<uint32_t> relayed_;  // [worker]: a relay's workers, 0 for a worker
  const uint32_t jobs_;
  const std::chrono::nanoseconds lease_;
  const absl::Duration grace_;
  std::atomic<AwakeClock::time_point> last_heard_;

  mutable std::mutex mu_;
  std::condition_variable ready_cv_;
  std::map<Key, Held> held_;
  // An interval sent up, and which sessions were in then: a late report counts as the controller
  // counts one (once per worker; a relay below, what it says, up to its workers). `in` is
  // dropped once no session owes the interval anything (a report of it then carries nothing).
  struct Forwarded {
    std::vector<CarriedReports> in;  // [worker]
    size_t owing = 0;                // sessions that owe reports of it
  };
  // Whether session `w`, counted as `in`, still owes reports of the interval of `job` that starts then.
  bool OwesLocked(const CarriedReports& in, uint32_t job, size_t w, int64_t interval_start_unix_ns) const {
    return in.in ? in.carried < in.owed : ExpectedLocked(job, w, interval_start_unix_ns);
  }
  std::map<Key, Forwarded> forwarded_;
  std::map<Key, ReportSum> late_;  // of forwarded intervals, until their batch is due
  std::optional<absl::Time> late_due_;  // when late_'s batch goes up (set by the first ForwardDue to see it)
  std::function<void()> on_late_;
  std::vector<std::vector<std::optional<v1::IntervalReport>>> finals_;  // [job][worker], directions cleared
  // Workers whose final report of the job is in, and workers lost: a held interval waits for
  // every other worker, so while fewer of them than workers_ less its reporters are known, it
  // waits without a look at each worker's state.
  std::vector<size_t> finals_in_;                                       // [job]
  size_t lost_count_ = 0;
  std::vector<std::vector<int64_t>> last_end_;                          // [job][worker]
  std::vector<bool> final_sent_;                                        // [job]
  std::vector<bool> lost_;
  std::vector<WorkerFigures> figures_;
  std::deque<v1::IntervalReport> out_;
  bool finished_ = false, stop_delivering_ = false;
  std::optional<v1::RelaySummary> summary_;
  uint64_t malformed_ = 0;  // histograms from the workers that did not decode (left out)
};

// The relay's side of its session with the controller: every command carried out on the
// relay's own session with its workers.
class RelayBackend final : public SessionBackend {
 public:
  // `workers`: the relay's session with the workers behind it (already opened: they dialled in).
  explicit RelayBackend(ClusterSession* workers);
  ~RelayBackend() override;

  // The sessions the controller opens with this relay (a ControllerDialer keeps them here).
  SessionRegistry* sessions() { return &sessions_; }

  absl::Status DoHello(const v1::HelloRequest& request, v1::HelloResponse* response) override;
  absl::Status DoPrepare(const v1::PrepareRequest& request, v1::PrepareResponse* response,
                         const std::function<bool()>& cancelled) override;
  absl::StatusOr<int64_t> DoStart(const v1::StartRequest& request) override;
  absl::Status DoStop(const v1::StopRequest& request) override;
  absl::StatusOr<std::shared_ptr<SessionRun>> TakeReports(const std::string& run_id) override;
  int64_t NowUnixNs() override { return absl::ToUnixNanos(absl::Now()); }
  void PreparationGivenUp(const std::string& run_id) override;

 private:
  // While a run is on: its intervals' graces, its lease (a controller gone for a lease stops
  // the workers' IO), and the phase's end; every second: sessions detached for longer than
  // their runs' leases are closed (a controller gone during a preparation gives it up).
  void Watch();
  // Waits on cv_ for up to `asked`; a timeout that came late was time the relay could not run,
  // which its leases do not count (worker/awake_clock.h, as a worker's watchdog notes it).
  void WaitNotingStarvation(std::unique_lock<std::mutex>& lock, std::chrono::nanoseconds asked);

  ClusterSession* const workers_;
  const std::string hostname_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<RelayRun> run_;  // the current (or latest) run
  bool preparing_ = false, prepared_ = false, started_ = false, ended_ = false, lease_stopped_ = false, closing_ = false;
  bool late_report_ = false;  // the run has a new batch of late reports: Watch asks when it is due
  std::thread awaiting_;           // AwaitPhase of the started run
  // Declared last, built last: its sessions call this backend until they are closed (in the
  // destructor's body, while the backend is whole).
  SessionRegistry sessions_{this, 16};
  std::thread watcher_;
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_RELAY_H_
