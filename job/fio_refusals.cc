#include "job/fio_refusals.h"

#include "absl/container/flat_hash_map.h"

namespace iofleet {
namespace {

using Reasons = absl::flat_hash_map<absl::string_view, const char*>;

// fio's engines (fio --enghelp, fio's engines/ directory) that iofleet does not have.
const Reasons& EngineReasons() {
  static const auto* const kReasons = new Reasons{
      {"cpuio", "it burns CPU and does no IO"},
      {"cpp_null", "it is fio's C++ build test of the null engine (use ioengine=null)"},
      {"dev-dax", "it does IO to a persistent-memory DAX device (/dev/daxN.M)"},
      {"libpmem", "it does IO to persistent memory through libpmem"},
      {"pmemblk", "it does IO to persistent memory through libpmemblk"},
      {"dfs", "it does IO through the DAOS file system library"},
      {"dircreate", "it times directory creation: use `iofleet mdtest -D -C`"},
      {"dirdelete", "it times directory removal: use `iofleet mdtest -D -r`"},
      {"dirstat", "it times stat of directories: use `iofleet mdtest -D -T`"},
      {"filecreate", "it times file creation: use `iofleet mdtest -F -C`"},
      {"filedelete", "it times file removal: use `iofleet mdtest -F -r`"},
      {"filestat", "it times stat of files: use `iofleet mdtest -F -T`"},
      {"e4defrag", "it issues ext4's online-defragmentation ioctl"},
      {"exec", "it runs a program, and iofleet never runs commands on workers"},
      {"falloc", "it issues fallocate() calls as its IO"},
      {"ftruncate", "it issues ftruncate() calls as its IO"},
      {"gfapi", "it does IO to GlusterFS through libgfapi"},
      {"gfapi_async", "it does IO to GlusterFS through libgfapi"},
      {"guasi", "it uses the GUASI asynchronous IO library"},
      {"http", "it does HTTP object IO (S3, Swift, WebDAV)"},
      {"ime_aio", "it does IO to DDN's Infinite Memory Engine"},
      {"ime_psync", "it does IO to DDN's Infinite Memory Engine"},
      {"ime_psyncv", "it does IO to DDN's Infinite Memory Engine"},
      {"io_uring_cmd", "it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"xnvme", "it drives NVMe devices through the xNVMe library"},
      {"spdk", "it drives NVMe devices through SPDK"},
      {"libblkio", "it drives virtio-blk and NVMe devices through libblkio"},
      {"libcufile", "it moves data between files and GPU memory (NVIDIA cuFile/GPUDirect Storage)"},
      {"libhipfile", "it moves data between files and GPU memory (AMD hipFile)"},
      {"libhdfs", "it does IO to HDFS"},
      {"libiscsi", "it does IO to an iSCSI target through libiscsi"},
      {"libzbc", "it drives zoned SCSI/ATA disks through libzbc"},
      {"mtd", "it does IO to raw flash (MTD) devices"},
      {"nbd", "it does IO to an NBD server through libnbd"},
      {"net", "it does network transfers (TCP/UDP sockets), not file IO"},
      {"netsplice", "it does network transfers (sockets and splice), not file IO"},
      {"page_fault", "it measures page faults of an anonymous mapping, not file IO"},
      {"rados", "it does IO to Ceph RADOS objects"},
      {"rbd", "it does IO to Ceph RBD images"},
      {"rdma", "it does RDMA transfers between hosts, not file IO"},
      {"sg", "it sends SCSI commands through the sg driver"},
      {"splice", "it moves data with splice() through a pipe"},
      {"vsync", "it uses readv/writev (use psync or pvsync2)"},
      {"pvsync", "it uses preadv/pwritev (use pvsync2)"},
      {"posixaio", "it uses POSIX aio_read/aio_write (use libaio or io_uring)"},
      {"solarisaio", "it is Solaris's asynchronous IO"},
      {"windowsaio", "it is Windows's asynchronous IO"},
      {"binject", "it uses the block-layer injection driver"},
      {"rdmaio", "it does RDMA transfers between hosts, not file IO"},
      {"external", "it loads an engine from a shared library, and iofleet loads no code into workers"},
  };
  return *kReasons;
}

// Options that exist only for hardware or engines iofleet does not drive (fio's HOWTO, engine
// options of its newer releases).
const Reasons& OptionReasons() {
  static const auto* const kReasons = new Reasons{
      {"fdp", "NVMe flexible data placement needs an NVMe device with FDP and ioengine=io_uring_cmd or xnvme"},
      {"fdp_pli", "NVMe flexible data placement needs an NVMe device with FDP and ioengine=io_uring_cmd or xnvme"},
      {"fdp_pli_select", "NVMe flexible data placement needs an NVMe device with FDP and ioengine=io_uring_cmd or xnvme"},
      {"dataplacement", "NVMe data placement needs an NVMe device and ioengine=io_uring_cmd or xnvme"},
      {"plids", "NVMe data placement needs an NVMe device and ioengine=io_uring_cmd or xnvme"},
      {"md_per_io_size", "NVMe protection information (metadata per IO) needs an NVMe device formatted with it and ioengine=io_uring_cmd or xnvme"},
      {"pi_act", "NVMe protection information needs an NVMe device formatted with it and ioengine=io_uring_cmd or xnvme"},
      {"pi_chk", "NVMe protection information needs an NVMe device formatted with it and ioengine=io_uring_cmd or xnvme"},
      {"apptag", "NVMe protection information needs an NVMe device formatted with it and ioengine=io_uring_cmd or xnvme"},
      {"apptag_mask", "NVMe protection information needs an NVMe device formatted with it and ioengine=io_uring_cmd or xnvme"},
      {"cmd_type", "NVMe/SCSI passthrough commands need ioengine=io_uring_cmd"},
      {"write_mode", "NVMe write modes (zeroes, uncorrectable, verify, zone append) need ioengine=io_uring_cmd"},
      {"num_range", "multi-range NVMe trims need ioengine=io_uring_cmd"},
      {"xnvme_async", "it configures the xnvme engine"},
      {"xnvme_sync", "it configures the xnvme engine"},
      {"xnvme_admin", "it configures the xnvme engine"},
      {"xnvme_dev_nsid", "it configures the xnvme engine"},
      {"xnvme_iovec", "it configures the xnvme engine"},
  };
  return *kReasons;
}

const char* Lookup(const Reasons& reasons, absl::string_view name) {
  auto it = reasons.find(name);
  return it == reasons.end() ? nullptr : it->second;
}

}  // namespace

const char* FioEngineRefusal(absl::string_view name) { return Lookup(EngineReasons(), name); }

const char* FioHardwareOptionRefusal(absl::string_view name) { return Lookup(OptionReasons(), name); }

}  // namespace iofleet
