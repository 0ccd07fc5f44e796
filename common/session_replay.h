// One direction of a resumable session: what a sender has sent and the peer has not yet
// acknowledged, kept so a stream cut short can be resumed on a new one without losing or
// repeating anything. Each message gets its place in the session (1, 2, ...) and carries the
// highest place of the peer's messages this side has received (the acknowledgement the peer
// trims its own buffer with); the receiving side drops anything at or below what it already
// has. Both ends of a session — the worker's WorkerSession and the controller's
// ClusterSession — keep one per direction they send. Not thread-safe: the owner locks.
#ifndef IOFLEET_COMMON_SESSION_REPLAY_H_
#define IOFLEET_COMMON_SESSION_REPLAY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

namespace iofleet {

template <typename Message>
class SessionReplay {
 public:
  // Keeps at most `capacity` unacknowledged messages: a peer that stops acknowledging cannot
  // make this side allocate without bound. Past it the oldest are dropped, and the session can
  // then no longer be resumed (Resend says so).
  explicit SessionReplay(size_t capacity) : capacity_(capacity) {}

  // Numbers `message`, stamps what this side has received, and keeps it. The kept message is
  // the one to send: it is shared, not copied (a worker's interval reports are kilobytes of
  // histograms, sent once and kept until acknowledged).
  std::shared_ptr<const Message> Number(Message message) {
    message.set_sequence(++sent_);
    message.set_acknowledged(received_);
    auto kept = std::make_shared<const Message>(std::move(message));
    kept_.push_back(kept);
    if (kept_.size() > capacity_) kept_.pop_front();
    return kept;
  }

  // Whether a message from the peer is new (and records it); numbered 0: not part of the flow.
  // Its acknowledgement trims what is kept. (`Incoming` is the other direction's message.)
  template <typename Incoming>
  bool Receive(const Incoming& message) {
    Acknowledged(message.acknowledged());
    if (message.sequence() == 0) return true;
    if (message.sequence() <= received_) return false;
    received_ = message.sequence();
    return true;
  }

  // The peer has every message up to `through`.
  void Acknowledged(uint64_t through) {
    while (!kept_.empty() && kept_.front()->sequence() <= through) kept_.pop_front();
  }

  // For a resumed stream: hands every message after `peer_received` to `send`, oldest first,
  // each stamped with what this side has received now. False (nothing sent) when some of them
  // were dropped at capacity: the peer would miss them.
  bool Resend(uint64_t peer_received, const std::function<void(const std::shared_ptr<const Message>&)>& send) {
    Acknowledged(peer_received);
    const uint64_t first_missing = peer_received + 1;
    if (first_missing <= sent_ && (kept_.empty() || kept_.front()->sequence() != first_missing)) return false;
    for (std::shared_ptr<const Message>& kept : kept_) {
      if (kept->acknowledged() != received_) {
        // A copy for the new stamp: the old one may still sit in a cut stream's queue.
        auto restamped = std::make_shared<Message>(*kept);
        restamped->set_acknowledged(received_);
        kept = std::move(restamped);
      }
      send(kept);
    }
    return true;
  }

  uint64_t received() const { return received_; }
  uint64_t sent() const { return sent_; }
  size_t unacknowledged() const { return kept_.size(); }

 private:
  const size_t capacity_;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  std::deque<std::shared_ptr<const Message>> kept_;
};

}  // namespace iofleet

#endif  // IOFLEET_COMMON_SESSION_REPLAY_H_
