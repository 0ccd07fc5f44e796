#include "job/io_priority.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace iofleet {
namespace {

constexpr uint32_t kClassShift = 13, kHintShift = 3;
constexpr uint32_t kRealtime = 1;

absl::Status CheckPriority(uint32_t priority_class, uint32_t level, uint32_t hint, const std::string& what) {
  if (priority_class > 3) return absl::InvalidArgumentError(absl::StrCat(what, ": class ", priority_class, " is not 0 to 3 (none, realtime, best effort, idle)"));
  if (level > 7) return absl::InvalidArgumentError(absl::StrCat(what, ": level ", level, " is not 0 to 7"));
  if (hint > 7) return absl::InvalidArgumentError(absl::StrCat(what, ": hint ", hint, " is not 0 to 7"));
  return absl::OkStatus();
}

// The value of direction `d` of a per-direction option (one value applies to both).
uint32_t Of(const google::protobuf::RepeatedField<uint32_t>& values, int d, uint32_t unset) {
  if (values.empty()) return unset;
  return values.size() == 1 ? values[0] : values[std::min(d, values.size() - 1)];
}

}  // namespace

uint32_t IoprioValue(uint32_t priority_class, uint32_t level, uint32_t hint) {
  return priority_class << kClassShift | hint << kHintShift | level;
}
uint32_t IoprioClass(uint32_t ioprio) { return ioprio >> kClassShift; }
uint32_t IoprioLevel(uint32_t ioprio) { return ioprio & 7; }
uint32_t IoprioHint(uint32_t ioprio) { return (ioprio >> kHintShift) & 0x3ff; }

absl::StatusOr<IoPriorities> ResolveIoPriorities(const v1::JobSpec& job) {
  IoPriorities p;
  if (job.has_prio_class() || job.has_prio_level()) {
    // fio: prio alone is a best-effort level, prioclass alone level 0.
    const uint32_t priority_class = job.has_prio_class() ? job.prio_class() : 2;
    const uint32_t level = job.has_prio_level() ? job.prio_level() : 0;
    if (absl::Status s = CheckPriority(priority_class, level, 0, "prioclass/prio"); !s.ok()) return s;
    p.thread_priority = true;
    p.default_ioprio = IoprioValue(priority_class, level);
  }
  const v1::CommandPriorities& c = job.cmdprio();
  for (const auto* values : {&c.percent(), &c.priority_class(), &c.level(), &c.hint()}) {
    if (values->size() > 2) return absl::InvalidArgumentError("cmdprio options take at most two values (reads,writes)");
  }
  const bool percentages = std::any_of(c.percent().begin(), c.percent().end(), [](uint32_t v) { return v > 0; });
  const bool split = c.read_bssplit_size() > 0 || c.write_bssplit_size() > 0;
  if (percentages && split) return absl::InvalidArgumentError("cmdprio_percentage and cmdprio_bssplit cannot be combined (as in fio)");
  for (int d = 0; d < 2; ++d) {
    const uint32_t priority_class = Of(c.priority_class(), d, 0) ? Of(c.priority_class(), d, 0) : kRealtime;
    const uint32_t level = Of(c.level(), d, 0), hint = Of(c.hint(), d, 0);
    if (absl::Status s = CheckPriority(priority_class, level, hint, "cmdprio_class/cmdprio/cmdprio_hint"); !s.ok()) return s;
    const uint32_t percent = Of(c.percent(), d, 0);
    if (percent > 100) return absl::InvalidArgumentError(absl::StrCat("cmdprio_percentage ", percent, " is above 100"));
    if (percent > 0) p.rules[d].push_back({0, percent, IoprioValue(priority_class, level, hint)});
    const auto& shares = d == 0 ? c.read_bssplit() : c.write_bssplit();
    if (shares.size() > 64) return absl::InvalidArgumentError("cmdprio_bssplit: more than 64 entries");
    for (const auto& share : shares) {
      if (share.percent() > 100) return absl::InvalidArgumentError(absl::StrCat("cmdprio_bssplit: ", share.percent(), "% is above 100"));
      if (share.block_size() == 0) return absl::InvalidArgumentError("cmdprio_bssplit: a block size of 0");
      uint32_t value = IoprioValue(priority_class, level, hint);
      if (share.own_priority()) {
        if (absl::Status s = CheckPriority(share.priority_class(), share.level(), share.hint(), "cmdprio_bssplit"); !s.ok()) return s;
        value = IoprioValue(share.priority_class(), share.level(), share.hint());
      }
      if (share.percent() > 0) p.rules[d].push_back({share.block_size(), share.percent(), value});
    }
    // The shares of one block size are of its IOs: together at most all of them.
    for (const IoPriorities::Rule& r : p.rules[d]) {
      uint32_t total = 0;
      for (const IoPriorities::Rule& other : p.rules[d]) total += other.block_size == r.block_size ? other.percent : 0;
      if (total > 100) return absl::InvalidArgumentError(absl::StrCat("cmdprio_bssplit: the shares of ", r.block_size, "-byte IOs add up to ", total, "%"));
    }
  }
  if (!p.rules[0].empty() || !p.rules[1].empty()) {
    p.distinct.push_back(p.default_ioprio);
    for (const auto& rules : p.rules) {
      for (const IoPriorities::Rule& r : rules) {
        if (std::find(p.distinct.begin(), p.distinct.end(), r.ioprio) == p.distinct.end()) p.distinct.push_back(r.ioprio);
      }
    }
    if (p.distinct.size() > kMaxJobPriorities) {
      return absl::InvalidArgumentError(absl::StrCat("cmdprio: ", p.distinct.size(), " different priorities in one job; at most ", kMaxJobPriorities));
    }
  }
  return p;
}

}  // namespace iofleet
