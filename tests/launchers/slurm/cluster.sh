#!/bin/bash
# cluster.sh start|stop BASE: a real 3-node Slurm cluster on this machine for the tests (from
# the recipe in the project's shared launchers): munged, slurmctld on "head" (10.213.9.2) and
# slurmd on node1..node3 (10.213.9.11-13), each in a network + UTS namespace on a bridge that
# has no address in the root namespace (nothing here is reachable from outside). stop removes
# everything start made — jobs, daemons, namespaces, the bridge, the state — and is safe to run
# when start failed half-way.
set -u
cmd=$1 base=$2
here=$(cd "$(dirname "$0")" && pwd)
export SLURM_CONF=$base/etc/slurm.conf
hosts="head:10.213.9.2 node1:10.213.9.11 node2:10.213.9.12 node3:10.213.9.13"
in_host() { "$here/in-host.sh" "$base" "$@"; }

stop() {
  if [ -S "$base/run/munge.socket" ] && in_host head scontrol ping 2>/dev/null | grep -q UP; then
    in_host head scancel --user=root 2>/dev/null
    for _ in $(seq 1 100); do [ -z "$(in_host head squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  for f in "$base"/run/slurmd-*.bgpid "$base/run/slurmctld.bgpid" "$base/run/munged.bgpid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null; rm -f "$f"
  done
  for spec in $hosts; do
    ns=iofs-${spec%%:*}
    if ip netns list | grep -qw "$ns"; then
      for p in $(ip netns pids "$ns"); do kill -KILL "$p" 2>/dev/null; done  # slurmstepd, job processes
      ip netns del "$ns"
    fi
    rm -rf "/etc/netns/$ns"
  done
  ip link del iofs-br0 2>/dev/null
  rm -rf "$base/state" "$base/spool" "$base/tmp" "$base/run" "$base/munge"
  return 0
}

start() {
  set -e
  mkdir -p "$base"/{etc,run,log,state,spool,munge,tmp}
  chmod 700 "$base/munge"
  sed "s|@BASE@|$base|g" "$here/slurm.conf.in" > "$SLURM_CONF"
  dd if=/dev/urandom of="$base/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$base/munge/munge.key"
  munged -F --force -S "$base/run/munge.socket" --key-file="$base/munge/munge.key" --pid-file="$base/run/munged.pid" \
    --log-file="$base/log/munged.log" --seed-file="$base/munge/munged.seed" < /dev/null > "$base/log/munged.out" 2>&1 &
  echo $! > "$base/run/munged.bgpid"
  local etc_hosts="127.0.0.1 localhost"
  for spec in $hosts; do etc_hosts="$etc_hosts
${spec#*:} ${spec%%:*}"; done
  ip link add iofs-br0 type bridge
  ip link set iofs-br0 up
  for spec in $hosts; do
    h=${spec%%:*} a=${spec#*:} ns=iofs-${spec%%:*}
    mkdir -p "/etc/netns/$ns"
    echo "$etc_hosts" > "/etc/netns/$ns/hosts"
    : > "/etc/netns/$ns/resolv.conf"
    ip netns add "$ns"
    ip link add "iofs-$h" type veth peer name eth0 netns "$ns"
    ip link set "iofs-$h" master iofs-br0 up
    ip -n "$ns" addr add "$a/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  for _ in $(seq 1 50); do [ -S "$base/run/munge.socket" ] && break; sleep 0.1; done
  in_host head slurmctld -D -i -f "$SLURM_CONF" < /dev/null > "$base/log/slurmctld.out" 2>&1 &
  echo $! > "$base/run/slurmctld.bgpid"
  for _ in $(seq 1 100); do in_host head scontrol ping > /dev/null 2>&1 && break; sleep 0.1; done
  for n in node1 node2 node3; do
    mkdir -p "$base/spool/$n" "$base/tmp/$n"
    in_host "$n" slurmd -D -N "$n" -f "$SLURM_CONF" < /dev/null > "$base/log/slurmd-$n.out" 2>&1 &
    echo $! > "$base/run/slurmd-$n.bgpid"
  done
  for _ in $(seq 1 200); do
    [ "$(in_host head sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)" -ge 3 ] && return 0
    sleep 0.1
  done
  echo "cluster.sh: the 3 nodes did not come up idle within 20 s" >&2
  tail -5 "$base"/log/*.log >&2
  return 1
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: cluster.sh start|stop BASE" >&2; exit 2 ;;
esac
