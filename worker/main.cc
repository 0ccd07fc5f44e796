// iofleet-worker: the daemon that does IO for a controller.
//   iofleet-worker --listen 127.0.0.1:7420 --allow-root /mnt/nfs [--allow-root DIR ...]
// Prints "iofleet-worker listening on HOST:PORT" on stdout once it accepts connections
// (port 0 picks a free port, which is how the controller starts local workers).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/command_line.h"
#include "common/confined_path.h"
#include "common/listen_address.h"
#include "common/launch_rank.h"
#include "common/log.h"
#include "common/nfs_url.h"
#include "common/protocol_version.h"
#include "common/units.h"
#include "job/run_limits.h"
#include "metrics/interval_metrics.h"
#include "common/transport_security.h"
#include "grpcpp/grpcpp.h"
#include "worker/controller_dialer.h"
#include "worker/control_threads.h"
#include "worker/worker_service.h"

namespace iofleet {
namespace {

const std::vector<OptionSpec> kOptions = {
    {"listen", true, false, "HOST:PORT", "address to serve on (default 127.0.0.1:7420, or none with --controller; port 0 = any free port)"},
    {"controller", true, false, "HOST:PORT", "dial this controller (iofleet run|mdtest|compare --listen) and serve its runs, one after another"},
    {"allow-root", true, true, "DIR", "a directory under which jobs may do IO (repeatable, at least one)"},
    {"log-level", true, false, "LEVEL", "debug, info, warning or error (default info)"},
    {"token-file", true, false, "FILE", "require this shared token from controllers (x-iofleet-token)"},
    {"token-env", true, false, "VAR", "the same, from environment variable VAR (how iofleet run --slurm hands its workers the run's token)"},
    {"create-roots", false, false, "", "create the --allow-root directories that do not exist yet (as mkdir -p)"},
    {"stdin-lifeline", false, false, "", "exit when stdin closes (the connection of the launcher that started it: iofleet run --ssh)"},
    {"sessions", true, false, "N", "with --controller: serve N sessions (runs), then exit 0 (as workers a launcher starts for one run)"},
    {"tls-cert", true, false, "PEM", "mutual TLS: this worker's certificate (with --tls-key and --tls-ca)"},
    {"tls-key", true, false, "PEM", "mutual TLS: this worker's private key"},
    {"tls-ca", true, false, "PEM", "mutual TLS: the CA that signs controllers' certificates"},
    {"max-run-memory", true, false, "SIZE", "memory the runs this worker holds may make it allocate, together (default 4g); larger runs are refused"},
    {"metrics-listen", true, false, "HOST:PORT", "serve Prometheus /metrics here (ops, bytes, errors, latency histogram, queue depth per run/job/direction)"},
    {"advertise-protocol-version", true, false, "N", "testing only: announce protocol version N"},
    {"clock-skew", true, false, "DURATION", "testing only: answer clock probes as if this clock were DURATION ahead (e.g. 50ms, -20ms)"},
    {"help", false, false, "", "show this help"},
    {"version", false, false, "", "show the version and the protocol versions spoken"},
};

int Main(int argc, char** argv) {
  auto args = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), kOptions);
  if (!args.ok()) {
    std::cerr << "iofleet-worker: " << args.status().message() << "\n";
    return 2;
  }
  if (args->Has("help")) {
    std::cout << "usage: iofleet-worker --listen HOST:PORT --allow-root DIR [--allow-root DIR ...]\n"
              << "       iofleet-worker --controller HOST:PORT --allow-root DIR [--allow-root DIR ...]\n"
              << FormatOptionHelp(kOptions);
    return 0;
  }
  if (args->Has("version")) {
    std::cout << "iofleet-worker " << kIofleetVersion << " (protocol " << kProtocolVersion << ", accepts controllers from protocol "
              << kMinCompatibleProtocolVersion << ")\n";
    return 0;
  }
  if (!args->positional().empty()) {
    std::cerr << "iofleet-worker: unexpected argument '" << args->positional()[0] << "'\n";
    return 2;
  }
  const std::string level = args->Get("log-level", "info");
  if (level == "debug") SetLogLevel(LogLevel::kDebug);
  else if (level == "warning") SetLogLevel(LogLevel::kWarning);
  else if (level == "error") SetLogLevel(LogLevel::kError);
  else if (level != "info") {
    std::cerr << "iofleet-worker: --log-level must be debug, info, warning or error\n";
    return 2;
  }
  if (args->Has("create-roots")) {
    for (const std::string& root : args->GetAll("allow-root")) {
      std::error_code error;
      if (!IsNfsUrl(root) && !std::filesystem::create_directories(root, error) && error) {
        std::cerr << "iofleet-worker: --create-roots: cannot create " << root << ": " << error.message() << "\n";
        return 1;
      }
    }
  }
  auto policy = PathPolicy::Create(args->GetAll("allow-root"));
  if (!policy.ok()) {
    std::cerr << "iofleet-worker: " << policy.status().message() << "\n";
    return 2;
  }
  RaiseDescriptorLimit();  // (before any task keeps directories open)
  // Every later open is resolved by the kernel beneath these roots (openat2 RESOLVE_BENEATH).
  if (absl::Status confined = ConfineOpensBeneath(policy->roots()); !confined.ok()) {
    std::cerr << "iofleet-worker: " << confined.message() << "\n";
    return 2;
  }
  ProtocolVersions versions{kProtocolVersion, kMinCompatibleProtocolVersion};
  if (args->Has("advertise-protocol-version")) {
    if (!absl::SimpleAtoi(args->Get("advertise-protocol-version"), &versions.version)) {
      std::cerr << "iofleet-worker: --advertise-protocol-version needs a number\n";
      return 2;
    }
    versions.min_compatible = std::min(versions.min_compatible, versions.version);
  }

  // Handle SIGINT/SIGTERM on a thread of our own (sigwait), so shutdown is orderly.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const std::string controller = args->Get("controller");
  // Dialling a controller, the worker serves no port of its own unless asked to.
  const std::string listen = controller.empty() || args->Has("listen") ? args->Get("listen", "127.0.0.1:7420") : "";
  auto security = LoadTransportSecurity(args->Get("token-file"), args->Get("tls-cert"), args->Get("tls-key"), args->Get("tls-ca"));
  if (!security.ok()) {
    std::cerr << "iofleet-worker: " << security.status().message() << "\n";
    return 2;
  }
  if (args->Has("token-env")) {
    // A launcher's way to hand over a token without a file on every node (srun passes the
    // controller's environment to its tasks).
    const std::string variable = args->Get("token-env");
    const char* value = std::getenv(variable.c_str());
    const std::string token = value == nullptr ? "" : std::string(absl::StripAsciiWhitespace(value));
    if (args->Has("token-file")) {
      std::cerr << "iofleet-worker: give --token-file or --token-env, not both\n";
      return 2;
    }
    if (token.empty()) {
      std::cerr << "iofleet-worker: --token-env " << variable << ": the variable is " << (value == nullptr ? "not set" : "empty") << "\n";
      return 2;
    }
    security->token = token;
  }
  uint64_t sessions = 0;
  if (args->Has("sessions")) {
    if (controller.empty()) {
      std::cerr << "iofleet-worker: --sessions applies only with --controller\n";
      return 2;
    }
    if (!absl::SimpleAtoi(args->Get("sessions"), &sessions) || sessions < 1) {
      std::cerr << "iofleet-worker: --sessions must be a number of at least 1, not '" << args->Get("sessions") << "'\n";
      return 2;
    }
  }
  // Started as one of a numbered set (mpirun, srun, an Indexed Job): the controller numbers
  // the workers that dial it the same way.
  absl::StatusOr<std::optional<LaunchRank>> rank = LaunchRankFromEnvironment();
  if (!rank.ok()) {
    std::cerr << "iofleet-worker: " << rank.status().message() << "\n";
    return 2;
  }
  // Anyone who can reach a worker can make it write files: beyond loopback, only with a
  // token or mutual TLS.
  if (!controller.empty() && !IsLoopbackAddress(controller) && security->token.empty() && !security->tls()) {
    std::cerr << "iofleet-worker: dialling the controller at " << controller
              << " (beyond 127.0.0.1) needs --token-file FILE or --tls-cert/--tls-key/--tls-ca: the controller tells this worker what to "
                 "write, so it must prove it is yours\n";
    return 2;
  }
  if (!listen.empty() && !IsLoopbackAddress(listen) && security->token.empty() && !security->tls()) {
    std::cerr << "iofleet-worker: listening on " << listen
              << " (beyond 127.0.0.1) needs --token-file FILE or --tls-cert/--tls-key/--tls-ca, so that strangers cannot drive it\n";
    return 2;
  }
  uint64_t max_run_memory = kDefaultMaxRunMemory;
  if (args->Has("max-run-memory")) {
    auto size = ParseSize(args->Get("max-run-memory"));
    if (!size.ok() || *size < (64u << 20)) {
      std::cerr << "iofleet-worker: --max-run-memory must be a size of at least 64m (e.g. 8g)\n";
      return 2;
    }
    max_run_memory = *size;
  }
  if (!listen.empty() && !security->token.empty() && !security->tls() && !IsLoopbackAddress(listen)) {
    // The token travels in every call's metadata: in plaintext, anyone on the path can read it.
    std::cerr << "iofleet-worker: WARNING: listening on " << listen << " in plaintext with --token-file: the token crosses the network "
              << "unencrypted, so anyone who can watch the traffic can take it and drive this worker. Use mutual TLS "
              << "(--tls-cert, --tls-key, --tls-ca) beyond a trusted network.\n";
  }
  // gRPC sets SO_REUSEPORT, which would let a second worker share a port already in use and
  // take half of the controller's calls: bind it once ourselves first, without it.
  if (absl::Status free = listen.empty() ? absl::OkStatus() : CheckPortFree(listen); !free.ok()) {
    std::cerr << "iofleet-worker: " << free.message() << "\n";
    return 1;
  }
  std::unique_ptr<IntervalMetrics> metrics;
  if (args->Has("metrics-listen")) {
    auto served = IntervalMetrics::Serve(args->Get("metrics-listen"), "iofleet_worker");
    if (!served.ok()) {
      std::cerr << "iofleet-worker: " << served.status().message() << "\n";
      return 2;
    }
    metrics = std::move(*served);
    std::printf("iofleet-worker metrics on http://%s/metrics\n", metrics->address().c_str());
  }
  WorkerServiceImpl service(std::move(*policy), versions, security->token, metrics.get(), max_run_memory);
  if (args->Has("clock-skew")) {
    absl::Duration skew;
    if (!absl::ParseDuration(args->Get("clock-skew"), &skew)) {
      std::cerr << "iofleet-worker: --clock-skew needs a duration (e.g. 50ms)\n";
      return 2;
    }
    service.set_clock_skew_for_testing(skew);
  }
  std::unique_ptr<grpc::Server> server;
  if (!listen.empty()) {
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    // Runs live on their leases, renewed by the controller's messages (worker/worker_session.h),
    // not on the connection: the controller's pings (every second) are allowed here, and the
    // worker's own only clear away a connection dead for a long while (a session it carried
    // waits, detached, for a resume). Short timeouts would tear down the connections of a
    // saturated host, whose threads answer pings seconds late.
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 500);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // No bandwidth-probing pings: a session carries a few messages a second, and every ping
    // wakes both ends (what a thousand workers on one host cannot afford).
    builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    builder.AddListeningPort(listen, ServerCredentialsFor(*security), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    if (!server || port == 0) {
      std::cerr << "iofleet-worker: cannot listen on " << listen << " (address in use or invalid?)\n";
      return 1;
    }
    const std::string host = listen.substr(0, listen.rfind(':'));
    SetLogPrefix(absl::StrCat("iofleet-worker ", host, ":", port));
    std::printf("iofleet-worker listening on %s:%d\n", host.c_str(), port);
    std::fflush(stdout);
    Log(LogLevel::kInfo, "ready");
  }
  std::unique_ptr<ControllerDialer> dialer;
  std::thread dialling;
  if (!controller.empty()) {
    if (listen.empty()) SetLogPrefix("iofleet-worker");
    dialer = std::make_unique<ControllerDialer>(service.sessions(), controller, *security);
    if (sessions > 0) {
      dialer->set_session_limit(sessions, [sessions] {
        Log(LogLevel::kInfo, absl::StrCat("served ", sessions, " session(s) (--sessions): exiting"));
        ::kill(::getpid(), SIGTERM);  // the main thread's sigwait: the usual orderly shutdown
      });
    }
    if (rank->has_value()) {
      dialer->set_launch_rank((*rank)->rank);
      Log(LogLevel::kInfo, absl::StrCat("launch rank ", (*rank)->rank, " (", (*rank)->source, "): the controller makes this worker number ", (*rank)->rank));
    }
    dialling = std::thread([&dialer] { dialer->Run(); });
    std::printf("iofleet-worker dialling the controller at %s\n", controller.c_str());
    std::fflush(stdout);
  }

  if (args->Has("stdin-lifeline")) {
    // The launcher's connection (ssh) is this worker's lifeline: once it is gone — the run is
    // over, the controller was stopped or died — nobody wants this worker any more.
    std::thread([] {
      char buffer[256];
      while (::read(STDIN_FILENO, buffer, sizeof(buffer)) > 0) {
      }
      Log(LogLevel::kInfo, "stdin closed (--stdin-lifeline: the launcher's connection ended): exiting");
      ::kill(::getpid(), SIGTERM);
    }).detach();
  }
  int received = 0;
  sigwait(&signals, &received);
  Log(LogLevel::kInfo, absl::StrCat("signal ", received, ": stopping runs and shutting down"));
  service.StopAll("the worker received a stop signal");
  if (dialer != nullptr) {
    dialer->Stop();
    dialling.join();
  }
  if (server != nullptr) server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}

}  // namespace
}  // namespace iofleet

int main(int argc, char** argv) {
  // abseil's mutex deadlock detection (on in Debian's build) records every lock order gRPC
  // takes: a few percent of the controller's CPU at a thousand sessions, for a check meant for
  // development.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Before any thread starts: every thread made after this inherits it, and the threads that do
  // the measured work opt out (worker/control_threads.h).
  iofleet::ScheduleControlThreadsAsBatch();
  return iofleet::Main(argc, argv);
}
