// fio's "null" engine: every request succeeds at once without touching anything, so a run
// measures the harness alone. As in fio, at iodepth 1 requests complete inside Submit(); at
// higher depths they are queued and handed back by Reap(), exercising the asynchronous path.
#include <vector>

#include "engines/engine_registry.h"

namespace iofleet {
namespace {

class NullEngine final : public IoEngine {
 public:
  explicit NullEngine(uint32_t iodepth) : queue_immediately_(iodepth == 1) { queued_.reserve(iodepth); }
  absl::string_view name() const override { return "null"; }

  absl::StatusOr<int> Open(const std::string&, const OpenOptions&) override { return next_file_++; }
  absl::Status Close(int) override { return absl::OkStatus(); }

  SubmitResult Submit(IoRequest* request) override {
    const bool moves_bytes = request->op == IoOp::kRead || request->op == IoOp::kWrite || request->op == IoOp::kTrim;
    request->result = moves_bytes ? static_cast<int64_t>(request->length) : 0;
    if (queue_immediately_) return SubmitResult::kCompleted;
    queued_.push_back(request);
    return SubmitResult::kQueued;
  }

  absl::StatusOr<int> Reap(int, absl::Span<IoRequest*> out, int64_t) override {
    const size_t n = std::min(out.size(), queued_.size());
    for (size_t i = 0; i < n; ++i) out[i] = queued_[i];
    queued_.erase(queued_.begin(), queued_.begin() + static_cast<long>(n));
    return static_cast<int>(n);
  }

 private:
  const bool queue_immediately_;
  int next_file_ = 0;
  std::vector<IoRequest*> queued_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<IoEngine>> MakeNullEngine(const EngineOptions& options) {
  return std::unique_ptr<IoEngine>(std::make_unique<NullEngine>(options.iodepth));
}

}  // namespace iofleet
