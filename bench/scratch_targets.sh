# Sourced by the benchmarks: a scratch directory $work with a tmpfs at $work/tmpfs and ext4 on
# a loop device at $work/ext4 (TMPFS_SIZE, default 2g; direct IO on the loop device when
# LOOP_DIRECT_IO=on), all removed when the script exits. Needs root.
[ "$(id -u)" -eq 0 ] || { echo "run as root: it mounts a tmpfs and a loop device" >&2; exit 2; }
command -v mkfs.ext4 >/dev/null || apt-get install -y -q e2fsprogs
work=$(mktemp -d /tmp/iofleet-bench-XXXXXX)
loopdev=""
cleanup_scratch_targets() {
  mountpoint -q "$work/tmpfs" && umount "$work/tmpfs"
  mountpoint -q "$work/ext4" && umount "$work/ext4"
  [ -n "$loopdev" ] && losetup -d "$loopdev"
  rm -rf "$work"
}
trap cleanup_scratch_targets EXIT
mkdir -p "$work/tmpfs" "$work/ext4"
mount -t tmpfs -o "size=${TMPFS_SIZE:-2g}" tmpfs "$work/tmpfs"
truncate -s 2G "$work/ext4.img"
loopdev=$(losetup -f --show --direct-io="${LOOP_DIRECT_IO:-off}" "$work/ext4.img")
mkfs.ext4 -q -F "$loopdev"
mount "$loopdev" "$work/ext4"
