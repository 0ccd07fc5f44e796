#include "common/file_system_kind.h"

#include <linux/magic.h>

namespace iofleet {

FileSystemKind FileSystemKindOf(uint64_t magic) {
  switch (magic) {
    case EXT4_SUPER_MAGIC: return {"ext4", true};  // also ext2/ext3: one magic for the family
    case XFS_SUPER_MAGIC: return {"xfs", true};
    case BTRFS_SUPER_MAGIC: return {"btrfs", true};
    case F2FS_SUPER_MAGIC: return {"f2fs", true};
    case 0xca451a4e: return {"bcachefs", true};  // BCACHEFS_SUPER_MAGIC (not in every linux/magic.h)
    case 0x2fc12fc1: return {"zfs", true};
    case TMPFS_MAGIC: return {"tmpfs", true};
    case RAMFS_MAGIC: return {"ramfs", true};
    case NFS_SUPER_MAGIC: return {"nfs", false};
    case OVERLAYFS_SUPER_MAGIC: return {"overlay", false};
    case 0x65735546: return {"fuse", false};  // FUSE_SUPER_MAGIC (not in linux/magic.h); often a remote metadata engine behind it
    case 0x00c36400: return {"ceph", false};
    case V9FS_MAGIC: return {"9p", false};
    default: return {};
  }
}

}  // namespace iofleet
