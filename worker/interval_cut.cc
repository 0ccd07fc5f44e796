#include "worker/interval_cut.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <thread>

namespace iofleet {

bool g_collector_has_membarrier = false;

namespace {

int Membarrier(int command) { return static_cast<int>(::syscall(__NR_membarrier, command, 0, 0)); }

// After the flips, before waiting: every IO thread's "recording" store that precedes its read
// of the epoch is visible here, or its read sees the new epoch.
void CollectorBarrier() {
  if (g_collector_has_membarrier && Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // Without membarrier the IO path fences itself (IoPathBarrier); this is the other half.
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace

void PrepareIntervalCuts() {
  static std::once_flag once;
  std::call_once(once, [] {
    const int supported = Membarrier(MEMBARRIER_CMD_QUERY);
    g_collector_has_membarrier = supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                                 Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  });
}

std::vector<DirectionCut> CutIntervals(absl::Span<DirectionCounters* const> counters) {
  if (counters.empty()) return {};  // nothing to close: no barrier either
  std::vector<uint64_t> closed(counters.size());
  for (size_t i = 0; i < counters.size(); ++i) {
    closed[i] = counters[i]->epoch.load(std::memory_order_relaxed);
    counters[i]->epoch.store(closed[i] + 1, std::memory_order_relaxed);
  }
  CollectorBarrier();
  std::vector<DirectionCut> cuts(counters.size());
  for (size_t i = 0; i < counters.size(); ++i) {
    DirectionCounters& c = *counters[i];
    // A Record under way may still be writing the closed buffer: wait for it to end (any
    // Record begun after the barrier writes the other one). The acquire load of any later
    // sequence value makes everything written into the closed buffer visible.
    const uint64_t under_way = c.sequence.load(std::memory_order_acquire);
    if (under_way % 2 == 1) {
      while (c.sequence.load(std::memory_order_acquire) == under_way) std::this_thread::yield();
    }
    IntervalBuffer& b = c.buffers[closed[i] & 1];
    DirectionCut& cut = cuts[i];
    cut.latency = b.latency.Take();
    cut.submit = b.submit_latency.Take();
    cut.completion = b.completion_latency.Take();
    for (uint32_t p = 0; p < c.priorities; ++p) cut.priority_completion.push_back(b.priority_completion[p].Take());
    cut.bytes = b.bytes.exchange(0, std::memory_order_relaxed);
    cut.errors = b.errors.exchange(0, std::memory_order_relaxed);
    for (auto& slot : b.slowest.slots) {
      const uint64_t latency = slot.latency_ns.exchange(0, std::memory_order_relaxed);
      if (latency == 0) continue;
      cut.slowest.push_back({latency, slot.complete_ns.load(std::memory_order_relaxed), slot.offset.load(std::memory_order_relaxed),
                             slot.file.load(std::memory_order_relaxed)});
    }
  }
  return cuts;
}

}  // namespace iofleet
