#include "controller/relay.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/hostname.h"
#include "common/log.h"
#include "common/protocol_version.h"
#include "controller/block_stages.h"
#include "controller/host_profiles.h"
#include "controller/run_aggregator.h"
#include "controller/direction_summary.h"
#include "histogram/latency_histogram.h"
#include "job/mdtest_warnings.h"

namespace iofleet {
namespace {

// A relay needs a controller that knows relays (it gives a relay a share of worker indices).
constexpr uint32_t kRelayProtocol = 4;

// `from`'s elements added into `into`'s, position by position (fio's depth distributions).
void AddCounts(const google::protobuf::RepeatedField<uint64_t>& from, google::protobuf::RepeatedField<uint64_t>* into) {
  while (into->size() < from.size()) into->Add(0);
  for (int i = 0; i < from.size(); ++i) into->Set(i, into->Get(i) + from.Get(i));
}

}  // namespace

RelayRun::RelayRun(v1::PrepareRequest request, std::vector<std::string> workers, std::vector<uint32_t> relayed, absl::Duration grace)
    : request_(std::move(request)), workers_(std::move(workers)), relayed_(std::move(relayed)), jobs_(static_cast<uint32_t>(request_.spec().jobs_size())),
      lease_(RequestedLease(request_)), grace_(grace),
      last_heard_(AwakeClock::Now()) {
  finals_.assign(jobs_, std::vector<std::optional<v1::IntervalReport>>(workers_.size()));
  last_end_.assign(jobs_, std::vector<int64_t>(workers_.size(), 0));
  final_sent_.assign(jobs_, false);
  lost_.assign(workers_.size(), false);
  relayed_.resize(workers_.size(), 0);
  finals_in_.assign(jobs_, 0);
  figures_.resize(workers_.size());
}

RelayRun::ReportSum::ReportSum(const v1::IntervalReport& first) {
  header_.set_run_id(first.run_id());
  header_.set_job_index(first.job_index());
  header_.set_interval_index(first.interval_index());
  header_.set_start_unix_ns(first.start_unix_ns());
  header_.set_end_unix_ns(first.end_unix_ns());
}

void RelayRun::ReportSum::Add(v1::IntervalReport& report) {
  // --block-stages: each host's devices kept apart (a relay's workers are on many hosts).
  for (const v1::BlockDeviceStages& device : report.block_devices()) MergeBlockDevice(device, &block_devices_);
  report.clear_block_devices();
  // --profile: each host's, passed on as they are.
  for (v1::HostProfile& profile : *report.mutable_profiles()) *profiles_.Add() = std::move(profile);
  report.clear_profiles();
  for (v1::DirectionStats& stats : *report.mutable_directions()) {
    DirectionSum* same = nullptr;
    for (DirectionSum& known : directions_) {
      if (known.direction() == stats.direction()) same = &known;
    }
    if (same == nullptr) same = &directions_.emplace_back();
    same->Add(stats);
  }
}

void RelayRun::ReportSum::Span(const v1::IntervalReport& report) {
  header_.set_start_unix_ns(std::min(header_.start_unix_ns(), report.start_unix_ns()));
  header_.set_end_unix_ns(std::max(header_.end_unix_ns(), report.end_unix_ns()));
}

v1::IntervalReport RelayRun::ReportSum::Take() && {
  v1::IntervalReport report = std::move(header_);
  report.mutable_block_devices()->Swap(&block_devices_);
  report.mutable_profiles()->Swap(&profiles_);
  for (DirectionSum& d : directions_) *report.add_directions() = std::move(d).Take();
  return report;
}

bool RelayRun::ExpectedLocked(uint32_t job, size_t w, int64_t interval_start_unix_ns) const {
  if (lost_[w]) return false;
  return !(finals_[job][w].has_value() && last_end_[job][w] <= interval_start_unix_ns);
}

void RelayRun::Add(size_t worker, std::vector<v1::IntervalReport> reports) {
  if (worker >= workers_.size()) return;
  std::unique_lock<std::mutex> lock(mu_);
  const size_t ready_before = out_.size();
  const bool late_before = !late_.empty();
  std::vector<bool> touched(jobs_, false);
  for (v1::IntervalReport& report : reports) {
    if (report.job_index() >= jobs_ || report.run_id() != request_.run_id()) continue;
    const uint32_t job = report.job_index();
    WorkerFigures& figures = figures_[worker];
    // The relay merges what its workers send: checked here as the controller checks what reaches
    // it (a malformed histogram is left out, its counts kept); slow requests get their worker.
    CheckReportFromWire(workers_[worker], [this](const v1::DirectionStats&, const char*, const absl::Status&) { ++malformed_; }, &report);
    for (int p = report.profiles_size() - 1; p >= 0; --p) {
      if (ValidateHostProfile(report.profiles(p)).ok()) continue;
      report.mutable_profiles()->DeleteSubrange(p, 1);
      ++malformed_;
    }
    for (int d = report.block_devices_size() - 1; d >= 0; --d) {
      if (ValidateBlockDevice(report.block_devices(d)).ok()) continue;
      report.mutable_block_devices()->DeleteSubrange(d, 1);
      ++malformed_;
    }
    for (const v1::DirectionStats& stats : report.directions()) {
      figures.ops += stats.ops();
      figures.bytes += stats.bytes();
      figures.errors += stats.errors();
      figures.latency.MergeProto(stats.latency());
    }
    last_end_[job][worker] = std::max(last_end_[job][worker], report.end_unix_ns());
    if (report.final()) {
      figures.elapsed_ns = std::max(figures.elapsed_ns, report.elapsed_ns());
      figures.start_late_ns = std::max(figures.start_late_ns, report.start_late_ns());
      if (figures.stop_reason.empty()) {  // (a reason and its cause travel together)
        figures.stop_reason = report.stop_reason();
        figures.stop_cause = report.stop_cause();
      }
      // Kept without what is merged with the interval's (below), not again with the final:
      // those set aside while the rest is copied (a copy of a thousand buckets a report, else).
      google::protobuf::RepeatedPtrField<v1::DirectionStats> directions;
      google::protobuf::RepeatedPtrField<v1::BlockDeviceStages> block_devices;
      google::protobuf::RepeatedPtrField<v1::HostProfile> profiles;
      directions.Swap(report.mutable_directions());
      block_devices.Swap(report.mutable_block_devices());
      profiles.Swap(report.mutable_profiles());
      if (!finals_[job][worker].has_value()) ++finals_in_[job];
      finals_[job][worker] = report;
      report.mutable_directions()->Swap(&directions);
      report.mutable_block_devices()->Swap(&block_devices);
      report.mutable_profiles()->Swap(&profiles);
    }
    const Key key{job, report.interval_index()};
    if (auto sent = forwarded_.find(key); sent != forwarded_.end()) {
      // The interval went up without this worker: its report follows, merged with the other
      // late ones of that interval that come within kLateBatch.
      Forwarded& sent_up = sent->second;
      uint32_t carried = 0;
      if (!sent_up.in.empty()) {
        CarriedReports& in = sent_up.in[worker];
        const bool owed = OwesLocked(in, job, worker, report.start_unix_ns());
        carried = in.Add(report, relayed_[worker]);
        if (owed && !OwesLocked(in, job, worker, report.start_unix_ns()) && --sent_up.owing == 0) {
          std::vector<CarriedReports>().swap(sent_up.in);  // nothing more is owed: nothing kept
        }
      }
      if (report.directions_size() > 0 || report.block_devices_size() > 0 || report.profiles_size() > 0 || carried > 0) {
        ReportSum& late = late_.try_emplace(key, report).first->second;
        late.Carry(carried);
        late.Add(report);
      }
      ++figures.late_intervals;
    } else {
      auto [it, first] = held_.try_emplace(key, report);
      Held& held = it->second;
      if (first) {
        held.in.resize(workers_.size());
      } else {
        held.sum.Span(report);
      }
      if (!held.in[worker].in) ++held.reporting;
      held.sum.Carry(held.in[worker].Add(report, relayed_[worker]));
      held.sum.Add(report);
    }
    touched[job] = true;
  }
  for (uint32_t job = 0; job < jobs_; ++job) {
    if (touched[job]) ForwardCompleteLocked(job);
  }
  // The forwarder wakes when there is something to send (once per interval, not per report).
  if (out_.size() > ready_before) ready_cv_.notify_all();
  const bool late_began = !late_before && !late_.empty();
  lock.unlock();
  if (late_began && on_late_) on_late_();
}

void RelayRun::ForwardLocked(std::map<Key, Held>::iterator held) {
  // What the interval owes: what its workers in said, and every worker of those still expected
  // that has not reported (a relay below, all of its workers).
  uint64_t owed = 0;
  Forwarded sent;
  for (size_t w = 0; w < workers_.size(); ++w) {
    const CarriedReports& in = held->second.in[w];
    const bool owes = OwesLocked(in, held->first.first, w, held->second.sum.start_unix_ns());
    if (in.in) {
      owed += in.expected();
    } else if (owes) {  // (still expected)
      owed += SessionWorkers(relayed_[w]);
    }
    sent.owing += owes;
  }
  held->second.sum.Owe(static_cast<uint32_t>(std::min<uint64_t>(owed, UINT32_MAX)));
  if (sent.owing > 0) sent.in = std::move(held->second.in);
  forwarded_.emplace(held->first, std::move(sent));
  out_.push_back(std::move(held->second.sum).Take());
  held_.erase(held);
}

void RelayRun::ForwardCompleteLocked(uint32_t job) {
  // Workers neither done with the job nor lost, at least: each owes every interval.
  const size_t settled = finals_in_[job] + lost_count_;
  const size_t owing = settled < workers_.size() ? workers_.size() - settled : 0;
  for (auto it = held_.lower_bound({job, 0}); it != held_.end() && it->first.first == job;) {
    auto next = std::next(it);
    if (it->second.reporting >= owing) {  // else one of them has not reported (the common case)
      size_t expected = 0;
      for (size_t w = 0; w < workers_.size(); ++w) expected += it->second.in[w].in || ExpectedLocked(job, w, it->second.sum.start_unix_ns());
      if (it->second.reporting >= expected) ForwardLocked(it);  // (a relay below may still owe some: the controller waits for them)
    }
    it = next;
  }
  if (final_sent_[job] || owing > 0) return;
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (!lost_[w] && !finals_[job][w].has_value()) return;
  }
  ForwardFinalLocked(job);
}

void RelayRun::ForwardHeldLocked(uint32_t job) {
  for (auto it = held_.lower_bound({job, 0}); it != held_.end() && it->first.first == job;) ForwardLocked(it++);
}

void RelayRun::ForwardLateLocked(uint32_t job) {
  for (auto it = late_.lower_bound({job, 0}); it != late_.end() && it->first.first == job;) {
    out_.push_back(std::move(it->second).Take());
    it = late_.erase(it);
  }
  if (late_.empty()) late_due_.reset();
}

void RelayRun::ForwardFinalLocked(uint32_t job) {
  // What is still held of the job goes first: its final is the job's last report.
  ForwardHeldLocked(job);
  ForwardLateLocked(job);
  final_sent_[job] = true;
  v1::IntervalReport merged;
  merged.set_run_id(request_.run_id());
  merged.set_job_index(job);
  merged.set_final(true);
  std::vector<std::string> errors;
  bool any = false, earliest_set = false;
  for (size_t w = 0; w < workers_.size(); ++w) {
    const std::optional<v1::IntervalReport>& f = finals_[job][w];
    if (!f.has_value()) continue;  // lost: the summary says so, and the controller names it
    if (!any || f->interval_index() > merged.interval_index()) {
      merged.set_interval_index(f->interval_index());
      merged.set_start_unix_ns(f->start_unix_ns());
      merged.set_end_unix_ns(f->end_unix_ns());
    }
    any = true;
    merged.set_elapsed_ns(std::max(merged.elapsed_ns(), f->elapsed_ns()));
    if (!f->error().empty()) errors.push_back(absl::StrCat("worker ", workers_[w], ": ", f->error()));
    if (merged.stop_reason().empty()) {
      merged.set_stop_reason(f->stop_reason());
      merged.set_stop_cause(f->stop_cause());
    }
    for (const std::string& note : f->notes()) {
      if (std::find(merged.notes().begin(), merged.notes().end(), note) == merged.notes().end()) merged.add_notes(note);
    }
    merged.set_cpu_user_ns(merged.cpu_user_ns() + f->cpu_user_ns());
    merged.set_cpu_system_ns(merged.cpu_system_ns() + f->cpu_system_ns());
    merged.set_context_switches(merged.context_switches() + f->context_switches());
    AddCounts(f->depth_counts(), merged.mutable_depth_counts());
    AddCounts(f->submit_counts(), merged.mutable_submit_counts());
    AddCounts(f->complete_counts(), merged.mutable_complete_counts());
    // Per task, in worker order: the controller concatenates its workers' the same way.
    merged.mutable_task_items()->Add(f->task_items().begin(), f->task_items().end());
    merged.mutable_task_elapsed_ns()->Add(f->task_elapsed_ns().begin(), f->task_elapsed_ns().end());
    merged.set_item_failures(merged.item_failures() + f->item_failures());
    merged.mutable_iteration_directories_gone()->Add(f->iteration_directories_gone().begin(), f->iteration_directories_gone().end());
    merged.mutable_iteration_directories_left()->Add(f->iteration_directories_left().begin(), f->iteration_directories_left().end());
    for (const std::string& warning : f->item_warnings()) {
      if (merged.item_warnings_size() >= static_cast<int>(kMdtestNamedFailuresPerWorker)) break;  // (the controller keeps no more)
      merged.add_item_warnings(warning);
    }
    merged.set_stonewalled(merged.stonewalled() || f->stonewalled());
    merged.set_start_late_ns(std::max(merged.start_late_ns(), f->start_late_ns()));
    merged.set_earliest_start_late_ns(earliest_set ? std::min(merged.earliest_start_late_ns(), f->earliest_start_late_ns())
                                                   : f->earliest_start_late_ns());
    earliest_set = true;
  }
  merged.set_error(absl::StrJoin(errors, "; "));
  out_.push_back(std::move(merged));
}

absl::Time RelayRun::ForwardDue(absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time next = absl::InfiniteFuture();
  bool any = false;
  if (!late_.empty()) {
    if (!late_due_.has_value()) late_due_ = now + kLateBatch;  // the batch's first look
    if (now >= *late_due_) {
      for (uint32_t job = 0; job < jobs_; ++job) ForwardLateLocked(job);
      any = true;
    } else {
      next = *late_due_;
    }
  }
  for (auto it = held_.begin(); it != held_.end();) {
    const absl::Time due = absl::FromUnixNanos(it->second.sum.end_unix_ns()) + grace_;
    auto following = std::next(it);
    if (due <= now) {
      ForwardLocked(it);
      any = true;
    } else {
      next = std::min(next, due);
    }
    it = following;
  }
  if (any) ready_cv_.notify_all();
  return next;
}

void RelayRun::Finish(const std::vector<ClusterSession::PeerState>& states) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t w = 0; w < workers_.size() && w < states.size(); ++w) lost_[w] = !states[w].lost.ok();
  lost_count_ = static_cast<size_t>(std::count(lost_.begin(), lost_.end(), true));
  for (uint32_t job = 0; job < jobs_; ++job) {
    if (!final_sent_[job]) ForwardFinalLocked(job);
  }
  for (uint32_t job = 0; job < jobs_; ++job) {  // reports of jobs that ended before: none stays
    ForwardHeldLocked(job);
    ForwardLateLocked(job);
  }
  v1::RelaySummary summary;
  summary.set_run_id(request_.run_id());
  for (size_t w = 0; w < workers_.size() && w < states.size(); ++w) {
    const ClusterSession::PeerState& state = states[w];
    if (state.summary.has_value()) {
      // A relay behind this one: its workers, named as it named them, one relay further.
      for (const v1::RelayedWorkerSummary& behind : state.summary->workers()) {
        v1::RelayedWorkerSummary* s = summary.add_workers();
        *s = behind;
        s->add_relays(workers_[w]);
        s->set_clock_offset_ns(behind.clock_offset_ns() + state.clock_offset_ns);
        s->set_round_trip_ns(behind.round_trip_ns() + std::max<int64_t>(state.round_trip_ns, 0));
      }
      continue;
    }
    const WorkerFigures& f = figures_[w];
    v1::RelayedWorkerSummary* s = summary.add_workers();
    s->set_worker_index(request_.worker_index() + static_cast<uint32_t>(summary.workers_size() - 1));
    s->set_address(workers_[w]);
    s->set_hostname(state.hello.hostname());
    s->set_ops(f.ops);
    s->set_bytes(f.bytes);
    s->set_errors(f.errors);
    s->set_latency_p50_ns(f.latency.ValueAtPercentile(50.0));
    s->set_latency_p99_ns(f.latency.ValueAtPercentile(99.0));
    s->set_elapsed_ns(f.elapsed_ns);
    s->set_late_intervals(f.late_intervals);
    if (!state.lost.ok()) s->set_lost(std::string(absl::StripPrefix(state.lost.message(), absl::StrCat("worker ", workers_[w], ": "))));
    s->set_clock_offset_ns(state.clock_offset_ns);
    s->set_round_trip_ns(state.round_trip_ns);
    s->set_start_lead_ns(state.start_lead_ns);
    s->set_start_late_ns(f.start_late_ns);
    s->set_stop_reason(f.stop_reason);
    s->set_stop_cause(f.stop_cause);
  }
  if (malformed_ > 0) {
    Log(LogLevel::kWarning, absl::StrCat("run ", request_.run_id(), ": ", malformed_,
                                         " malformed latency histogram(s) from the workers were left out (their counts were kept)"));
  }
  summary_ = std::move(summary);
  finished_ = true;
  ready_cv_.notify_all();
}

SessionRun::Delivered RelayRun::DeliverReports(const std::function<bool(std::vector<v1::IntervalReport>)>& deliver,
                                               const std::function<bool()>& stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_delivering_ && !stop()) {
    if (out_.empty() && finished_) return Delivered::kAll;
    if (out_.empty()) {
      ready_cv_.wait_for(lock, std::chrono::seconds(1));
      continue;
    }
    std::vector<v1::IntervalReport> ready(std::make_move_iterator(out_.begin()), std::make_move_iterator(out_.end()));
    out_.clear();
    lock.unlock();
    if (!deliver(std::move(ready))) return Delivered::kReaderGone;
    lock.lock();
  }
  return Delivered::kStopped;
}

void RelayRun::StopDelivering() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_delivering_ = true;
  ready_cv_.notify_all();
}

std::optional<v1::RelaySummary> RelayRun::Summary() {
  std::lock_guard<std::mutex> lock(mu_);
  return summary_;
}

RelayBackend::RelayBackend(ClusterSession* workers) : workers_(workers), hostname_(LocalHostname()), watcher_([this] { Watch(); }) {}

RelayBackend::~RelayBackend() {
  sessions_.CloseAll();
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  watcher_.join();
  std::shared_ptr<RelayRun> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    run = run_;
  }
  if (run != nullptr) workers_->StopAll(run->run_id(), "the relay is shutting down", v1::STOP_CAUSE_SHUTDOWN);
  if (awaiting_.joinable()) awaiting_.join();
}

absl::Status RelayBackend::DoHello(const v1::HelloRequest& request, v1::HelloResponse* response) {
  response->set_protocol_version(kProtocolVersion);
  response->set_min_compatible_version(kRelayProtocol);
  response->set_hostname(hostname_);
  response->set_worker_version(kIofleetVersion);
  response->add_features("relay");
  const std::vector<ClusterSession::PeerState> states = workers_->PeerStates();
  response->set_relayed_workers(workers_->relayed_workers());
  // The controller's report shows the relay with its first worker's kind of host.
  if (!states.empty()) {
    response->set_cores(states[0].hello.cores());
    response->set_kernel(states[0].hello.kernel());
    *response->mutable_engines() = states[0].hello.engines();
    *response->mutable_allowed_roots() = states[0].hello.allowed_roots();
  }
  return CheckProtocolCompatible({kProtocolVersion, kRelayProtocol}, "relay", {request.protocol_version(), request.min_compatible_version()},
                                 "the controller");
}

absl::Status RelayBackend::DoPrepare(const v1::PrepareRequest& request, v1::PrepareResponse* response,
                                     const std::function<bool()>& cancelled) {
  const uint32_t share = workers_->relayed_workers();
  if (request.run_id().empty() || request.run_id().size() > 128) return absl::InvalidArgumentError("run id empty or longer than 128 bytes");
  if (request.interval_ns() == 0) return absl::InvalidArgumentError("interval_ns must be positive");
  if (request.spec().jobs_released()) {
    // (A relay does not say "job-release" in its hello, so a controller does not ask this.)
    return absl::InvalidArgumentError("jobs_released: a relay does not pass its workers' arrivals and the releases on");
  }
  if (static_cast<uint64_t>(request.worker_index()) + share > request.worker_count()) {
    return absl::InvalidArgumentError(absl::StrCat("worker_index ", request.worker_index(), " + the relay's ", share, " workers exceeds worker_count ",
                                                   request.worker_count(), " (a controller older than relays? it needs protocol ", kRelayProtocol, ")"));
  }
  std::vector<std::string> addresses;
  for (const ClusterSession::PeerState& state : workers_->PeerStates()) addresses.push_back(state.address);
  auto run = std::make_shared<RelayRun>(request, std::move(addresses), workers_->RelayedBySession(),
      RelayRun::GraceFor(request.interval_ns()));
  run->OnLateReport([this] {
    std::lock_guard<std::mutex> lock(mu_);
    late_report_ = true;
    cv_.notify_all();
  });
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (run_ != nullptr && ((started_ && !ended_) || preparing_)) {
      return absl::FailedPreconditionError(absl::StrCat("this relay is ", preparing_ ? "preparing " : "running ", run_->run_id(),
                                                        " still (one run at a time)"));
    }
    if (awaiting_.joinable()) awaiting_.join();  // the previous run's phase is over
    run_ = run;
    prepared_ = started_ = ended_ = lease_stopped_ = false;
    preparing_ = true;
  }
  cv_.notify_all();
  struct Done {
    RelayBackend* b;
    ~Done() {
      std::lock_guard<std::mutex> lock(b->mu_);
      b->preparing_ = false;
    }
  } done{this};
  // The relay does not renumber jobs: no index map (indices beyond a map are left as they are).
  static const std::vector<size_t> kSameJobIndices;
  const ClusterSession::PhasePreparation prepared = workers_->PreparePhase(
      request.spec(), kSameJobIndices, request.run_id(), run.get(), PhasePlacement{request.worker_index(), request.worker_count()}, request.interval_ns(),
      cancelled);
  if (!prepared.ok()) {
    workers_->EndPhase();
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    if (cancelled()) return absl::CancelledError("the controller gave the preparation up");
    return absl::FailedPreconditionError(prepared.interrupted ? "the relay was interrupted (Ctrl-C)" : absl::StrJoin(prepared.failures, "; "));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    prepared_ = true;
  }
  run->RenewLease();
  // The start instant reaches this relay first, then its workers: the controller plans for both.
  response->set_start_lead_ns(absl::ToInt64Nanoseconds(workers_->StartLead()));
  for (const v1::PrepareResponse& answer : workers_->PrepareResponses()) {
    for (const v1::PreparedFile& file : answer.files()) *response->add_files() = file;
    if (!response->has_facts()) *response->mutable_facts() = answer.facts();
    for (const std::string& made : answer.made_test_dirs()) {
      if (std::find(response->made_test_dirs().begin(), response->made_test_dirs().end(), made) == response->made_test_dirs().end()) {
        response->add_made_test_dirs(made);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RelayBackend::DoStart(const v1::StartRequest& request) {
  std::shared_ptr<RelayRun> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (run_ == nullptr || run_->run_id() != request.run_id() || ended_) {
      return absl::NotFoundError(absl::StrCat("this relay has no prepared run ", request.run_id()));
    }
    if (started_) return request.start_unix_ns() - NowUnixNs();
    started_ = true;
    run = run_;
    // The workers start at the controller's instant; their reports flow until each delivered
    // everything or was lost.
    awaiting_ = std::thread([this, run] {
      (void)workers_->AwaitPhase(run->run_id());
      run->Finish(workers_->PeerStates());
      workers_->EndPhase();
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      cv_.notify_all();
    });
  }
  cv_.notify_all();
  workers_->StartPhase(request.run_id(), request.start_unix_ns());
  return request.start_unix_ns() - NowUnixNs();
}

absl::Status RelayBackend::DoStop(const v1::StopRequest& request) {
  if (request.run_id().size() > 128) return absl::InvalidArgumentError("run id longer than 128 bytes");
  workers_->StopAll(request.run_id(), request.reason().substr(0, 1024), RequestedStopCause(request));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<SessionRun>> RelayBackend::TakeReports(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (run_ == nullptr || run_->run_id() != run_id) return absl::NotFoundError(absl::StrCat("this relay has no run ", run_id));
  return std::shared_ptr<SessionRun>(run_);
}

void RelayBackend::PreparationGivenUp(const std::string&) { workers_->Wake(); }

void RelayBackend::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!closing_) {
    lock.unlock();
    sessions_.ForgetExpired();
    lock.lock();
    std::shared_ptr<RelayRun> run = run_;
    if (run == nullptr || ended_ || closing_) {
      WaitNotingStarvation(lock, std::chrono::seconds(1));
      continue;
    }
    late_report_ = false;  // (ForwardDue below sees every late report that came before this)
    // A tenth of the lease, as a worker checks its own; sooner when an interval's grace ends.
    absl::Time wake = absl::Now() + std::min(absl::FromChrono(run->lease() / 10), absl::Seconds(1));
    const bool started = started_, prepared = prepared_;
    lock.unlock();
    // While it runs, workers' reports that came after their interval went up follow it within
    // RelayRun::kLateBatch (those arriving together in one report): the controller holds the
    // interval until they are in (or its own grace ends). The run wakes this loop when a late
    // report begins a batch (late_report_), so it sleeps between batches and graces rather than
    // looking every kLateBatch (ten wakeups a second in each relay).
    if (started) wake = std::min(wake, run->ForwardDue(absl::Now()));
    // Its lease counts from the end of the preparation (the session renews it from then on; a
    // controller gone during the preparation ends the session, which gives the preparation up).
    if (prepared && run->LeaseExpired(AwakeClock::Now())) {
      lock.lock();
      const bool first = !lease_stopped_;
      lease_stopped_ = true;
      lock.unlock();
      if (first) {
        Log(LogLevel::kWarning, absl::StrCat("run ", run->run_id(), ": the controller was not heard for a lease; stopping the workers' IO"));
        workers_->StopAll(run->run_id(), "the controller was not heard for a lease (the relay stopped the run)", v1::STOP_CAUSE_LEASE_EXPIRED);
        workers_->Wake();
      }
    }
    lock.lock();
    if (closing_) break;
    if (late_report_) continue;  // one came while it looked: when is its batch due?
    WaitNotingStarvation(lock, absl::ToChronoNanoseconds(std::max(wake - absl::Now(), absl::Milliseconds(1))));
  }
}

void RelayBackend::WaitNotingStarvation(std::unique_lock<std::mutex>& lock, std::chrono::nanoseconds asked) {
  const AwakeClock::Steady::time_point before = AwakeClock::Steady::now();
  if (cv_.wait_for(lock, asked) == std::cv_status::timeout) AwakeClock::NoteSleep(asked, AwakeClock::Steady::now() - before);
}

}  // namespace iofleet
