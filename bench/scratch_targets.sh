# Sourced by the benchmarks: a scratch directory $work with a tmpfs at $work/tmpfs and ext4 on
# a loop device at $work/ext4 (TMPFS_SIZE, default 2g; direct IO on the loop device when
# LOOP_DIRECT_IO=on), all removed when the script exits. Needs root.
# The ext4 is EXT4_SIZE (default 8G, a sparse file) with a journal of EXT4_JOURNAL_MB (default
# 1024): the journal mke2fs gives a file system of 128 GiB or more. Left to mke2fs, a small image
# gets a small journal (64 MiB at 2G), and metadata benchmarks then measure its forced commits:
# mdtest -I 1000 -z 2 -b 4 -u made directories at 82k/s with it and 164k/s with 1 GiB, both
# tools alike, and its directory rename split into two rates 25% apart at random (15 pairs).
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
truncate -s "${EXT4_SIZE:-8G}" "$work/ext4.img"
loopdev=$(losetup -f --show --direct-io="${LOOP_DIRECT_IO:-off}" "$work/ext4.img")
mkfs.ext4 -q -F -J size="${EXT4_JOURNAL_MB:-1024}" "$loopdev"
mount "$loopdev" "$work/ext4"
