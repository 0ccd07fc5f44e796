#include "controller/relay_command.h"

#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/command_line.h"
#include "common/transport_security.h"
#include "common/units.h"
#include "controller/cluster_session.h"
#include "controller/relay.h"
#include "worker/controller_dialer.h"

namespace iofleet {
namespace {

const std::vector<OptionSpec> kRelayOptions = {
    {"listen", true, false, "HOST:PORT", "workers (or relays) dial in here (iofleet-worker --controller HOST:PORT)"},
    {"controller", true, false, "HOST:PORT", "the controller (iofleet run|mdtest|compare --listen) this relay dials"},
    {"expect-workers", true, false, "N", "dial the controller once N workers have dialled in"},
    {"wait", true, false, "DURATION", "how long to wait for them (default 10m)"},
    {"lease", true, false, "DURATION", "the workers stop IO if the relay is silent this long (default 5s)"},
    {"token-file", true, false, "FILE", "the shared token, both ways: the workers' and the controller's --token-file"},
    {"tls-cert", true, false, "PEM", "mutual TLS, both ways: the relay's certificate (with --tls-key and --tls-ca)"},
    {"tls-key", true, false, "PEM", "mutual TLS: the relay's private key"},
    {"tls-ca", true, false, "PEM", "mutual TLS: the CA that signs the workers' and the controller's certificates"},
    {"help", false, false, "", "show this help"},
};

int UsageError(const std::string& message) {
  std::cerr << "iofleet relay: " << message << "\n(iofleet relay --help shows the options)\n";
  return 2;
}

}  // namespace

int RunRelay(const std::vector<std::string>& args) {
  auto cl = ParseCommandLine(args, kRelayOptions);
  if (!cl.ok()) return UsageError(std::string(cl.status().message()));
  if (cl->Has("help")) {
    std::cout << "usage: iofleet relay --listen HOST:PORT --controller HOST:PORT --expect-workers N [options]\n\n"
                 "Stands for N workers towards the controller: they dial the relay, the relay dials the\n"
                 "controller, and each interval goes up as one exact merge of theirs. Relays stack.\n\n"
              << FormatOptionHelp(kRelayOptions);
    return 0;
  }
  if (!cl->positional().empty()) return UsageError(absl::StrCat("unexpected argument '", cl->positional()[0], "'"));
  for (const char* required : {"listen", "controller", "expect-workers"}) {
    if (!cl->Has(required)) return UsageError(absl::StrCat("--", required, " is required"));
  }
  int expect = 0;
  if (!absl::SimpleAtoi(cl->Get("expect-workers"), &expect) || expect < 1 || expect > 100000) {
    return UsageError(absl::StrCat("--expect-workers must be a number from 1 to 100000, not '", cl->Get("expect-workers"), "'"));
  }
  SessionOptions options;
  options.listen = cl->Get("listen");
  options.expect_workers = expect;
  for (const char* name : {"wait", "lease"}) {
    if (!cl->Has(name)) continue;
    auto ns = ParseDurationNs(cl->Get(name));
    if (!ns.ok() || *ns <= 0) return UsageError(absl::StrCat("--", name, " must be a positive duration (e.g. 5s), not '", cl->Get(name), "'"));
    (std::string(name) == "wait" ? options.wait : options.lease) = absl::Nanoseconds(*ns);
  }
  auto security = LoadTransportSecurity(cl->Get("token-file"), cl->Get("tls-cert"), cl->Get("tls-key"), cl->Get("tls-ca"));
  if (!security.ok()) return UsageError(std::string(security.status().message()));
  const std::string controller = cl->Get("controller");
  // The relay relays the controller's commands: beyond loopback it must know the controller is
  // the user's, as a worker must.
  if (!IsLoopbackAddress(controller) && security->token.empty() && !security->tls()) {
    return UsageError(absl::StrCat("dialling the controller at ", controller,
                                   " (beyond 127.0.0.1) needs --token-file FILE or --tls-cert/--tls-key/--tls-ca: it tells the workers what to write"));
  }
  options.security = *security;

  v1::RunReport ignored;  // the relay reports nothing itself: its workers' figures go up
  absl::StatusOr<std::unique_ptr<ClusterSession>> workers = ClusterSession::Open(options, &ignored);
  if (!workers.ok()) {
    std::cerr << "iofleet relay: " << workers.status().message() << "\n";
    return 1;
  }
  std::cerr << "iofleet relay: " << (*workers)->relayed_workers() << " worker(s) here; dialling the controller at " << controller << "\n";
  {
    RelayBackend backend(workers->get());
    ControllerDialer dialer(backend.sessions(), controller, *security);
    dialer.Start();
    (*workers)->WaitForInterrupt();
    std::cerr << "iofleet relay: interrupted; ending\n";
    dialer.Stop();
  }
  workers->reset();
  return 0;
}

}  // namespace iofleet
