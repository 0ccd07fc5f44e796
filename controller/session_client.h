// The controller's end of one worker's session stream (WorkerService.Session), on gRPC's
// callback API: no thread of its own and no polling. What the worker says is handed to a
// SessionEvents sink on gRPC's threads as it arrives; commands are queued and written one at
// a time (the callback API allows one write in flight). A thousand workers cost a thousand of
// these objects, not a thousand threads. The channel keeps the connection checked with HTTP/2
// keepalive pings, so a dead connection ends the stream (OnClosed) rather than leaving it
// silent; the session above it (ClusterSession) then resumes on a new stream.
#ifndef IOFLEET_CONTROLLER_SESSION_CLIENT_H_
#define IOFLEET_CONTROLLER_SESSION_CLIENT_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/transport_security.h"
#include "grpcpp/grpcpp.h"
#include "proto/worker_service.grpc.pb.h"

namespace iofleet {

class SessionStream;

// Receives what every session stream of a controller hears, from the stream that heard it (its
// worker index and connection number say which). Called on gRPC's threads, possibly for several
// workers at once: implementations lock what they share.
class SessionEvents {
 public:
  virtual ~SessionEvents() = default;
  virtual void OnMessage(const SessionStream& from, v1::WorkerMessage message) = 0;
  // The stream ended: the worker closed it, the connection died, or it was cancelled. Called
  // once, after the last OnMessage.
  virtual void OnClosed(const SessionStream& from, const absl::Status& status) = 0;
};

// One stream of a worker's session, whoever dialled: the controller's commands out, the
// worker's messages to a SessionEvents sink. SessionClient (the controller dialled) and
// DialInStream (controller/session_listener.h: the worker dialled) are the two.
class SessionStream {
 public:
  virtual ~SessionStream() = default;
  size_t worker() const { return worker_; }
  uint64_t connection() const { return connection_; }
  const std::string& address() const { return address_; }
  // Queues a command; dropped (false) once the stream has ended.
  virtual bool Send(v1::ControllerMessage message) = 0;
  // Ends the stream from this side.
  virtual void Cancel() = 0;
  // Waits up to `timeout` for the stream to end (its OnClosed delivered); true if it has.
  virtual bool WaitClosed(absl::Duration timeout) = 0;

 protected:
  SessionStream(size_t worker, uint64_t connection, std::string address)
      : worker_(worker), connection_(connection), address_(std::move(address)) {}
  // Set once, before any message is delivered (a stream that dialled in learns its worker
  // from its first message).
  size_t worker_;
  uint64_t connection_;
  std::string address_;
};

// The commands a stream has yet to write, one write in flight at a time (gRPC's callback API
// allows no more): both kinds of SessionStream keep one, under their own lock.
class WriteQueue {
 public:
  void Push(v1::ControllerMessage message) { queue_.push_back(std::move(message)); }
  // The next command to start writing, if none is in flight (it then is). It stays put while
  // others queue behind it: a deque keeps references on push_back.
  const v1::ControllerMessage* Next() {
    if (writing_ || queue_.empty()) return nullptr;
    writing_ = true;
    return &queue_.front();
  }
  // The write in flight is over; a written command leaves the queue.
  void Done(bool written) {
    writing_ = false;
    if (written) queue_.pop_front();
  }
  bool writing() const { return writing_; }

 private:
  std::deque<v1::ControllerMessage> queue_;
  bool writing_ = false;
};

// A channel to a worker for sessions: credentials, quick reconnects, and keepalive pings that
// end the sessions of a connection dead for about `lease`.
std::shared_ptr<grpc::Channel> SessionChannel(const std::string& address, const TransportSecurity& security,
                                              absl::Duration lease = absl::Seconds(5));

class SessionClient final : public grpc::ClientBidiReactor<v1::ControllerMessage, v1::WorkerMessage>, public SessionStream {
 public:
  // Opens the stream at once; `events` must outlive this object. `connection` tells this
  // stream from earlier ones to the same worker (a session resumed after a cut). With
  // `wait_for_ready` a worker still starting is waited for; without, a connection that fails
  // ends the stream at once (a resume wants to know that nothing listens any more).
  SessionClient(v1::WorkerService::Stub* stub, size_t worker, std::string address, const TransportSecurity& security,
                SessionEvents* events, uint64_t connection = 0, bool wait_for_ready = true);
  ~SessionClient() override;  // cancels and waits for the session's end

  // SessionStream
  bool Send(v1::ControllerMessage message) override;
  void Cancel() override;
  bool WaitClosed(absl::Duration timeout) override;

  // grpc::ClientBidiReactor
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  // With mu_ held: the next queued command to write, if none is in flight (then marked so).
  const v1::ControllerMessage* NextWriteLocked();
  // With mu_ held: whether the hold taken at the start is to be removed now (the stream is
  // ending and no write is in flight); true once.
  bool ReleaseHoldLocked();

  SessionEvents* const events_;
  grpc::ClientContext context_;
  v1::WorkerMessage incoming_;
  std::mutex mu_;
  std::condition_variable closed_cv_;
  WriteQueue outgoing_;
  bool ending_ = false;         // no more writes: the stream is ending
  bool hold_released_ = false;
  bool closed_ = false;         // OnDone has run
};

}  // namespace iofleet

#endif  // IOFLEET_CONTROLLER_SESSION_CLIENT_H_
