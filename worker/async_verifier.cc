#include "worker/async_verifier.h"

#include <utility>

namespace iofleet {

AsyncVerifier::AsyncVerifier(uint32_t threads, uint64_t max_bytes, std::function<absl::Status(const Block&)> check)
    : max_bytes_(max_bytes), check_(std::move(check)) {
  for (uint32_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

AsyncVerifier::~AsyncVerifier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool AsyncVerifier::Submit(const char* data, uint64_t length, uint64_t offset, size_t file_index, int64_t generation,
                           const std::optional<BlockWriter>& writer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queued_bytes_ + length > max_bytes_) return false;
    queue_.push_back(Block{.data = std::string(data, length), .offset = offset, .file_index = file_index, .generation = generation, .writer = writer});
    queued_bytes_ += length;
  }
  work_ready_.notify_one();
  return true;
}

void AsyncVerifier::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
}

std::vector<std::pair<AsyncVerifier::Block, absl::Status>> AsyncVerifier::TakeFailures() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(failures_, {});
}

void AsyncVerifier::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Block block = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    absl::Status checked = check_(block);
    lock.lock();
    queued_bytes_ -= block.data.size();
    if (!checked.ok()) failures_.emplace_back(std::move(block), std::move(checked));
    --busy_;
    if (queue_.empty() && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace iofleet
