#include "nfs/nfs_rpc.h"

#include <poll.h>

#include <cerrno>
#include <chrono>

namespace iofleet {
namespace {

// One raw RPC in flight. Its reply is decoded by libnfs and valid only inside the callback, so
// `on_reply` copies what the caller needs there. Heap-allocated: a call abandoned after its
// deadline (the server never answered, not even with libnfs's own timeout) is left allocated
// with `on_reply` cleared, so a late reply writes nothing freed.
struct Pending {
  bool done = false;
  int status = RPC_STATUS_ERROR;
  std::string error;
  absl::FunctionRef<void(void*)>* on_reply = nullptr;
};

void OnRpcReply(rpc_context* /*rpc*/, int status, void* data, void* private_data) {
  auto* pending = static_cast<Pending*>(private_data);
  pending->done = true;
  pending->status = status;
  if (status == RPC_STATUS_SUCCESS && pending->on_reply != nullptr) {
    (*pending->on_reply)(data);
  } else if (status == RPC_STATUS_ERROR && data != nullptr) {
    pending->error = static_cast<const char*>(data);
  }
}

}  // namespace

int RunRpc(rpc_context* rpc, int timeout_ms, absl::FunctionRef<int(rpc_cb, void*)> send, absl::FunctionRef<void(void*)> on_reply,
        std::string* error) {
  auto* pending = new Pending;
  pending->on_reply = &on_reply;
  if (send(&OnRpcReply, pending) != 0) {
    *error = rpc_get_error(rpc) != nullptr ? rpc_get_error(rpc) : "the call could not be queued";
    delete pending;
    return -EIO;
  }
  // libnfs times the call out itself (RPC_STATUS_TIMEOUT) when rpc_service runs; this bound is
  // only for a context that has no timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms) + std::chrono::seconds(5);
  while (!pending->done) {
    pollfd fd{rpc_get_fd(rpc), static_cast<short>(rpc_which_events(rpc)), 0};
    const int ready = ::poll(&fd, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (rpc_service(rpc, ready > 0 ? fd.revents : 0) < 0 && !pending->done) {
      *error = rpc_get_error(rpc) != nullptr ? rpc_get_error(rpc) : "connection failed";
      break;
    }
    if (!pending->done && std::chrono::steady_clock::now() > deadline) {
      *error = "no reply from the server";
      break;
    }
  }
  if (!pending->done) {
    pending->on_reply = nullptr;  // abandoned: see Pending
    return -ETIMEDOUT;
  }
  const int status = pending->status;
  if (status != RPC_STATUS_SUCCESS && error->empty()) {
    *error = pending->error.empty() ? (status == RPC_STATUS_TIMEOUT ? "no reply from the server" : "the call failed") : pending->error;
  }
  delete pending;
  if (status == RPC_STATUS_SUCCESS) return 0;
  return status == RPC_STATUS_TIMEOUT ? -ETIMEDOUT : -EIO;
}

int StatusErrno(int nfs_status) {
  if (nfs_status == NFS3_OK) return 0;
  const int e = nfsstat3_to_errno(nfs_status);
  return e > 0 ? -e : (e < 0 ? e : -EIO);
}

}  // namespace iofleet
