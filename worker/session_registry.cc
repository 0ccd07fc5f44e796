#include "worker/session_registry.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace iofleet {

absl::Status CheckSessionId(const std::string& id) {
  if (id.size() > 128) return absl::InvalidArgumentError("session id longer than 128 bytes");
  for (unsigned char c : id) {
    if (c < 0x21 || c > 0x7e) return absl::InvalidArgumentError("session id with a non-printable byte");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<WorkerSession>> SessionRegistry::New(const std::string& id) {
  // Whoever named it (a controller that dialled here, or one this host dialled).
  if (absl::Status valid = CheckSessionId(id); !valid.ok()) return valid;
  auto session = std::make_shared<WorkerSession>(backend_, id);
  if (id.empty()) return session;  // not resumable: nobody can name it again
  std::shared_ptr<WorkerSession> replaced;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = sessions_.find(id); it != sessions_.end()) {
      replaced = it->second;  // a controller does not reuse a name: whoever had it is done
      sessions_.erase(it);
    }
    if (sessions_.size() >= max_sessions_) {
      return absl::ResourceExhaustedError(absl::StrCat("this worker holds ", sessions_.size(), " sessions already (at most ", max_sessions_, ")"));
    }
    sessions_.emplace(id, session);
  }
  if (replaced) replaced->Close();
  return session;
}

std::shared_ptr<WorkerSession> SessionRegistry::Find(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

void SessionRegistry::Forget(const std::shared_ptr<WorkerSession>& session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = sessions_.find(session->id()); it != sessions_.end() && it->second == session) sessions_.erase(it);
  }
  session->Close();
}

void SessionRegistry::ForgetExpired() {
  const auto now = AwakeClock::Now();
  std::vector<std::shared_ptr<WorkerSession>> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (it->second->Expired(now)) {
        expired.push_back(it->second);
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& session : expired) session->Close();  // outside the lock: it joins its threads
}

void SessionRegistry::CloseAll() {
  std::map<std::string, std::shared_ptr<WorkerSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  for (auto& [id, session] : sessions) session->Close();
}

}  // namespace iofleet
