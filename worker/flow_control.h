// fio's flow=WEIGHT, flow_id and flow_sleep: the job threads of one flow id share their IOs in
// proportion to their weights (flow=1 beside flow=8: about 1 IO in 9 is the first's). Each
// thread counts its IOs and the flow counts them all; a thread whose share of the count is above
// its share of the weight holds off (after flow_sleep, or at once) until the others catch up.
// A flow spans the jobs of one run on one worker: every worker keeps the same proportions
// among its own threads.
#ifndef IOFLEET_WORKER_FLOW_CONTROL_H_
#define IOFLEET_WORKER_FLOW_CONTROL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace iofleet {

class Flow {
 public:
  // fio's flow_threshold_exceeded: whether a thread of `weight` that has issued `mine` IOs is
  // ahead of its share.
  bool Ahead(uint64_t mine, uint32_t weight) const {
    const double count_share = static_cast<double>(mine) / static_cast<double>(counter_.load(std::memory_order_relaxed));
    const double weight_share = static_cast<double>(weight) / static_cast<double>(std::max<int64_t>(1, total_weight_.load(std::memory_order_relaxed)));
    return count_share > weight_share;
  }
  // A thread issued an IO under the flow (fio counts it as it passes the check).
  void Issued() { counter_.fetch_add(1, std::memory_order_relaxed); }
  // A thread starts or stops taking part (at its start, and at its end with what it issued).
  void Join(uint32_t weight) { total_weight_.fetch_add(weight, std::memory_order_relaxed); }
  void Leave(uint64_t issued, uint32_t weight) {
    counter_.fetch_sub(issued, std::memory_order_relaxed);
    total_weight_.fetch_sub(weight, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> counter_{1};  // 1, as fio's: a share of it is never a division by zero
  std::atomic<int64_t> total_weight_{0};
};

// The flows of one run on one worker, by flow_id.
class FlowRegistry {
 public:
  Flow* Get(uint32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Flow>& flow = flows_[id];
    if (!flow) flow = std::make_unique<Flow>();
    return flow.get();
  }

 private:
  std::mutex mu_;
  std::map<uint32_t, std::unique_ptr<Flow>> flows_;
};

}  // namespace iofleet

#endif  // IOFLEET_WORKER_FLOW_CONTROL_H_
