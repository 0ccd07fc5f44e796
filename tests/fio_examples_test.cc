// fio's own example job files (tests/fio_examples: the 107 files of fio's examples/ directory),
// every one through `iofleet run --parse-only`: the expected outcome of each is listed below —
// accepted, or refused with a message that names the engine or option and why. A file whose
// outcome changes fails the test: a new refusal is noticed, and so is a newly accepted file
// (move it to accepted here and in the README's list).
#include <dirent.h>
#include <stdlib.h>

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;

struct Example {
  const char* file;
  // Uses only engines iofleet has (fio's default psync included): what the issue counts as
  // the file-engine examples.
  bool file_engines;
  const char* argument;     // what the file's own header says to run it with, or ""
  const char* environment;  // NAME=VALUE the file's header says to set, or ""
  const char* refusal;      // "" when accepted, else what stderr must say
};

// clang-format off
const std::vector<Example>& Examples() {
  static const std::vector<Example> kExamples = {
      {"1mbs_clients.fio", true, "", "",
       ""},
      {"aio-read.fio", true, "", "",
       ""},
      {"atomic-verify.fio", true, "", "",
       ""},
      {"backwards-read.fio", true, "", "",
       ""},
      {"basic-verify.fio", true, "", "",
       ""},
      {"butterfly.fio", true, "", "",
       ""},
      {"cmdprio-bssplit.fio", true, "", "",
       ""},
      {"cmdprio-percentage.fio", true, "", "",
       ""},
      {"cpp_null.fio", false, "", "",
       "cpp_null.fio:6: job 'null': ioengine=cpp_null is one of fio's engines that iofleet does not have: it is fio's C++ build test of the null engine (use ioengine=null)"},
      {"cpuio.fio", false, "", "",
       "cpuio.fio:2: job 'burn_2x50_noop': ioengine=cpuio is one of fio's engines that iofleet does not have: it burns CPU and does no IO"},
      {"cross-stripe-verify.fio", true, "", "",
       ""},
      {"dedupe-global.fio", true, "", "",
       ""},
      {"dev-dax.fio", false, "", "",
       "dev-dax.fio:3: job 'dev-dax-write': ioengine=dev-dax is one of fio's engines that iofleet does not have: it does IO to a persistent-memory DAX device (/dev/daxN.M)"},
      {"dfs.fio", false, "", "",
       "dfs.fio:2: job 'daos-seqwrite': ioengine=dfs is one of fio's engines that iofleet does not have: it does IO through the DAOS file system library"},
      {"dircreate-ioengine.fio", false, "", "",
       "dircreate-ioengine.fio:15: job 't0': ioengine=dircreate is one of fio's engines that iofleet does not have: it times directory creation: use `iofleet mdtest -D -C`"},
      {"dirdelete-ioengine.fio", false, "", "",
       "dirdelete-ioengine.fio:8: job 't0': ioengine=dirdelete is one of fio's engines that iofleet does not have: it times directory removal: use `iofleet mdtest -D -r`"},
      {"dirstat-ioengine.fio", false, "", "",
       "dirstat-ioengine.fio:7: job 't0': ioengine=dirstat is one of fio's engines that iofleet does not have: it times stat of directories: use `iofleet mdtest -D -T`"},
      {"disk-zone-profile.fio", true, "", "",
       ""},
      {"e4defrag.fio", false, "", "",
       "e4defrag.fio:2: job 'isolated-e4defrag': ioengine=e4defrag is one of fio's engines that iofleet does not have: it issues ext4's online-defragmentation ioctl"},
      {"e4defrag2.fio", false, "", "",
       "e4defrag2.fio:6: job 'parallel-e4defrag': ioengine=e4defrag is one of fio's engines that iofleet does not have: it issues ext4's online-defragmentation ioctl"},
      {"enospc-pressure.fio", true, "", "",
       ""},
      {"example_latency_steadystate.fio", true, "", "",
       ""},
      {"exec.fio", false, "", "",
       "exec.fio:6: job 'monitoring_noop': ioengine=exec is one of fio's engines that iofleet does not have: it runs a program, and iofleet never runs commands on workers"},
      {"exitwhat.fio", true, "", "",
       ""},
      {"falloc.fio", false, "", "",
       "falloc.fio:2: job 'falloc-fuzzer': ioengine=falloc is one of fio's engines that iofleet does not have: it issues fallocate() calls as its IO"},
      {"filecreate-ioengine.fio", false, "", "",
       "filecreate-ioengine.fio:15: job 't0': ioengine=filecreate is one of fio's engines that iofleet does not have: it times file creation: use `iofleet mdtest -F -C`"},
      {"filedelete-ioengine.fio", false, "", "",
       "filedelete-ioengine.fio:8: job 't0': ioengine=filedelete is one of fio's engines that iofleet does not have: it times file removal: use `iofleet mdtest -F -r`"},
      {"filestat-ioengine.fio", false, "", "",
       "filestat-ioengine.fio:7: job 't0': ioengine=filestat is one of fio's engines that iofleet does not have: it times stat of files: use `iofleet mdtest -F -T`"},
      {"fio-rand-RW.fio", true, "", "",
       ""},
      {"fio-rand-read.fio", true, "", "",
       ""},
      {"fio-rand-write.fio", true, "", "",
       ""},
      {"fio-seq-RW.fio", true, "", "",
       ""},
      {"fio-seq-read.fio", true, "", "",
       ""},
      {"fio-seq-write.fio", true, "", "",
       ""},
      {"fixed-rate-submission.fio", true, "", "",
       ""},
      {"flow.fio", true, "", "",
       ""},
      {"fsx.fio", true, "", "",
       ""},
      {"ftruncate.fio", false, "", "",
       "ftruncate.fio:4: job 'grow-truncate': ioengine=ftruncate is one of fio's engines that iofleet does not have: it issues ftruncate() calls as its IO"},
      {"gfapi.fio", false, "", "",
       "gfapi.fio:4: job 'reopen_file_test': ioengine=gfapi is one of fio's engines that iofleet does not have: it does IO to GlusterFS through libgfapi"},
      {"gpudirect-rdmaio-client.fio", false, "", "",
       "gpudirect-rdmaio-client.fio:3: job 'sender': ioengine=rdma is one of fio's engines that iofleet does not have: it does RDMA transfers between hosts, not file IO"},
      {"gpudirect-rdmaio-server.fio", false, "", "",
       "gpudirect-rdmaio-server.fio:3: job 'receiver': ioengine=rdma is one of fio's engines that iofleet does not have: it does RDMA transfers between hosts, not file IO"},
      {"http-s3-crypto.fio", false, "", "",
       "http-s3-crypto.fio:9: job 'create': ioengine=http is one of fio's engines that iofleet does not have: it does HTTP object IO (S3, Swift, WebDAV)"},
      {"http-s3-storage-class.fio", false, "", "",
       "http-s3-storage-class.fio:9: job 'create': ioengine=http is one of fio's engines that iofleet does not have: it does HTTP object IO (S3, Swift, WebDAV)"},
      {"http-s3.fio", false, "", "",
       "http-s3.fio:24: job 'create': ioengine=http is one of fio's engines that iofleet does not have: it does HTTP object IO (S3, Swift, WebDAV)"},
      {"http-swift.fio", false, "", "",
       "http-swift.fio:2: job 'create': ioengine=http is one of fio's engines that iofleet does not have: it does HTTP object IO (S3, Swift, WebDAV)"},
      {"http-webdav.fio", false, "", "",
       "http-webdav.fio:2: job 'create': ioengine=http is one of fio's engines that iofleet does not have: it does HTTP object IO (S3, Swift, WebDAV)"},
      {"ime.fio", false, "", "",
       "ime.fio:26: job 'write-psync': ioengine=ime_psync is one of fio's engines that iofleet does not have: it does IO to DDN's Infinite Memory Engine"},
      {"iometer-file-access-server.fio", true, "", "",
       ""},
      {"jesd219.fio", true, "", "",
       ""},
      {"latency-profile.fio", true, "", "",
       ""},
      {"libblkio-io_uring.fio", false, "", "",
       "libblkio-io_uring.fio:13: job 'job-A': ioengine=libblkio is one of fio's engines that iofleet does not have: it drives virtio-blk and NVMe devices through libblkio"},
      {"libblkio-virtio-blk-vfio-pci.fio", false, "", "",
       "libblkio-virtio-blk-vfio-pci.fio:14: job 'job-A': ioengine=libblkio is one of fio's engines that iofleet does not have: it drives virtio-blk and NVMe devices through libblkio"},
      {"libcufile-cufile.fio", false, "", "",
       "libcufile-cufile.fio:10: job 'read': ioengine=libcufile is one of fio's engines that iofleet does not have: it moves data between files and GPU memory (NVIDIA cuFile/GPUDirect Storage)"},
      {"libcufile-posix.fio", false, "", "",
       "libcufile-posix.fio:10: job 'read': ioengine=libcufile is one of fio's engines that iofleet does not have: it moves data between files and GPU memory (NVIDIA cuFile/GPUDirect Storage)"},
      {"libhdfs.fio", false, "", "",
       "libhdfs.fio:6: job 'hdfs': ioengine=libhdfs is one of fio's engines that iofleet does not have: it does IO to HDFS"},
      {"libhipfile-hipfile.fio", false, "", "",
       "libhipfile-hipfile.fio:10: job 'read': ioengine=libhipfile is one of fio's engines that iofleet does not have: it moves data between files and GPU memory (AMD hipFile)"},
      {"libhipfile-posix.fio", false, "", "",
       "libhipfile-posix.fio:10: job 'read': ioengine=libhipfile is one of fio's engines that iofleet does not have: it moves data between files and GPU memory (AMD hipFile)"},
      {"libiscsi.fio", false, "", "",
       "libiscsi.fio:2: job 'iscsi': ioengine=libiscsi is one of fio's engines that iofleet does not have: it does IO to an iSCSI target through libiscsi"},
      {"libpmem.fio", false, "", "",
       "libpmem.fio:4: job 'libpmem-seqwrite': ioengine=libpmem is one of fio's engines that iofleet does not have: it does IO to persistent memory through libpmem"},
      {"libzbc-rand-write.fio", false, "", "",
       "libzbc-rand-write.fio:20: job 'dev1': ioengine=libzbc is one of fio's engines that iofleet does not have: it drives zoned SCSI/ATA disks through libzbc"},
      {"libzbc-seq-read.fio", false, "", "",
       "libzbc-seq-read.fio:19: job 'dev1': ioengine=libzbc is one of fio's engines that iofleet does not have: it drives zoned SCSI/ATA disks through libzbc"},
      {"mtd.fio", false, "", "",
       "mtd.fio:4: job 'trim': ioengine=mtd is one of fio's engines that iofleet does not have: it does IO to raw flash (MTD) devices"},
      {"nbd.fio", false, "", "",
       "nbd.fio:21: job 'job0': ioengine=nbd is one of fio's engines that iofleet does not have: it does IO to an NBD server through libnbd"},
      {"netio.fio", false, "", "",
       "netio.fio:3: job 'receiver': ioengine=net is one of fio's engines that iofleet does not have: it does network transfers (TCP/UDP sockets), not file IO"},
      {"netio_multicast.fio", false, "", "",
       "netio_multicast.fio:3: job 'pingpong_reader': ioengine=net is one of fio's engines that iofleet does not have: it does network transfers (TCP/UDP sockets), not file IO"},
      {"netio_vsock.fio", false, "", "",
       "netio_vsock.fio:3: job 'receiver': ioengine=net is one of fio's engines that iofleet does not have: it does network transfers (TCP/UDP sockets), not file IO"},
      {"netio_vsock_receiver.fio", false, "", "",
       "netio_vsock_receiver.fio:3: job 'receiver': ioengine=net is one of fio's engines that iofleet does not have: it does network transfers (TCP/UDP sockets), not file IO"},
      {"netio_vsock_sender.fio", false, "", "",
       "netio_vsock_sender.fio:3: job 'sender': ioengine=net is one of fio's engines that iofleet does not have: it does network transfers (TCP/UDP sockets), not file IO"},
      {"nfs.fio", true, "", "",
       ""},
      {"null.fio", true, "", "",
       ""},
      {"numa.fio", true, "", "",
       ""},
      {"page_fault.fio", false, "", "",
       "page_fault.fio:3: job 'page_fault_write': ioengine=page_fault is one of fio's engines that iofleet does not have: it measures page faults of an anonymous mapping, not file IO"},
      {"poisson-rate-submission.fio", true, "", "",
       ""},
      {"rados.fio", false, "", "",
       "rados.fio:14: job 'rbd_iodepth32': ioengine=rados is one of fio's engines that iofleet does not have: it does IO to Ceph RADOS objects"},
      {"rand-zones.fio", true, "", "",
       ""},
      {"rbd.fio", false, "", "",
       "rbd.fio:14: job 'rbd_iodepth32': ioengine=rbd is one of fio's engines that iofleet does not have: it does IO to Ceph RBD images"},
      {"rdmaio-client.fio", false, "", "",
       "rdmaio-client.fio:3: job 'sender': ioengine=rdma is one of fio's engines that iofleet does not have: it does RDMA transfers between hosts, not file IO"},
      {"rdmaio-server.fio", false, "", "",
       "rdmaio-server.fio:3: job 'receiver': ioengine=rdma is one of fio's engines that iofleet does not have: it does RDMA transfers between hosts, not file IO"},
      {"sequence-distribution.fio", true, "", "",
       ""},
      {"sg_verify-fail.fio", false, "", "",
       "sg_verify-fail.fio:24: job 'precon': ioengine=sg is one of fio's engines that iofleet does not have: it sends SCSI commands through the sg driver"},
      {"sg_verify.fio", false, "", "",
       "sg_verify.fio:27: job 'precon': ioengine=sg is one of fio's engines that iofleet does not have: it sends SCSI commands through the sg driver"},
      {"sg_write_same_ndob.fio", false, "", "",
       "sg_write_same_ndob.fio:24: job 'precon': ioengine=sg is one of fio's engines that iofleet does not have: it sends SCSI commands through the sg driver"},
      {"sprandom.fio", true, "--filename=/dev/nvme0n1", "FIO_BS=4k",
       ""},
      {"ssd-steadystate.fio", true, "", "",
       ""},
      {"ssd-test.fio", true, "", "",
       ""},
      {"steadystate.fio", true, "", "",
       ""},
      {"surface-scan.fio", true, "", "",
       ""},
      {"tiobench-example.fio", true, "", "",
       ""},
      {"uring-cmd-bsg.fio", false, "", "",
       "uring-cmd-bsg.fio:5: job 'rand-write': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-fdp.fio", false, "", "",
       "uring-cmd-fdp.fio:10: job 'write-heavy': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-ng.fio", false, "", "",
       "uring-cmd-ng.fio:5: job 'rand-write': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-pi-ext.fio", false, "", "",
       "uring-cmd-pi-ext.fio:15: job 'write': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-pi-sb.fio", false, "", "",
       "uring-cmd-pi-sb.fio:15: job 'write': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-trim-multi-range.fio", false, "", "",
       "uring-cmd-trim-multi-range.fio:6: job 'write_bs': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-write-mode.fio", false, "", "",
       "uring-cmd-write-mode.fio:12: job 'mixed-write-modes': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-zoned-append.fio", false, "", "",
       "uring-cmd-zoned-append.fio:10: job 'rand-write': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"uring-cmd-zoned.fio", false, "", "",
       "uring-cmd-zoned.fio:12: job 'rand-write': ioengine=io_uring_cmd is one of fio's engines that iofleet does not have: it sends NVMe passthrough commands to an NVMe character device (/dev/ngXnY)"},
      {"waitfor.fio", true, "", "",
       ""},
      {"xnvme-compare.fio", true, "--section=default", "",
       ""},
      {"xnvme-fdp.fio", true, "", "",
       "xnvme-fdp.fio:48: fio option 'fdp' cannot run in iofleet: NVMe flexible data placement needs an NVMe device with FDP and ioengine=io_uring_cmd or xnvme"},
      {"xnvme-pi.fio", true, "", "",
       "xnvme-pi.fio:41: fio option 'md_per_io_size' cannot run in iofleet: NVMe protection information (metadata per IO) needs an NVMe device formatted with it and ioengine=io_uring_cmd or xnvme"},
      {"xnvme-zoned.fio", true, "--section=default", "",
       "xnvme-zoned.fio:82: job 'default': zonemode=zbd needs zonesize=: iofleet emulates zones, as fio does on regular files and block devices that are not zoned; it does not read a zoned device's own zones"},
      {"zbd-rand-write-trim-gc.fio", true, "", "",
       ""},
      {"zbd-rand-write-zone-reset-gc.fio", true, "", "",
       ""},
      {"zbd-rand-write.fio", true, "", "",
       ""},
      {"zbd-seq-read.fio", true, "", "",
       ""},
      {"zipf.fio", true, "", "",
       ""},
  };
  return kExamples;
}
// clang-format on

std::string ExamplesDirectory() {
  const std::string one = Runfile("tests/fio_examples/null.fio");
  return one.substr(0, one.rfind('/'));
}

TEST(FioExamples, EveryFileIsListed) {
  std::set<std::string> listed;
  for (const Example& e : Examples()) listed.insert(e.file);
  DIR* dir = ::opendir(ExamplesDirectory().c_str());
  ASSERT_NE(dir, nullptr) << ExamplesDirectory();
  int files = 0;
  while (dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (!absl::EndsWith(name, ".fio")) continue;
    ++files;
    EXPECT_TRUE(listed.count(name)) << name << " has no expected outcome";
  }
  ::closedir(dir);
  EXPECT_EQ(files, 107);
  EXPECT_EQ(listed.size(), Examples().size()) << "a file is listed twice";
}

TEST(FioExamples, ParseOnlyAcceptsOrRefusesEachAsListed) {
  const std::string out = TempDir() + "/examples";
  int accepted_file_engine = 0, file_engine = 0;
  for (const Example& e : Examples()) {
    std::vector<std::string> argv = {Runfile("controller/iofleet"), "run", ExamplesDirectory() + "/" + e.file, "--parse-only"};
    if (*e.argument) argv.push_back(e.argument);
    std::string variable;
    if (*e.environment) {
      variable = std::string(e.environment).substr(0, std::string(e.environment).find('='));
      ::setenv(variable.c_str(), std::string(e.environment).substr(variable.size() + 1).c_str(), 1);
    }
    TestProcess iofleet(argv, out);
    const int code = iofleet.Wait(std::chrono::seconds(20)).value_or(-1);
    if (!variable.empty()) ::unsetenv(variable.c_str());
    const std::string err = iofleet.Stderr();
    if (*e.refusal == '\0') {
      EXPECT_EQ(code, 0) << e.file << ": " << err;
      EXPECT_TRUE(absl::StrContains(iofleet.Stdout(), "valid")) << e.file;
    } else {
      EXPECT_EQ(code, 2) << e.file;
      EXPECT_TRUE(absl::StrContains(err, e.refusal)) << e.file << "\n  expected: " << e.refusal << "\n  stderr:   " << err;
      EXPECT_FALSE(absl::StrContains(err, "unknown option")) << e.file << ": a refusal names what is missing: " << err;
    }
    file_engine += e.file_engines;
    accepted_file_engine += e.file_engines && *e.refusal == '\0' && code == 0;
  }
  EXPECT_EQ(file_engine, 48);
  std::cout << accepted_file_engine << " of the " << file_engine << " examples that use iofleet's engines are accepted\n";
}

}  // namespace
}  // namespace iofleet
