#!/bin/bash
# hosts.sh up|down BASE [N]: N (default 2) "remote hosts" for the ssh launcher's test, each a
# network + UTS namespace iofh-hI (host name hI, address 10.213.10.1I) on a bridge whose
# address 10.213.10.1 is this machine's, each running its own sshd (own host key, root login by
# a key made here). BASE/ssh_config reaches them: ssh -F BASE/ssh_config h1. down removes all of
# it (sshd, any process left in the namespaces, the namespaces, the bridge) and is safe after a
# start that failed half-way. (From the recipe in the project's shared launchers.)
set -u
cmd=$1 base=$2 n=${3:-2}
up() {
  set -e
  mkdir -p "$base/hostkeys" "$base/run" "$base/log"
  ssh-keygen -q -t ed25519 -N '' -f "$base/id_ed25519" -C iofleet-test
  ssh-keygen -q -t ed25519 -N '' -f "$base/hostkeys/ssh_host_ed25519_key"
  cp "$base/id_ed25519.pub" "$base/authorized_keys"
  # sshd insists on its privilege-separation directory; remember if it was made here.
  [ -d /run/sshd ] || { mkdir -m 0755 /run/sshd; touch "$base/run/made-run-sshd"; }
  ip link add iofh-br0 type bridge
  ip addr add 10.213.10.1/24 dev iofh-br0
  ip link set iofh-br0 up
  : > "$base/known_hosts"
  : > "$base/ssh_config"
  local etc_hosts="127.0.0.1 localhost"
  for i in $(seq 1 "$n"); do etc_hosts="$etc_hosts
10.213.10.$((10 + i)) h$i"; done
  for i in $(seq 1 "$n"); do
    local ns=iofh-h$i addr=10.213.10.$((10 + i))
    mkdir -p "/etc/netns/$ns"
    echo "$etc_hosts" > "/etc/netns/$ns/hosts"
    : > "/etc/netns/$ns/resolv.conf"  # the VM's DNS is unreachable from here: every lookup would stall
    ip netns add "$ns"
    ip link add "iofh-h$i" type veth peer name eth0 netns "$ns"
    ip link set "iofh-h$i" master iofh-br0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via 10.213.10.1
    cat > "$base/run/sshd-h$i.conf" <<EOC
ListenAddress $addr:22
HostKey $base/hostkeys/ssh_host_ed25519_key
PidFile $base/run/sshd-h$i.pid
AuthorizedKeysFile $base/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel VERBOSE
EOC
    ip netns exec "$ns" unshare --uts sh -c "hostname h$i; exec /usr/sbin/sshd -D -e -f $base/run/sshd-h$i.conf" \
      < /dev/null > "$base/log/sshd-h$i.log" 2>&1 &
    echo $! > "$base/run/sshd-h$i.bgpid"
    echo "h$i,$addr $(cut -d' ' -f1,2 "$base/hostkeys/ssh_host_ed25519_key.pub")" >> "$base/known_hosts"
    printf 'Host h%s\n  HostName %s\n' "$i" "$addr" >> "$base/ssh_config"
  done
  cat >> "$base/ssh_config" <<EOC
Host h*
  User root
  IdentityFile $base/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $base/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 5
EOC
  for i in $(seq 1 "$n"); do
    for _ in $(seq 1 50); do ssh -F "$base/ssh_config" "h$i" true 2> /dev/null && break; sleep 0.1; done
    ssh -F "$base/ssh_config" "h$i" true || { echo "hosts.sh: h$i does not answer ssh" >&2; return 1; }
  done
}
down() {
  for f in "$base"/run/sshd-*.bgpid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f"); kill -TERM "$pid" 2> /dev/null
    for _ in $(seq 1 30); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2> /dev/null; rm -f "$f"
  done
  for ns in $(ip netns list | awk '/^iofh-h[0-9]+/{print $1}'); do
    for p in $(ip netns pids "$ns"); do kill -KILL "$p" 2> /dev/null; done  # whatever was started over ssh
    ip netns del "$ns"
    rm -rf "/etc/netns/$ns"
  done
  ip link del iofh-br0 2> /dev/null
  [ -f "$base/run/made-run-sshd" ] && rmdir /run/sshd 2> /dev/null
  return 0
}
case "$cmd" in
  up) up ;;
  down) down ;;
  *) echo "usage: hosts.sh up|down BASE [N]" >&2; exit 2 ;;
esac
