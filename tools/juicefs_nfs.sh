#!/usr/bin/env bash
# The field's topology on one machine: JuiceFS mounted (FUSE, SQLite metadata, a directory as
# its object store) and that mount exported over NFS by nfs-ganesha (VFS FSAL) — "NFS over
# JuiceFS" — with the NFS server and JuiceFS's metrics endpoint in a network namespace of their
# own, as tools/nfs_server.sh does for plain NFS. Clients run inside the namespace:
#   tools/juicefs_nfs.sh start [DIR]   state under DIR (default /tmp/iofleet-jfsnfs); prints four
#                                      lines: the JuiceFS mount, its nfs:// URL (the export),
#                                      JuiceFS's metrics URL and the NFS server host's node
#                                      exporter (both reachable in the namespace)
#   ip netns exec iofleet-nfs iofleet compare ... --target juicefs=MOUNT/x --target nfs=URL/x \
#       --target-metrics juicefs=METRICS --target-metrics nfs-server=NODE
#   tools/juicefs_nfs.sh stop [DIR]    stops ganesha, unmounts JuiceFS, deletes the namespace and DIR
# JuiceFS is mounted in the machine's mount namespace (so ganesha and local clients see it) but
# with its network in the NFS namespace (so its metrics port is where the clients are).
set -euo pipefail
cd "$(dirname "$0")/.."
ns=iofleet-nfs
state=$(realpath -m "${2:-/tmp/iofleet-jfsnfs}")
metrics_port=9567
node_port=9100

stop() {
  tools/nfs_server.sh stop || true
  if mountpoint -q "$state/mnt" 2>/dev/null; then
    "$(tools/build_juicefs.sh)" umount "$state/mnt" >/dev/null 2>&1 || umount -l "$state/mnt" || true
  fi
  ip netns list | grep -qx "$ns" && ip netns del "$ns"
  # JuiceFS's mount process leaves its socket /tmp/fuse_fd_comm.<pid> (cmd/passfd.go): removed
  # once that process is gone.
  if [ -f "$state/format.log" ]; then
    for socket in $(find /tmp -maxdepth 1 -name 'fuse_fd_comm.*' -newer "$state/format.log"); do
      for _ in $(seq 100); do [ -d "/proc/${socket##*.}" ] || break; sleep 0.05; done
      rm -f "$socket"
    done
  fi
  rm -rf "$state"
}

case "${1:-}" in
  start)
    [ "$(id -u)" -eq 0 ] || { echo "juicefs_nfs.sh: needs root (FUSE, network namespace)" >&2; exit 1; }
    ip netns list | grep -qx "$ns" && { echo "juicefs_nfs.sh: namespace $ns exists (tools/juicefs_nfs.sh stop)" >&2; exit 1; }
    juicefs=$(tools/build_juicefs.sh)
    mkdir -p "$state/volume" "$state/mnt"
    trap 'stop' ERR
    "$juicefs" --no-agent format --storage file --bucket "$state/volume/data/" --trash-days 0 "sqlite3://$state/volume/meta.db" iofleet \
      > "$state/format.log" 2>&1
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # The network of the namespace, the mounts of the machine: `juicefs mount -d` returns once
    # the mount is ready.
    nsenter --net="/run/netns/$ns" "$juicefs" --no-agent mount -d --no-usage-report --cache-dir "$state/volume/cache" \
      --log "$state/juicefs.log" --metrics "127.0.0.1:$metrics_port" "sqlite3://$state/volume/meta.db" "$state/mnt" > "$state/mount.log" 2>&1
    mkdir -p "$state/mnt/export"
    url=$(IOFLEET_NFS_NETNS_READY=1 tools/nfs_server.sh start "$state/mnt/export")
    # The NFS server host's own view (CPU, disks, memory): a node exporter beside ganesha.
    setsid ip netns exec "$ns" prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" \
      --collector.disable-defaults --collector.cpu --collector.diskstats --collector.meminfo --collector.loadavg --collector.netdev \
      </dev/null > "$state/node-exporter.log" 2>&1 &
    for _ in $(seq 100); do
      ip netns exec "$ns" curl -sf "http://127.0.0.1:$node_port/metrics" > /dev/null && break
      sleep 0.1
    done
    trap - ERR
    echo "$state/mnt"
    echo "$url"
    echo "http://127.0.0.1:$metrics_port/metrics"
    echo "http://127.0.0.1:$node_port/metrics"
    ;;
  stop)
    stop
    ;;
  *)
    echo "usage: tools/juicefs_nfs.sh start [DIR] | stop [DIR]" >&2
    exit 2
    ;;
esac
