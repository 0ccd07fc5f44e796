// iofleet-fleet-sim: plays N workers over the real protocol from one process, so a controller
// (or a tree of relays) can be measured at ten thousand workers on one machine. Each simulated
// worker dials the controller with the worker's own session code (worker/controller_dialer.h,
// worker/worker_session.h) and answers every command as a worker would; its IO is made up: at
// each interval's end it reports, per job, a latency histogram with --buckets non-empty buckets
// picked by its worker index, job and interval from intervals drawn from the seed — the same seed gives
// the same reports whichever process or relay carries them, which is how a test can compare a run
// through relays with a direct one exactly. --jitter delays each report by up to that much,
// --stragglers makes that many workers report --straggler-delay late, --lose makes that many
// drop their connection for good halfway through the run. Each simulated worker has a connection
// of its own, as a worker process does; --workers-per-connection K puts K workers' sessions on
// one (HTTP/2 streams of one connection: what the relays and the controller do per message is
// the same, but K workers' reads and window updates share system calls and wakeups, so one
// machine can play more of them).
//
// --controller A,B,... spreads the workers over several controllers (or relays) in equal blocks,
// the first N/k dialling A: one simulator process can feed many relays (fewer processes, fewer
// of their threads taking turns on the machine's cores).
//
//   iofleet-fleet-sim --controller HOST:PORT[,HOST:PORT...] --workers N [--seed S] [--buckets 200] ...
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/unknown_field_set.h"
#include "common/command_line.h"
#include "common/log.h"
#include "common/protocol_version.h"
#include "common/transport_security.h"
#include "common/units.h"
#include "histogram/latency_histogram.h"
#include "job/rw_mode.h"
#include "worker/control_threads.h"
#include "worker/controller_dialer.h"
#include "worker/session_registry.h"
#include "worker/session_run.h"

namespace iofleet {
namespace {

struct SimOptions {
  uint64_t seed = 1;
  int buckets = 200;
  absl::Duration jitter = absl::Milliseconds(50);
  int stragglers = 0;
  absl::Duration straggler_delay = absl::Seconds(3);
  int lose = 0;
};

// splitmix64: a well-mixed value from a key (cheap, and the same on every machine).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Key(uint64_t seed, uint64_t worker, uint64_t job, uint64_t interval) {
  return Mix(seed ^ Mix(worker ^ Mix(job ^ Mix(interval))));
}

// One direction's interval: `buckets` non-empty buckets around a latency typical of the job,
// a long tail of a few slow requests.
v1::DirectionStats DrawDirection(uint64_t key, int buckets) {
  std::mt19937_64 random(key);
  LatencyHistogram histogram;
  const uint64_t base_ns = 50'000 + random() % 150'000;  // 50-200 us
  for (int b = 0; b < buckets; ++b) {
    // Most samples near the base, fewer further out: bucket b sits b/64 of a doubling up.
    const uint64_t value = static_cast<uint64_t>(static_cast<double>(base_ns) * std::exp2(static_cast<double>(b) / 64.0));
    const uint64_t count = 1 + (random() % 64) * static_cast<uint64_t>(buckets - b) / static_cast<uint64_t>(buckets);
    histogram.RecordN(value, count);
  }
  v1::DirectionStats stats;
  *stats.mutable_latency() = histogram.ToProto();
  stats.set_ops(stats.latency().count());
  *stats.mutable_completion_latency() = stats.latency();
  return stats;
}

// What a report's direction is drawn from: 256 intervals made once (drawing thousands a second
// would be the simulator's whole cost), picked by the report's key. They are kept serialized and
// go into a report as its bytes (a length-delimited field 6, `directions`, among the report's
// unknown fields, which protobuf writes out verbatim): on the wire the same report as one built
// field by field, without building, serializing and freeing two histograms' arrays per job and
// interval. 1,000 simulated workers x 2 behind 20 relays, 8 s of a run, two interleaved pairs:
// 2.44-2.51 -> 1.42-1.52 CPU-s (2026-12-02).
class IntervalPool {
 public:
  IntervalPool(uint64_t seed, int buckets) {
    for (uint64_t i = 0; i < 256; ++i) {
      const v1::DirectionStats stats = DrawDirection(Mix(seed ^ i), buckets);
      pool_.push_back({stats.SerializeAsString(), stats.ops()});
    }
  }
  // Adds the direction picked by `key` to `report`, as report->add_directions() would.
  void AddTo(v1::IntervalReport* report, v1::Direction direction, uint64_t key, uint64_t block_size) const {
    const Drawn& drawn = pool_[key % pool_.size()];
    v1::DirectionStats rest;  // what differs from report to report
    rest.set_direction(direction);
    rest.set_bytes(drawn.ops * block_size);
    std::string* bytes = report->GetReflection()->MutableUnknownFields(report)->AddLengthDelimited(v1::IntervalReport::kDirectionsFieldNumber);
    bytes->reserve(drawn.serialized.size() + rest.ByteSizeLong());
    bytes->append(drawn.serialized);
    rest.AppendToString(bytes);  // (a message's fields may come in any order)
  }

 private:
  struct Drawn {
    std::string serialized;  // a v1::DirectionStats without its direction and bytes
    uint64_t ops;
  };
  std::vector<Drawn> pool_;
};

class SimRun;

// The simulator's one timer: every simulated run's reports are made on this thread when they
// are due, while the run's own thread (the worker's session code gives each run one) sleeps
// until the run is over. A thousand runs waking at every interval's end on threads of their
// own were as many thread switches a second, and each unlock after a condition variable's wait
// a futex call (glibc marks the mutex contended).
class SimClock {
 public:
  SimClock() : thread_([this] { Loop(); }) {}
  ~SimClock() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Ticks `run` at `at` (or as soon as it can), on the clock's thread.
  void At(absl::Time at, std::weak_ptr<SimRun> run) {
    std::lock_guard<std::mutex> lock(mu_);
    const bool sooner = queue_.empty() || at < queue_.top().at;
    queue_.push({at, sequence_++, std::move(run)});
    if (sooner) cv_.notify_all();
  }

 private:
  struct Due {
    absl::Time at;
    uint64_t sequence;  // (first come, first ticked among equals)
    std::weak_ptr<SimRun> run;
    bool operator>(const Due& other) const { return at != other.at ? at > other.at : sequence > other.sequence; }
  };
  // Runs due within this of each other are ticked on one wakeup (their reports up to this late:
  // within the simulated jitter).
  static constexpr absl::Duration kCoalesce = absl::Milliseconds(1);
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> queue_;
  uint64_t sequence_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

// One simulated worker's run: its reports, made up at each interval's end (on the SimClock).
class SimRun final : public SessionRun, public std::enable_shared_from_this<SimRun> {
 public:
  SimRun(v1::PrepareRequest request, const SimOptions& options, const IntervalPool* pool, SimClock* clock, std::function<void()> lose)
      : request_(std::move(request)), options_(options), pool_(pool), clock_(clock), lose_(std::move(lose)),
        lease_(RequestedLease(request_)),
        interval_(absl::Nanoseconds(std::max<uint64_t>(request_.interval_ns(), 1'000'000))) {
    RenewLease();
    uint64_t runtime = 0;
    for (const v1::JobSpec& job : request_.spec().jobs()) runtime = std::max(runtime, job.runtime_ns() + job.startdelay_ns());
    runtime_ = absl::Nanoseconds(runtime > 0 ? runtime : 10'000'000'000ull);
    const uint32_t index = request_.worker_index();
    straggler_ = index < static_cast<uint32_t>(options_.stragglers);
    loses_ = index >= static_cast<uint32_t>(options_.stragglers) && index < static_cast<uint32_t>(options_.stragglers + options_.lose);
    jitter_ = options_.jitter > absl::ZeroDuration()
                  ? absl::Nanoseconds(static_cast<int64_t>(Mix(options_.seed ^ index) % static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.jitter))))
                  : absl::ZeroDuration();
  }

  const std::string& run_id() const override { return request_.run_id(); }
  void RenewLease() override { last_heard_ = AwakeClock::Now(); }
  std::chrono::nanoseconds lease() const override { return lease_; }

  void Start(int64_t start_unix_ns) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (start_.has_value()) return;
      start_ = absl::FromUnixNanos(start_unix_ns);
    }
    clock_->At(absl::Now(), weak_from_this());
  }
  void Stop(const std::string& reason, v1::StopCause cause) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_reason_.empty()) {
        stop_reason_ = reason.empty() ? "stopped" : reason;
        stop_cause_ = cause;
      }
    }
    clock_->At(absl::Now(), weak_from_this());
  }

  // The session's thread for this run waits here; the clock's thread delivers (Tick).
  Delivered DeliverReports(const std::function<bool(std::vector<v1::IntervalReport>)>& deliver, const std::function<bool()>& stop) override {
    std::unique_lock<std::mutex> lock(mu_);
    deliver_ = &deliver;
    stop_ = &stop;
    delivered_.reset();
    lock.unlock();
    clock_->At(absl::Now(), weak_from_this());
    lock.lock();
    cv_.wait(lock, [this] { return (delivered_.has_value() || stop_delivering_) && !ticking_; });
    deliver_ = nullptr;  // (no tick uses them from here on)
    stop_ = nullptr;
    return delivered_.value_or(Delivered::kStopped);
  }
  void StopDelivering() override {
    std::lock_guard<std::mutex> lock(mu_);
    stop_delivering_ = true;
    cv_.notify_all();
  }
  // Wakes the run's thread if its delivery is over (after a Tick that said so).
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }

  // On the clock's thread: delivers what is due; returns when to look again (nothing: the
  // delivery is over). `stop` is looked at once a second at least, and the lease a quarter of
  // it, as a worker's run thread does.
  std::optional<absl::Time> Tick(absl::Time now) {
    std::unique_lock<std::mutex> lock(mu_);
    if (deliver_ == nullptr || delivered_.has_value() || stop_delivering_) return std::nullopt;
    // (The run's thread is woken by Release, once the clock has delivered the reports due
    // with this one: SimClock::Loop.)
    const auto over = [&](Delivered how) -> std::optional<absl::Time> {
      delivered_ = how;
      return std::nullopt;
    };
    if ((*stop_)()) return over(Delivered::kStopped);
    if (AwakeClock::Now() - last_heard_.load() > lease_ && stop_reason_.empty()) {
      stop_reason_ = "lease expired";
      stop_cause_ = v1::STOP_CAUSE_LEASE_EXPIRED;
    }
    const absl::Time look = now + std::min(absl::FromChrono(lease_ / 4), absl::Seconds(1));
    if (!start_.has_value()) {
      if (!stop_reason_.empty()) return over(Delivered::kAll);
      return look;  // (Start ticks it at once)
    }
    const absl::Time end = std::min(*start_ + interval_ * static_cast<int64_t>(next_ + 1), *start_ + runtime_);
    const absl::Time due = end + jitter_ + (straggler_ ? options_.straggler_delay : absl::ZeroDuration());
    const bool stopped = !stop_reason_.empty();
    if (now < due && !stopped) return std::min(due, look);
    if (loses_ && next_ >= static_cast<uint32_t>(runtime_ / interval_) / 2) {
      ticking_ = true;  // (the worker, which `lose_` stops, outlives it: its session waits)
      lock.unlock();
      lose_();  // the connection goes for good; this worker is never heard again
      lock.lock();
      ticking_ = false;
      return over(Delivered::kStopped);
    }
    const absl::Time report_end = stopped ? std::min(end, std::max(now, *start_)) : end;
    const bool last = stopped || end >= *start_ + runtime_;
    std::vector<v1::IntervalReport> reports;
    reports.reserve(static_cast<size_t>(request_.spec().jobs_size()));
    for (int j = 0; j < request_.spec().jobs_size(); ++j) {
      const v1::JobSpec& job = request_.spec().jobs(j);
      v1::IntervalReport& report = reports.emplace_back();
      report.set_run_id(request_.run_id());
      report.set_job_index(static_cast<uint32_t>(j));
      report.set_interval_index(next_);
      report.set_start_unix_ns(absl::ToUnixNanos(*start_ + interval_ * static_cast<int64_t>(next_)));
      report.set_end_unix_ns(absl::ToUnixNanos(report_end));
      const bool reads = ReadsData(job.rw());
      const bool writes = WritesData(job.rw());
      const uint64_t key = Key(options_.seed, request_.worker_index(), static_cast<uint64_t>(j), next_);
      if (reads) pool_->AddTo(&report, v1::READ, key, std::max<uint64_t>(job.read_bs().min(), 1));
      if (writes) pool_->AddTo(&report, v1::WRITE, Mix(key), std::max<uint64_t>(job.write_bs().min(), 1));
      if (last) {
        report.set_final(true);
        report.set_elapsed_ns(static_cast<uint64_t>(absl::ToInt64Nanoseconds(report_end - *start_)));
        if (stopped && end < *start_ + runtime_) {
          report.set_stop_reason(stop_reason_);
          report.set_stop_cause(stop_cause_);
        }
      }
    }
    ++next_;
    // Delivered without the lock (a session's writes may wait), the run's thread held back
    // from returning meanwhile (it owns `deliver`).
    ticking_ = true;
    lock.unlock();
    const bool delivered = (*deliver_)(std::move(reports));
    lock.lock();
    ticking_ = false;
    if (!delivered) return over(Delivered::kReaderGone);
    if (last) return over(Delivered::kAll);
    if (stop_delivering_) cv_.notify_all();
    return now;  // the next interval may be due already
  }

 private:
  const v1::PrepareRequest request_;
  const SimOptions options_;
  const IntervalPool* const pool_;
  SimClock* const clock_;
  const std::function<void()> lose_;
  const std::chrono::nanoseconds lease_;
  const absl::Duration interval_;
  absl::Duration runtime_, jitter_;
  bool straggler_ = false, loses_ = false;
  std::atomic<AwakeClock::time_point> last_heard_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<absl::Time> start_;
  std::string stop_reason_;
  v1::StopCause stop_cause_ = v1::STOP_CAUSE_UNSPECIFIED;
  bool stop_delivering_ = false;
  // While DeliverReports waits: what it was given, the interval to report next, how it ended.
  const std::function<bool(std::vector<v1::IntervalReport>)>* deliver_ = nullptr;
  const std::function<bool()>* stop_ = nullptr;
  uint32_t next_ = 0;
  std::optional<Delivered> delivered_;
  bool ticking_ = false;  // a tick is delivering without the lock
};

void SimClock::Loop() {
  // Runs whose delivery is over: their threads (each sends its worker's end and exits) are
  // woken only once no report has gone out for kQuiet and none is due within kRelease (or
  // kHoldAtMost after the first run ended), and then a few every kReleasePace, all within about
  // a second. On a fleet each worker ends on a host of its own; here a thousand session threads
  // woke at once, at nice 19 but each weighing as much as any other thread of its nice level,
  // and took most of both CPUs from the clock and the relays while the last interval's reports
  // were still going out and being merged (10,000 behind 100 relays: the last interval
  // published 1.3-2.0 s after its end, the others 0.5-0.9 s).
  constexpr absl::Duration kRelease = absl::Milliseconds(100);
  constexpr absl::Duration kQuiet = absl::Seconds(1);
  constexpr absl::Duration kHoldAtMost = absl::Seconds(3);
  constexpr absl::Duration kReleasePace = absl::Milliseconds(5);
  constexpr size_t kReleaseRounds = 200;  // x kReleasePace: a second
  size_t release_batch = 0;  // threads woken a round, set when the first round begins
  std::deque<std::shared_ptr<SimRun>> over;
  absl::Time over_since = absl::InfiniteFuture(), last_tick = absl::InfinitePast(), next_release = absl::InfinitePast();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    absl::Time now = absl::Now();
    const absl::Time next = queue_.empty() ? absl::InfiniteFuture() : queue_.top().at;
    // When the ended runs' threads may go: after the quiet, or the hold, and the pace.
    const absl::Time release = over.empty() ? absl::InfiniteFuture()
                                            : std::max(next_release, std::min(next > now + kRelease ? last_tick + kQuiet : absl::InfiniteFuture(),
                                                                              over_since + kHoldAtMost));
    if (now >= release) {
      if (release_batch == 0) release_batch = std::max<size_t>(4, (over.size() + kReleaseRounds - 1) / kReleaseRounds);
      std::vector<std::shared_ptr<SimRun>> going;
      while (!over.empty() && going.size() < release_batch) {
        going.push_back(std::move(over.front()));
        over.pop_front();
      }
      if (over.empty()) {
        over_since = absl::InfiniteFuture();
        release_batch = 0;
      }
      next_release = now + kReleasePace;
      lock.unlock();
      for (const std::shared_ptr<SimRun>& run : going) run->Release();
      lock.lock();
      continue;
    }
    if (next > now) {
      // (A report due sooner than kRelease holds the release back: looked at again then.)
      const absl::Time wake = std::min(next + kCoalesce, release);
      if (wake == absl::InfiniteFuture()) {
        cv_.wait(lock);
      } else {
        cv_.wait_for(lock, absl::ToChronoNanoseconds(wake - now));
      }
      continue;
    }
    std::vector<std::weak_ptr<SimRun>> due;
    while (!queue_.empty() && queue_.top().at <= now) {
      due.push_back(queue_.top().run);
      queue_.pop();
    }
    lock.unlock();
    for (const std::weak_ptr<SimRun>& weak : due) {
      std::shared_ptr<SimRun> run = weak.lock();
      if (run == nullptr) continue;
      if (std::optional<absl::Time> again = run->Tick(absl::Now())) {
        At(*again, run);
      } else {
        if (over.empty()) over_since = absl::Now();
        over.push_back(std::move(run));
      }
    }
    lock.lock();
    last_tick = absl::Now();
  }
  lock.unlock();
  for (const std::shared_ptr<SimRun>& run : over) run->Release();
}

// One simulated worker: a session backend that answers as iofleet-worker does.
class SimWorker final : public SessionBackend {
 public:
  SimWorker(int number, const SimOptions& options, const IntervalPool* pool, SimClock* clock, const std::string& controller,
            const TransportSecurity& security, std::shared_ptr<grpc::Channel> channel)
      : number_(number), options_(options), pool_(pool), clock_(clock), sessions_(this, 16),
        dialer_(&sessions_, controller, security, std::move(channel)) {}

  // The sessions end here, while this backend is whole (they call it until they are closed).
  ~SimWorker() override { Stop(); }

  void Start() { dialer_.Start(); }
  void Stop() {
    dialer_.Stop();
    sessions_.CloseAll();
  }

  absl::Status DoHello(const v1::HelloRequest& request, v1::HelloResponse* response) override {
    response->set_protocol_version(kProtocolVersion);
    response->set_min_compatible_version(kMinCompatibleProtocolVersion);
    response->set_hostname(absl::StrCat("sim-", number_));
    response->set_cores(1);
    response->set_kernel("simulated");
    response->add_engines("null");
    response->set_worker_version(kIofleetVersion);
    return CheckProtocolCompatible({kProtocolVersion, kMinCompatibleProtocolVersion}, "worker",
                                   {request.protocol_version(), request.min_compatible_version()}, "the controller");
  }
  absl::Status DoPrepare(const v1::PrepareRequest& request, v1::PrepareResponse* response, const std::function<bool()>&) override {
    if (request.run_id().empty() || request.spec().jobs_size() == 0) return absl::InvalidArgumentError("a run with an id and jobs");
    response->mutable_facts()->set_hostname(absl::StrCat("sim-", number_));
    response->mutable_facts()->set_kernel("simulated");
    std::lock_guard<std::mutex> lock(mu_);
    run_ = std::make_shared<SimRun>(request, options_, pool_, clock_, [this] { std::thread([this] { dialer_.Stop(); }).detach(); });
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> DoStart(const v1::StartRequest& request) override {
    std::shared_ptr<SimRun> run = Find(request.run_id());
    if (run == nullptr) return absl::NotFoundError(absl::StrCat("no run ", request.run_id()));
    run->Start(request.start_unix_ns());
    return request.start_unix_ns() - NowUnixNs();
  }
  absl::Status DoStop(const v1::StopRequest& request) override {
    if (std::shared_ptr<SimRun> run = Find(request.run_id())) run->Stop(request.reason(), RequestedStopCause(request));
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<SessionRun>> TakeReports(const std::string& run_id) override {
    std::shared_ptr<SimRun> run = Find(run_id);
    if (run == nullptr) return absl::NotFoundError(absl::StrCat("no run ", run_id));
    return std::shared_ptr<SessionRun>(run);
  }
  int64_t NowUnixNs() override { return absl::ToUnixNanos(absl::Now()); }

 private:
  std::shared_ptr<SimRun> Find(const std::string& run_id) {
    std::lock_guard<std::mutex> lock(mu_);
    return run_ != nullptr && run_->run_id() == run_id ? run_ : nullptr;
  }
  const int number_;
  const SimOptions options_;
  const IntervalPool* const pool_;
  SimClock* const clock_;
  SessionRegistry sessions_;
  ControllerDialer dialer_;
  std::mutex mu_;
  std::shared_ptr<SimRun> run_;
};

const std::vector<OptionSpec> kOptions = {
    {"controller", true, false, "HOST:PORT[,...]", "the controller (or relay) the simulated workers dial; several: in equal blocks"},
    {"workers", true, false, "N", "how many workers to simulate"},
    {"seed", true, false, "N", "what the made-up reports are drawn from (default 1)"},
    {"buckets", true, false, "N", "non-empty histogram buckets per job and interval (default 200)"},
    {"jitter", true, false, "DURATION", "each worker reports up to this late (default 50ms)"},
    {"stragglers", true, false, "N", "workers (the lowest indices) that report --straggler-delay late"},
    {"straggler-delay", true, false, "DURATION", "how late stragglers report (default 3s)"},
    {"lose", true, false, "N", "workers (after the stragglers) that drop their connection for good halfway"},
    {"workers-per-connection", true, false, "K", "simulated workers whose sessions share one connection (default 1: each its own)"},
    {"token-file", true, false, "FILE", "the controller's token"},
    {"help", false, false, "", "show this help"},
};

int Main(int argc, char** argv) {
  auto cl = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), kOptions);
  if (!cl.ok()) {
    std::cerr << "iofleet-fleet-sim: " << cl.status().message() << "\n";
    return 2;
  }
  if (cl->Has("help")) {
    std::cout << "usage: iofleet-fleet-sim --controller HOST:PORT --workers N [options]\n" << FormatOptionHelp(kOptions);
    return 0;
  }
  SimOptions options;
  int workers = 0, per_connection = 1;
  auto number = [&](const char* name, auto* into, int64_t min, int64_t max) {
    int64_t value = 0;
    if (!cl->Has(name)) return true;
    if (!absl::SimpleAtoi(cl->Get(name), &value) || value < min || value > max) {
      std::cerr << "iofleet-fleet-sim: --" << name << " must be a number from " << min << " to " << max << "\n";
      return false;
    }
    *into = static_cast<std::remove_pointer_t<decltype(into)>>(value);
    return true;
  };
  auto duration = [&](const char* name, absl::Duration* into) {
    if (!cl->Has(name)) return true;
    auto ns = ParseDurationNs(cl->Get(name));
    if (!ns.ok()) {
      std::cerr << "iofleet-fleet-sim: --" << name << " must be a duration (e.g. 50ms)\n";
      return false;
    }
    *into = absl::Nanoseconds(*ns);
    return true;
  };
  if (!cl->Has("controller") || !cl->Has("workers")) {
    std::cerr << "iofleet-fleet-sim: --controller and --workers are required\n";
    return 2;
  }
  if (!number("workers", &workers, 1, 100000) || !number("seed", &options.seed, 0, INT64_MAX) || !number("buckets", &options.buckets, 1, 3000) ||
      !number("stragglers", &options.stragglers, 0, 100000) || !number("lose", &options.lose, 0, 100000) ||
      !number("workers-per-connection", &per_connection, 1, 100000) || !duration("jitter", &options.jitter) ||
      !duration("straggler-delay", &options.straggler_delay)) {
    return 2;
  }
  const std::vector<std::string> controllers = absl::StrSplit(cl->Get("controller"), ',');
  for (const std::string& controller : controllers) {
    if (controller.empty()) {
      std::cerr << "iofleet-fleet-sim: --controller " << cl->Get("controller") << ": an empty address in the list\n";
      return 2;
    }
  }
  if (static_cast<size_t>(workers) < controllers.size()) {
    std::cerr << "iofleet-fleet-sim: --workers " << workers << " for " << controllers.size() << " controllers: at least one worker each\n";
    return 2;
  }
  auto security = LoadTransportSecurity(cl->Get("token-file"), "", "", "");
  if (!security.ok()) {
    std::cerr << "iofleet-fleet-sim: " << security.status().message() << "\n";
    return 2;
  }
  SetLogLevel(LogLevel::kWarning);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // As a worker's lease watchdog does: time this process could not run is not counted against
  // its runs' leases (worker/awake_clock.h).
  std::atomic<bool> done{false};
  std::thread starvation([&done] {
    constexpr auto kTick = std::chrono::milliseconds(100);
    while (!done) {
      const auto before = AwakeClock::Steady::now();
      std::this_thread::sleep_for(kTick);
      AwakeClock::NoteSleep(kTick, AwakeClock::Steady::now() - before);
    }
  });
  const IntervalPool pool(options.seed, options.buckets);
  SimClock clock;  // (outlives the fleet)
  std::vector<std::unique_ptr<SimWorker>> fleet;
  // Worker i dials the (i * k / N)-th of k controllers; a connection carries up to
  // per_connection workers of one controller's block.
  std::shared_ptr<grpc::Channel> channel;
  size_t block = SIZE_MAX;
  int on_channel = 0;
  for (int i = 0; i < workers; ++i) {
    const size_t this_block = static_cast<size_t>(i) * controllers.size() / static_cast<size_t>(workers);
    const std::string& controller = controllers[this_block];
    if (this_block != block) {
      block = this_block;
      on_channel = 0;
    }
    if (on_channel++ % per_connection == 0) channel = ControllerDialer::NewChannel(controller, *security);
    fleet.push_back(std::make_unique<SimWorker>(i, options, &pool, &clock, controller, *security, channel));
    fleet.back()->Start();
  }
  std::cout << "iofleet-fleet-sim: " << workers << " simulated workers dialling " << absl::StrJoin(controllers, ", ") << std::endl;
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  for (auto& w : fleet) w->Stop();
  done = true;
  starvation.join();
  return 0;
}

}  // namespace
}  // namespace iofleet

int main(int argc, char** argv) {
  // As in iofleet and iofleet-worker: abseil's mutex deadlock detection (on in Debian's build)
  // records every lock order gRPC takes, a cost the simulated fleet would pay per worker.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // As a real worker's control threads (worker/control_threads.h); a simulated worker has no
  // others.
  iofleet::ScheduleControlThreadsAsBatch();
  return iofleet::Main(argc, argv);
}
