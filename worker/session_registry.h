// The sessions a worker (or a relay) holds, by the controller's name for them: attached to a
// stream, or detached and waiting for the controller to resume them. Bounded: a controller that
// opens sessions without end is refused past `max_sessions`.
#ifndef IOFLEET_WORKER_SESSION_REGISTRY_H_
#define IOFLEET_WORKER_SESSION_REGISTRY_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "worker/worker_session.h"

namespace iofleet {

class SessionRegistry {
 public:
  SessionRegistry(SessionBackend* backend, size_t max_sessions) : backend_(backend), max_sessions_(max_sessions) {}
  ~SessionRegistry() { CloseAll(); }

  SessionBackend* backend() const { return backend_; }

  // A new session named `id` (empty: not resumable, not kept); one of the same name is closed.
  absl::StatusOr<std::shared_ptr<WorkerSession>> New(const std::string& id);
  std::shared_ptr<WorkerSession> Find(const std::string& id);
  void Forget(const std::shared_ptr<WorkerSession>& session);
  // Closes the sessions detached for longer than their runs' leases.
  void ForgetExpired();
  void CloseAll();

 private:
  SessionBackend* const backend_;
  const size_t max_sessions_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<WorkerSession>> sessions_;
};

// A controller's name for a session: printable, at most 128 bytes.
absl::Status CheckSessionId(const std::string& id);

}  // namespace iofleet

#endif  // IOFLEET_WORKER_SESSION_REGISTRY_H_
