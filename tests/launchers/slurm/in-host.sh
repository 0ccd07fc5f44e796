#!/bin/bash
# in-host.sh BASE HOST CMD [ARGS...]: runs CMD "on" node HOST of the test cluster (its network
# namespace iofs-HOST, its host name, its /etc/hosts). Not `ip netns exec`: that remounts /sys,
# hiding the cgroup mounts slurmd needs.
base=$1 h=$2; shift 2
export SLURM_CONF=$base/etc/slurm.conf
exec nsenter --net=/run/netns/iofs-$h unshare --uts --mount sh -c \
  'h=$1; shift; mount --bind /etc/netns/iofs-$h/hosts /etc/hosts && mount --bind /etc/netns/iofs-$h/resolv.conf /etc/resolv.conf && hostname $h && exec "$@"' \
  in-host "$h" "$@"
