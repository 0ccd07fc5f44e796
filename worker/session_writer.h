// The worker's side of a session stream's writes, whichever way the stream goes (the
// controller's call to WorkerService.Session, or the worker's own to ControllerService.Session):
// one thread writes what the session queues, so the thread reading the controller's commands
// never waits for the network (a renewal is read and applied even while reports queue behind a
// slow controller). The session's report window bounds the queue.
#ifndef IOFLEET_WORKER_SESSION_WRITER_H_
#define IOFLEET_WORKER_SESSION_WRITER_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "proto/worker_service.pb.h"

namespace iofleet {

// `Stream` has bool Write(const v1::WorkerMessage&) (grpc::ServerReaderWriter or
// grpc::ClientReaderWriter).
template <typename Stream>
class SessionWriter {
 public:
  explicit SessionWriter(Stream* stream) : stream_(stream), thread_([this] { Run(); }) {}
  ~SessionWriter() {  // writes what is queued first (unless the stream broke)
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Queues `message`; false once the stream is broken or the writer done.
  bool Send(std::shared_ptr<const v1::WorkerMessage> message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_ || done_) return false;
    queue_.push_back(std::move(message));
    cv_.notify_all();
    return true;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return done_ || !queue_.empty(); });
      if (queue_.empty()) return;  // done, everything written
      std::shared_ptr<const v1::WorkerMessage> next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      const bool written = stream_->Write(*next);
      lock.lock();
      if (!written) {
        broken_ = true;
        queue_.clear();
        return;
      }
    }
  }
  Stream* const stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<const v1::WorkerMessage>> queue_;
  bool done_ = false, broken_ = false;
  std::thread thread_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_SESSION_WRITER_H_
