#!/usr/bin/env bash
# A throw-away NFS server on this machine, for trying ioengine=nfs and `iofleet compare`
# against NFS without an NFS cluster: nfs-ganesha (userspace, VFS backend) + rpcbind in a
# network namespace of their own (they bind every address, so never in the machine's), with
# only loopback up, exporting a directory over NFSv3/TCP. Clients run inside the namespace:
#   tools/nfs_server.sh start [DIR]   exports DIR (default /tmp/iofleet-nfs/export), prints the URL
#   ip netns exec iofleet-nfs iofleet run job.fio ...
#   tools/nfs_server.sh stop          stops the server and deletes the namespace
# The tests use the same recipe from C++ (tests/targets.cc, NfsServer).
set -euo pipefail
ns=iofleet-nfs
state=/tmp/iofleet-nfs
case "${1:-}" in
  start)
    export_dir=$(realpath -m "${2:-$state/export}")
    [ "$(id -u)" -eq 0 ] || { echo "nfs_server.sh: needs root (network namespace)" >&2; exit 1; }
    command -v ganesha.nfsd >/dev/null || bash "$(dirname "$0")/install_deps.sh"
    # IOFLEET_NFS_NETNS_READY=1: the namespace was made for us, with other servers in it already
    # (tools/juicefs_nfs.sh: JuiceFS's metrics endpoint).
    if [ "${IOFLEET_NFS_NETNS_READY:-0}" != 1 ]; then
      ip netns list | grep -qx "$ns" && { echo "nfs_server.sh: already running (tools/nfs_server.sh stop)" >&2; exit 1; }
      ip netns add "$ns"
      ip -n "$ns" link set lo up
    fi
    mkdir -p "$state/recovery" "$export_dir"
    cat > "$state/ganesha.conf" <<CONF
NFS_CORE_PARAM { NFS_Port = 2049; MNT_Port = 20048; Protocols = 3, 4; Enable_NLM = false;
  Enable_RQUOTA = false; Enable_UDP = false; Plugins_Dir = /usr/lib/x86_64-linux-gnu/ganesha; }
NFSv4 { Graceless = true; RecoveryRoot = $state/recovery; }
EXPORT { Export_Id = 1; Path = $export_dir; Pseudo = /export; Access_Type = RW; Squash = No_Root_Squash;
  Protocols = 3, 4; Transports = TCP; SecType = sys; FSAL { Name = VFS; } }
CONF
    ip -n "$ns" addr add 10.200.99.1/32 dev lo  # ganesha wants an address that is not 127/8
    setsid ip netns exec "$ns" unshare -m --propagation private sh -c \
      "mount -t tmpfs tmpfs /run && { rpcbind -f & sleep 0.3; exec ganesha.nfsd -F -f $state/ganesha.conf -L $state/ganesha.log -p $state/ganesha.pid; }" \
      </dev/null >/dev/null 2>&1 &
    for _ in $(seq 100); do
      if ip netns exec "$ns" nfs-ls "nfs://127.0.0.1$export_dir" >/dev/null 2>&1; then
        echo "nfs://127.0.0.1$export_dir"
        exit 0
      fi
      sleep 0.1
    done
    echo "nfs_server.sh: ganesha did not answer in 10 s; see $state/ganesha.log" >&2
    "$0" stop
    exit 1
    ;;
  stop)
    if ip netns list | grep -qx "$ns"; then
      ip netns pids "$ns" | xargs -r kill -TERM || true
      sleep 2
      ip netns pids "$ns" | xargs -r kill -KILL || true
      ip netns del "$ns"
    fi
    # The server's own files; the export (by default $state/export) is the caller's data.
    rm -rf "$state/ganesha.conf" "$state/ganesha.log" "$state/ganesha.pid" "$state/recovery"
    rmdir "$state" 2>/dev/null || true
    ;;
  *)
    echo "usage: tools/nfs_server.sh start [EXPORT_DIR] | stop" >&2
    exit 2
    ;;
esac
