// Raw NFSv3 and MOUNT calls made synchronously on a libnfs RPC context: what NfsTree (and any
// code that needs a procedure libnfs's path API does not offer) builds on. The reply libnfs
// decodes is valid only inside its callback, so each call hands it to `on_reply` there.
#ifndef IOFLEET_NFS_NFS_RPC_H_
#define IOFLEET_NFS_NFS_RPC_H_

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <string>

#include "absl/functional/function_ref.h"
#include "nfs/nfs_connection.h"

namespace iofleet {

// Queues a call with `send(callback, private_data)` (an rpc_*_async function bound to its
// arguments) and services `rpc` until the reply: 0, or -errno (-ETIMEDOUT when the server did
// not answer in time, -EIO when the call failed), with the reason in *error.
int RunRpc(rpc_context* rpc, int timeout_ms, absl::FunctionRef<int(rpc_cb, void*)> send, absl::FunctionRef<void(void*)> on_reply,
           std::string* error);

// -errno for an NFS3 status (0 for NFS3_OK).
int StatusErrno(int nfs_status);

// One NFS3 call on the connection's RPC context: `send` is the rpc_nfs3_*_async function of
// the procedure, `on_reply` sees the decoded reply (inside the callback). 0 or the RPC's -errno.
template <typename Result, typename Args, typename OnReply>
int CallNfs3(const NfsConnection& connection, int (*send)(rpc_context*, rpc_cb, Args*, void*), Args& args, OnReply on_reply) {
  rpc_context* rpc = nfs_get_rpc_context(connection.context());
  std::string error;
  return RunRpc(
      rpc, connection.timeout_ms(), [&](rpc_cb cb, void* p) { return send(rpc, cb, &args, p); },
      [&](void* data) { on_reply(*static_cast<const Result*>(data)); }, &error);
}

// A call whose reply matters only for its status: 0 or -errno.
template <typename Result, typename Args>
int StatusOnly(const NfsConnection& connection, int (*send)(rpc_context*, rpc_cb, Args*, void*), Args& args) {
  int status = NFS3_OK;
  const int rc = CallNfs3<Result>(connection, send, args, [&](const Result& result) { status = result.status; });
  return rc != 0 ? rc : StatusErrno(status);
}

}  // namespace iofleet

#endif  // IOFLEET_NFS_NFS_RPC_H_
