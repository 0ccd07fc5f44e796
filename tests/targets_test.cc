// The same small job and a small mdtest run against real targets — tmpfs, ext4 and xfs on
// loop devices, a bindfs FUSE mount — through real workers: data written is read back
// verified, byte counts match, file counts match, nothing is left behind, and the workers
// name each target's filesystem.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/report.pb.h"
#include "tests/targets.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::LoopDevice;
using ::iofleet::testing::MountedTarget;
using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::DirectoryEntries;
using ::iofleet::testing::JuiceFsBinary;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;


// The report of a run, read from its iofleet-json output.
v1::RunReport ReportOf(const std::string& json) {
  v1::RunReport report;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok()) << json;
  return report;
}

uint64_t BytesOf(const v1::RunReport& report, int job, const std::string& direction) {
  for (const auto& d : report.jobs(job).directions()) {
    if (d.direction() == direction) return d.bytes();
  }
  return 0;
}

class Targets : public ::testing::TestWithParam<std::string> {};

TEST_P(Targets, SameJobAndMdtestGiveConsistentResults) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting targets needs root";
  if (GetParam() == "juicefs" && JuiceFsBinary().empty()) {
    GTEST_SKIP() << "no juicefs binary: tools/build_juicefs.sh builds one (make test does, and passes it as IOFLEET_JUICEFS)";
  }
  MountedTarget target(GetParam(), TempDir() + "/targets-" + GetParam());
  ASSERT_TRUE(target.error().empty()) << "could not set up the target: " << target.error();
  TestWorker a("t-worker-a-" + GetParam(), {"--allow-root", target.path()});
  TestWorker b("t-worker-b-" + GetParam(), {"--allow-root", target.path()});
  const std::string hosts = absl::StrCat(a.address(), ",", b.address());

  // Random writes that are read back and verified (crc32c), 2 MiB per worker.
  const std::string job = TempDir() + "/target-" + GetParam() + ".fio";
  std::ofstream(job) << "[verify]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=2m\nverify=crc32c\ndirectory=" << target.path() << "/io\n";
  const std::string json = TempDir() + "/target-" + GetParam() + ".json";
  std::vector<std::string> run_args = {Runfile("controller/iofleet"), "run", job, "--hosts", hosts, "--output-format", "iofleet-json",
                                       "--output", json, "--interval", "200ms"};
  // JuiceFS's own view of the run, from its --metrics endpoint.
  if (!target.metrics_url().empty()) run_args.insert(run_args.end(), {"--target-metrics", "juicefs=" + target.metrics_url()});
  TestProcess run(run_args, TempDir() + "/target-run-" + GetParam());
  ASSERT_EQ(run.Wait(std::chrono::seconds(120)).value_or(-1), 0) << run.Stderr();
  const v1::RunReport report = ReportOf(json);
  EXPECT_EQ(BytesOf(report, 0, "write"), 2u * (2 << 20));
  EXPECT_EQ(BytesOf(report, 0, "read"), 2u * (2 << 20)) << "every byte written was read back and verified";
  if (!target.metrics_url().empty()) {
    // Scraped at the interval boundaries of the phase: intervals in order, each bounded by the
    // scrapes around it, with nothing between them (a scrape that is late or fails on a loaded
    // machine leaves the next one to cover its span, so indices may skip, spans never); and
    // JuiceFS saw at least the writes the clients did (each 4 KiB pwrite is one FUSE write, or
    // more if the kernel splits it).
    ASSERT_EQ(report.target_metrics_size(), 1);
    const v1::TargetMetricsResult& t = report.target_metrics(0);
    ASSERT_GE(t.intervals_size(), 2);
    EXPECT_EQ(t.scrapes(), static_cast<uint32_t>(t.intervals_size()) + 2) << "the first check, the phase's baseline, then one per interval";
    for (int i = 0; i < t.intervals_size(); ++i) {
      EXPECT_LT(t.intervals(i).start_unix_ns(), t.intervals(i).end_unix_ns());
      if (i > 0) {
        EXPECT_GT(t.intervals(i).index(), t.intervals(i - 1).index());
        EXPECT_EQ(t.intervals(i).start_unix_ns(), t.intervals(i - 1).end_unix_ns());
      }
    }
    double fuse_writes = 0, per_interval = 0;
    for (const v1::TargetMetricSeries& s : t.run_total()) {
      if (s.name() == "juicefs_fuse_ops_total" && absl::StrContains(s.labels(), "method=\"write\"")) fuse_writes += s.value();
    }
    for (const v1::TargetMetricsInterval& in : t.intervals()) {
      for (const v1::TargetMetricSeries& s : in.series()) {
        if (s.name() == "juicefs_fuse_ops_total" && absl::StrContains(s.labels(), "method=\"write\"")) per_interval += s.value();
      }
    }
    uint64_t client_writes = 0;
    for (const auto& d : report.jobs(0).directions()) client_writes += d.direction() == "write" ? d.ops() : 0;
    EXPECT_EQ(client_writes, 1024u);
    EXPECT_GE(fuse_writes, static_cast<double>(client_writes));
    EXPECT_EQ(per_interval, fuse_writes) << "the intervals add up to the run";
    EXPECT_THAT(t.highlights(), ::testing::Contains(::testing::HasSubstr("JuiceFS FUSE operations: ")));
  }
  for (const auto& w : report.workers()) {
    ASSERT_EQ(w.facts().targets_size(), 1);
    EXPECT_TRUE(absl::StartsWith(w.facts().targets(0).fs_type(), target.expected_fs_type())) << w.facts().targets(0).fs_type();
  }

  // O_DIRECT: libaio random writes at depth 8 that bypass the page cache, each read back and
  // verified; every target here takes direct=1 (a file system that refused it would fail the
  // open with EINVAL, and the run).
  const std::string direct_job = TempDir() + "/target-direct-" + GetParam() + ".fio";
  std::ofstream(direct_job) << "[direct]\nioengine=libaio\niodepth=8\ndirect=1\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\ndirectory=" << target.path()
                            << "/direct\n";
  const std::string direct_json = TempDir() + "/target-direct-" + GetParam() + ".json";
  TestProcess direct({Runfile("controller/iofleet"), "run", direct_job, "--hosts", hosts, "--output-format", "iofleet-json", "--output", direct_json},
                     TempDir() + "/target-direct-run-" + GetParam());
  ASSERT_EQ(direct.Wait(std::chrono::seconds(120)).value_or(-1), 0) << direct.Stderr();
  const v1::RunReport direct_report = ReportOf(direct_json);
  EXPECT_EQ(BytesOf(direct_report, 0, "write"), 2u * (1 << 20));
  EXPECT_EQ(BytesOf(direct_report, 0, "read"), 2u * (1 << 20)) << "every byte written with O_DIRECT was read back and verified";

  // A small mdtest: 2 workers x 2 tasks x 50 files, created, checked, removed.
  const std::string md_json = TempDir() + "/target-md-" + GetParam() + ".json";
  std::vector<std::string> md_args = {Runfile("controller/iofleet"), "mdtest", "-d", target.path() + "/md", "-n", "50", "-F", "-u", "-w", "1024",
                                      "-e", "1024", "--hosts", hosts, "--tasks-per-worker", "2", "--output-format", "json", "--output", md_json};
  if (!target.metrics_url().empty()) md_args.insert(md_args.end(), {"--target-metrics", "juicefs=" + target.metrics_url()});
  TestProcess md(md_args, TempDir() + "/target-md-" + GetParam());
  ASSERT_EQ(md.Wait(std::chrono::seconds(120)).value_or(-1), 0) << md.Stderr();
  v1::MdtestReport md_report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(md_json), &md_report).ok());
  for (const auto& p : md_report.phases()) {
    if (p.operation() == "File creation" || p.operation() == "File read" || p.operation() == "File removal") {
      EXPECT_EQ(p.items(), 200u) << p.operation();
    }
  }
  // The workers made the test directory (it did not exist), so the run removed it, as mdtest.
  EXPECT_EQ(DirectoryEntries(target.path() + "/md"), -1) << "the test directory the run made is left behind";
  if (!target.metrics_url().empty()) {
    // JuiceFS saw the 200 files made (FUSE create) and removed (unlink) by the phases.
    ASSERT_EQ(md_report.target_metrics_size(), 1);
    double creates = 0, unlinks = 0;
    for (const v1::TargetMetricSeries& s : md_report.target_metrics(0).run_total()) {
      if (s.name() != "juicefs_fuse_ops_total") continue;
      if (absl::StrContains(s.labels(), "method=\"create\"")) creates += s.value();
      if (absl::StrContains(s.labels(), "method=\"unlink\"")) unlinks += s.value();
    }
    EXPECT_GE(creates, 200);
    EXPECT_GE(unlinks, 200);
    EXPECT_GE(md_report.target_metrics(0).intervals_size(), 4) << "at least one per phase";
  }
}

// The field's first question, "how much slower is JuiceFS than a local disk?": `iofleet compare`
// runs one job on ext4 (a loop device) and on a JuiceFS mount, with the same worker, and each
// run does the job's exact IO on its own target.
TEST(JuiceFs, CompareWithALocalDisk) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting targets needs root";
  if (JuiceFsBinary().empty()) GTEST_SKIP() << "no juicefs binary: tools/build_juicefs.sh builds one (make test does)";
  MountedTarget local("ext4", TempDir() + "/cmp-local");
  MountedTarget juicefs("juicefs", TempDir() + "/cmp-juicefs");
  ASSERT_EQ(local.error(), "");
  ASSERT_EQ(juicefs.error(), "");
  TestWorker worker("jfs-cmp-worker", {"--allow-root", local.path(), "--allow-root", juicefs.path()});
  const std::string job = TempDir() + "/jfs-cmp.fio";
  std::ofstream(job) << "[w]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=2m\nfsync=32\n";
  const std::string out = TempDir() + "/jfs-cmp.json", results = TempDir() + "/jfs-cmp-results";
  TestProcess compare({Runfile("controller/iofleet"), "compare", job, "--target", "local=" + local.path(), "--target", "juicefs=" + juicefs.path(),
                       "--hosts", worker.address(), "--output-format", "json", "--output", out, "--results-dir", results},
                      TempDir() + "/jfs-cmp.run");
  ASSERT_EQ(compare.Wait(std::chrono::seconds(180)).value_or(-1), 0) << compare.Stderr();
  v1::CompareReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(out), &report).ok());
  ASSERT_EQ(report.targets_size(), 2);
  ASSERT_GT(report.metrics_size(), 0);
  EXPECT_EQ(report.metrics(0).name(), "write IOPS");
  for (const auto& e : report.metrics(0).entries()) EXPECT_GT(e.median(), 0) << e.target();
  const std::vector<std::string> saved = ::iofleet::testing::DirectoryNames(results);
  ASSERT_EQ(saved.size(), 1u);
  for (const auto& [name, target] : {std::pair<std::string, const MountedTarget*>{"local", &local}, {"juicefs", &juicefs}}) {
    const v1::RunReport run = ReportOf(results + "/" + saved[0] + "/" + name + "/1/result.json");
    ASSERT_EQ(run.jobs_size(), 1);
    EXPECT_EQ(BytesOf(run, 0, "write"), 2u << 20) << name;
    EXPECT_EQ(run.jobs(0).directions(0).ops(), 512u) << name;
    ASSERT_EQ(run.workers_size(), 1);
    ASSERT_EQ(run.workers(0).facts().targets_size(), 1);
    EXPECT_TRUE(absl::StartsWith(run.workers(0).facts().targets(0).fs_type(), target->expected_fs_type())) << name;
    struct stat st;
    EXPECT_EQ(::stat((target->path() + "/w.w0.0.0").c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_size, 2 << 20) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(RealFilesystems, Targets, ::testing::Values("tmpfs", "ext4", "xfs", "bindfs", "juicefs"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// A tmpfs with the given mount options, unmounted when the test ends (also on failure).
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& dir, const std::string& options) : dir_(dir) {
    ::mkdir(dir_.c_str(), 0755);
    mounted_ = std::system(("mount -t tmpfs -o " + options + " tmpfs " + dir_).c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_ && std::system(("umount " + dir_ + " 2>/dev/null").c_str()) != 0) {
    }  // already gone: nothing to undo
  }
  bool mounted() const { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

// The filesystem fails under the job (xfs shut down mid-run: every IO gets EIO) and a target
// that cannot be written (a read-only mount): each error reaches the controller with the
// worker, the path and the errno; the run ends by itself and no worker keeps doing IO.
TEST(TargetErrors, IoErrorMidRunAndReadOnlyTarget) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting targets needs root";
  MountedTarget xfs("xfs", TempDir() + "/eio");
  ASSERT_TRUE(xfs.error().empty()) << xfs.error();
  const std::string ro = TempDir() + "/read-only";
  SmallTmpfs read_only(ro, "ro,size=1m");
  ASSERT_TRUE(read_only.mounted());
  TestWorker worker("eio-worker", {"--allow-root", xfs.path(), "--allow-root", ro});

  const std::string job = TempDir() + "/eio.fio";
  std::ofstream(job) << "[w]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=8m\nfsync=16\nruntime=60s\ntime_based\ndirectory=" << xfs.path() << "\n";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", worker.address()}, TempDir() + "/eio-run");
  const std::string file = xfs.path() + "/w.w0.0.0";
  ASSERT_TRUE(run.WaitForOutput("IOPS", std::chrono::seconds(30), /*in_stderr=*/true)) << run.Stderr();  // IO under way
  ASSERT_EQ(std::system(("PATH=/usr/sbin:/sbin:/usr/bin:/bin xfs_io -x -c shutdown " + xfs.path()).c_str()), 0);
  EXPECT_EQ(run.Wait(std::chrono::seconds(30)).value_or(-1), 1);
  std::string err = run.Stderr();
  EXPECT_THAT(err, ::testing::HasSubstr(worker.address()));
  EXPECT_THAT(err, ::testing::HasSubstr(file));
  EXPECT_THAT(err, ::testing::HasSubstr("Input/output error"));
  EXPECT_LT(::iofleet::testing::BytesMovedDuring(worker.process().pid(), std::chrono::seconds(1)), ::iofleet::testing::kIdleBytesPerSecond);

  const std::string ro_job = TempDir() + "/ro.fio";
  std::ofstream(ro_job) << "[w]\nrw=write\nbs=4k\nsize=64k\ndirectory=" << ro << "\n";
  TestProcess refused({Runfile("controller/iofleet"), "run", ro_job, "--hosts", worker.address()}, TempDir() + "/ro-run");
  EXPECT_EQ(refused.Wait(std::chrono::seconds(30)).value_or(-1), 1);
  err = refused.Stderr();
  EXPECT_THAT(err, ::testing::HasSubstr(worker.address()));
  EXPECT_THAT(err, ::testing::HasSubstr(ro + "/w.w0.0.0"));
  EXPECT_THAT(err, ::testing::HasSubstr("Read-only file system"));
}

// mdtest on a filesystem that fills up (files of 100000 bytes, so the last write that fits is
// short): it says "No space left on device" (RESOURCE_EXHAUSTED), not the "Input/output error"
// a short write used to become.
TEST(TargetErrors, MdtestOnAFullFilesystemSaysNoSpace) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string dir = TempDir() + "/tiny-md";
  SmallTmpfs tiny(dir, "size=1m");
  ASSERT_TRUE(tiny.mounted());
  TestWorker worker("tiny-md-worker", {"--allow-root", dir});
  TestProcess run({Runfile("controller/iofleet"), "mdtest", "-d", dir + "/md", "-n", "100", "-F", "-C", "-w", "100000", "--hosts",
                   worker.address(), "--quiet", "--results-dir", "none"},
                  TempDir() + "/tiny-md.run");
  EXPECT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 1);
  const std::string err = run.Stderr();
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_NE(err.find("RESOURCE_EXHAUSTED"), std::string::npos) << err;
  EXPECT_EQ(err.find("Input/output error"), std::string::npos) << err;
}

// A filesystem that fills up mid-run: the error reaches the controller with the worker, the
// path and the errno; with continue_on_error the job keeps going and counts the failures.
TEST(TargetErrors, NoSpaceLeftMidRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string dir = TempDir() + "/tiny";
  SmallTmpfs tiny(dir, "size=1m");
  ASSERT_TRUE(tiny.mounted());
  TestWorker worker("tiny-worker", {"--allow-root", dir});
  // As in fio, continue_on_error continues past EIO and EILSEQ only; ignore_error=,ENOSPC makes
  // ENOSPC one of them for writes, and error_dump=0 keeps the continued errors out of the notes.
  for (const std::string options : {"", "continue_on_error=write\n", "continue_on_error=write\nignore_error=,ENOSPC\n",
                                     "continue_on_error=write\nignore_error=,ENOSPC\nerror_dump=0\n"}) {
    const bool keep_going = absl::StrContains(options, "ENOSPC");
    const std::string job = TempDir() + "/tiny" + std::to_string(options.size()) + ".fio";
    std::ofstream(job) << "[fill]\nioengine=psync\nrw=write\nbs=64k\nsize=4m\ncreate_on_open=1\nunlink=1\ndirectory=" << dir << "\n"
                       << options;
    const std::string json = job + ".json";
    TestProcess run({Runfile("controller/iofleet"), "run", job, "--hosts", worker.address(), "--output-format", "iofleet-json", "--output", json},
                    job + ".run");
    EXPECT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), keep_going ? 0 : 1) << options;
    const std::string err = run.Stderr();
    v1::RunReport report;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok());
    const auto& d = report.jobs(0).directions(0);
    if (keep_going) {
      ASSERT_EQ(report.jobs(0).workers_size(), 1);
      const auto& notes = report.jobs(0).workers(0).notes();
      const bool noted = std::any_of(notes.begin(), notes.end(), [&](const std::string& n) {
        return absl::StrContains(n, "IO error(s), continued (continue_on_error); first: RESOURCE_EXHAUSTED: write of 65536 bytes") &&
               absl::StrContains(n, dir + "/fill.w0.0.0") && absl::StrContains(n, "No space left on device");
      });
      EXPECT_EQ(noted, !absl::StrContains(options, "error_dump=0")) << options;
      EXPECT_EQ(d.ops(), 64u);      // every IO of the pass was tried
      EXPECT_GT(d.errors(), 40u);   // most of them failed: 1 MiB of 4 fits
    } else {
      EXPECT_NE(err.find(worker.address()), std::string::npos) << err;
      EXPECT_NE(err.find(dir + "/fill.w0.0.0"), std::string::npos) << err;
      EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
      EXPECT_EQ(d.errors(), 1u);    // the job stopped at the first failure
      EXPECT_LT(d.ops(), 64u);
    }
    // The job is over on the worker too: no orphan load.
    EXPECT_LT(::iofleet::testing::BytesMovedDuring(worker.process().pid(), std::chrono::seconds(1)),
              ::iofleet::testing::kIdleBytesPerSecond);
  }
}

// fio's surface-scan.fio, unchanged: fill_device writes 64 KiB blocks of 512-byte intervals
// (verify=meta, verify_pattern=0xaa555aa5) until the file system is full, then a read job
// checks every interval. On a 9 MiB tmpfs with 1 MiB taken, the writes meet ENOSPC after 8 MiB,
// which ends the write job without an error; the read job verifies all 8 MiB. A byte changed
// afterwards is found by the next verifying read.
TEST(FioExamplesOnTargets, SurfaceScanFillsTheFileSystemThenVerifiesIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  const std::string dir = TempDir() + "/surface";
  SmallTmpfs tiny(dir, "size=9m");
  ASSERT_TRUE(tiny.mounted());
  std::ofstream(dir + "/taken", std::ios::binary) << std::string(1 << 20, 'x');
  TestWorker worker("surface-worker", {"--allow-root", dir});
  const std::string json = TempDir() + "/surface.json";
  TestProcess run({Runfile("controller/iofleet"), "run", Runfile("tests/fio_examples/surface-scan.fio"), "--directory", dir, "--hosts",
                   worker.address(), "--output-format", "iofleet-json", "--output", json},
                  TempDir() + "/surface.run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(120)).value_or(-1), 0) << run.Stderr();
  const v1::RunReport report = ReportOf(json);
  EXPECT_EQ(BytesOf(report, 0, "write"), 8u << 20);
  EXPECT_EQ(BytesOf(report, 1, "read"), 8u << 20);
  struct stat st;
  ASSERT_EQ(::stat((dir + "/datafile.tmp").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8 << 20);
  ASSERT_EQ(report.jobs(0).workers_size(), 1);
  EXPECT_THAT(report.jobs(0).workers(0).notes(),
              ::testing::Contains(absl::StrCat("fill_device: ", dir, "/datafile.tmp filled its file system at offset ", 8 << 20)));

  // One byte of interval 7 of block 100 flipped: the verify phase names that interval.
  {
    std::fstream f(dir + "/datafile.tmp", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100 * 65536 + 7 * 512 + 200);
    f.put('\x01');
  }
  const std::string verify_only = TempDir() + "/surface-verify.fio";
  std::ofstream(verify_only) << "[verify-phase]\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n"
                                "filename=datafile.tmp\nrw=read\ndo_verify=1\n";
  TestProcess check({Runfile("controller/iofleet"), "run", verify_only, "--directory", dir, "--hosts", worker.address()},
                    TempDir() + "/surface-verify.run");
  EXPECT_EQ(check.Wait(std::chrono::seconds(60)).value_or(-1), 1);
  EXPECT_NE(check.Stderr().find(absl::StrCat("verify (meta) of 512 bytes at offset ", 100 * 65536 + 7 * 512)), std::string::npos)
      << check.Stderr();
  EXPECT_NE(check.Stderr().find("the pattern has"), std::string::npos) << check.Stderr();
}

// fio's atomic-verify.fio, shrunk (4 jobs, 8 MiB): writes with RWF_ATOMIC and crc64 headers
// from several jobs into one file, read back in any write order (verify_write_sequence=0). XFS
// (software atomic writes, Linux 6.16) takes them; ext4 on a device without atomic write
// support refuses RWF_ATOMIC, and the error says so.
TEST(FioExamplesOnTargets, AtomicVerifyOnXfsAndRefusedOnExt4) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting loop devices needs root";
  const std::string example = ReadFile(Runfile("tests/fio_examples/atomic-verify.fio"));
  ASSERT_NE(example.find("filename=/dev/XXX"), std::string::npos);
  ASSERT_NE(example.find("numjobs=10"), std::string::npos);
  for (const std::string kind : {"xfs", "ext4"}) {
    MountedTarget target(kind, TempDir() + "/atomic-" + kind);
    if (!target.error().empty()) GTEST_SKIP() << target.error();
    TestWorker worker("atomic-" + kind, {"--allow-root", target.path()});
    const std::string json = TempDir() + "/atomic-" + kind + ".json";
    const std::string job = TempDir() + "/atomic-" + kind + ".fio";
    std::ofstream(job) << absl::StrReplaceAll(example, {{"filename=/dev/XXX", "filename=atomic.dat\nsize=8m"}, {"numjobs=10", "numjobs=4"}});
    TestProcess run({Runfile("controller/iofleet"), "run", job, "--directory", target.path(), "--hosts", worker.address(),
                     "--output-format", "iofleet-json", "--output", json},
                    job + ".run");
    const int exit_code = run.Wait(std::chrono::seconds(120)).value_or(-1);
    if (kind == "xfs") {
      ASSERT_EQ(exit_code, 0) << run.Stderr();
      const v1::RunReport report = ReportOf(json);
      EXPECT_EQ(BytesOf(report, 0, "write"), 4u * (8u << 20));
      // do_verify (fio's default): every job reads back what it wrote.
      EXPECT_EQ(BytesOf(report, 0, "read"), BytesOf(report, 0, "write"));
    } else {
      EXPECT_EQ(exit_code, 1);
      EXPECT_NE(run.Stderr().find("with RWF_ATOMIC (atomic=1): the kernel cannot write this block untorn here"), std::string::npos)
          << run.Stderr();
    }
  }
}

// fio's cmdprio-percentage.fio on a block device (a loop device for its /dev/sda), 3 s: the job
// runs at the idle class and 20% of its reads carry the realtime class (root may set it), each
// priority's completion latency reported apart as fio's "clat prio" lines and JSON "prios". The
// job has no size=: the whole device, as fio.
TEST(FioExamplesOnTargets, CommandPriorityPercentageOnABlockDevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "loop devices need root";
  const std::string example = ReadFile(Runfile("tests/fio_examples/cmdprio-percentage.fio"));
  ASSERT_NE(example.find("filename=/dev/sda"), std::string::npos);
  LoopDevice device(TempDir() + "/cmdprio", "64M");
  ASSERT_EQ(device.error(), "");
  const std::string dir = TempDir() + "/cmdprio/logs";
  ::mkdir(dir.c_str(), 0755);
  const std::string job = TempDir() + "/cmdprio/job.fio";
  std::ofstream(job) << absl::StrReplaceAll(example, {{"filename=/dev/sda", "filename=" + device.path() + "\nruntime=3\ntime_based"}});
  const std::string device_dir = device.path().substr(0, device.path().rfind('/'));
  TestWorker worker("cmdprio-worker", {"--allow-root", device_dir, "--allow-root", dir});
  const std::string json = TempDir() + "/cmdprio/out.json";
  TestProcess run({Runfile("controller/iofleet"), "run", job, "--directory", dir, "--hosts", worker.address(), "--output-format", "json",
                   "--output", json},
                  TempDir() + "/cmdprio/run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(60)).value_or(-1), 0) << run.Stderr();
  google::protobuf::Struct out;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &out).ok());
  const auto& read = out.fields().at("jobs").list_value().values(0).struct_value().fields().at("read").struct_value().fields();
  const double total = read.at("total_ios").number_value();
  EXPECT_GT(total, 100);
  const auto& prios = read.at("prios").list_value();
  ASSERT_EQ(prios.values_size(), 2);
  auto field = [&](int i, const std::string& key) { return prios.values(i).struct_value().fields().at(key); };
  EXPECT_EQ(field(0, "prioclass").number_value(), 3);  // the job's, listed first as fio does
  EXPECT_EQ(field(1, "prioclass").number_value(), 1);
  const double high = field(1, "clat_ns").struct_value().fields().at("N").number_value();
  const double low = field(0, "clat_ns").struct_value().fields().at("N").number_value();
  EXPECT_EQ(high + low, total);
  EXPECT_NEAR(high / total, 0.20, 0.05);
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

// The controller (with its local workers, or given hosts) inside the NFS server's namespace.
std::vector<std::string> InNamespace(const std::string& netns, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/ip", "netns", "exec", netns});
  return argv;
}

// The same job and mdtest run against nfs-ganesha through the libnfs engine (no mount): data
// written is read back verified, fsync/end_fsync work, byte and file counts match, and the
// worker's --allow-root NFS prefix confines the job.
TEST(NfsTarget, SameJobAndMdtestThroughTheNfsEngine) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces for the NFS server need root";
  ::iofleet::testing::NfsServer server(TempDir() + "/nfs-target");
  ASSERT_TRUE(server.error().empty()) << "could not start the NFS server: " << server.error();

  const std::string job = TempDir() + "/target-nfs.fio";
  std::ofstream(job) << "[verify]\nioengine=nfs\nnfs_url=" << server.url() << "\ndirectory=io\nrw=randwrite\nbs=4k\nsize=2m\n"
                     << "iodepth=8\nfsync=32\nend_fsync=1\nverify=crc32c\n";
  const std::string json = TempDir() + "/target-nfs.json";
  TestProcess run(InNamespace(server.netns(), {Runfile("controller/iofleet"), "run", job, "--output-format", "iofleet-json", "--output", json}),
                  TempDir() + "/target-run-nfs");
  ASSERT_EQ(run.Wait(std::chrono::seconds(120)).value_or(-1), 0) << run.Stderr();
  v1::RunReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json), &report).ok());
  uint64_t written = 0, read = 0, errors = 0, syncs = 0;
  for (const auto& d : report.jobs(0).directions()) {
    if (d.direction() == "write") written = d.bytes();
    if (d.direction() == "read") read = d.bytes();
    if (d.direction() == "sync") syncs = d.ops();
    errors += d.errors();
  }
  EXPECT_EQ(written, 2u * (2 << 20)) << "two local workers, 2 MiB each";
  // fsync=32 over 512 writes (the last one falls on the pass's end, as in fio) + end_fsync,
  // per worker: NFS COMMITs, which fio's own nfs engine cannot do.
  EXPECT_EQ(syncs, 2u * (15 + 1));
  EXPECT_EQ(read, written) << "every byte written was read back and verified";
  EXPECT_EQ(errors, 0u);
  ASSERT_EQ(report.workers_size(), 2);
  for (const auto& w : report.workers()) {
    ASSERT_EQ(w.facts().targets_size(), 1);
    EXPECT_TRUE(absl::StartsWith(w.facts().targets(0).fs_type(), "nfs")) << w.facts().targets(0).fs_type();
    EXPECT_EQ(w.facts().targets(0).nfs_version(), "3");
    EXPECT_FALSE(w.facts().targets(0).wsize().empty()) << "the negotiated write size";
  }
  // The files are on the server's export, at the job's size.
  EXPECT_EQ(DirectoryEntries(server.export_dir() + "/io"), 2);
  struct stat st;
  ASSERT_EQ(::stat((server.export_dir() + "/io/verify.w0.0.0").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 2 << 20);

  // mdtest through libnfs: 2 workers x 2 tasks x 50 files, created, checked, removed.
  const std::string md_json = TempDir() + "/target-md-nfs.json";
  TestProcess md(InNamespace(server.netns(), {Runfile("controller/iofleet"), "mdtest", "-d", server.url() + "/md", "-n", "50", "-F", "-u",
                                              "-w", "1024", "-e", "1024", "--tasks-per-worker", "2", "--output-format", "json",
                                              "--output", md_json}),
                 TempDir() + "/target-md-nfs");
  ASSERT_EQ(md.Wait(std::chrono::seconds(120)).value_or(-1), 0) << md.Stderr();
  v1::MdtestReport md_report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(md_json), &md_report).ok());
  int checked = 0;
  for (const auto& p : md_report.phases()) {
    if (p.operation() == "File creation" || p.operation() == "File read" || p.operation() == "File removal") {
      EXPECT_EQ(p.items(), 200u) << p.operation();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);
  EXPECT_EQ(DirectoryEntries(server.export_dir() + "/md"), 0) << "the tree is removed through NFS (the test directory made over nfs:// stays)";

  // The same job on a local path and on the export, side by side (the README's walkthrough).
  const std::string local_dir = TempDir() + "/nfs-compare-local";
  const std::string side_by_side = TempDir() + "/nfs-compare.fio";
  std::ofstream(side_by_side) << "[randwrite]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=4\n";
  TestProcess compare(InNamespace(server.netns(), {Runfile("controller/iofleet"), "compare", side_by_side, "--target", "local=" + local_dir,
                                                   "--target", "nfs=" + server.url() + "/cmp"}),
                      TempDir() + "/nfs-compare");
  ASSERT_EQ(compare.Wait(std::chrono::seconds(120)).value_or(-1), 0) << compare.Stderr();
  EXPECT_THAT(compare.Stdout(), ::testing::HasSubstr("write IOPS")) << compare.Stdout();
  EXPECT_THAT(compare.Stdout(), ::testing::HasSubstr("nfs")) << compare.Stdout();
  EXPECT_THAT(compare.Stderr(), ::testing::HasSubstr("runs with ioengine=nfs")) << compare.Stderr();
  EXPECT_EQ(DirectoryEntries(server.export_dir() + "/cmp"), 2) << "each local worker's file went to the export";

  // Confinement: a worker allowed one NFS directory refuses another one on the same export.
  TestProcess worker(InNamespace(server.netns(), {Runfile("worker/iofleet-worker"), "--listen", "127.0.0.1:7411", "--allow-root",
                                                  server.url() + "/allowed"}),
                     TempDir() + "/nfs-confined-worker");
  ASSERT_TRUE(worker.WaitForOutput("listening", std::chrono::seconds(10))) << worker.Stderr();
  const std::string outside = TempDir() + "/target-nfs-outside.fio";
  std::ofstream(outside) << "[escape]\nioengine=nfs\nnfs_url=" << server.url() << "/other\nrw=write\nbs=4k\nsize=64k\n";
  TestProcess refused(InNamespace(server.netns(), {Runfile("controller/iofleet"), "run", outside, "--hosts", "127.0.0.1:7411"}),
                      TempDir() + "/nfs-refused");
  EXPECT_NE(refused.Wait(std::chrono::seconds(60)).value_or(0), 0);
  EXPECT_THAT(refused.Stderr(), ::testing::HasSubstr("outside this worker's allowed roots")) << refused.Stderr();
  EXPECT_EQ(DirectoryEntries(server.export_dir() + "/other"), -1) << "nothing was created outside the allowed prefix";
}

// The server dies mid-run: the run ends on its own within the engine's no-reply bound, says
// which file and server failed, and leaves no worker running.
TEST(NfsTarget, ServerLossEndsTheRunWithItsReason) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces for the NFS server need root";
  ::iofleet::testing::NfsServer server(TempDir() + "/nfs-loss");
  ASSERT_TRUE(server.error().empty()) << "could not start the NFS server: " << server.error();
  const std::string job = TempDir() + "/nfs-loss.fio";
  std::ofstream(job) << "[w]\nioengine=nfs\nnfs_url=" << server.url() << "\nrw=randwrite\nbs=4k\nsize=8m\niodepth=8\nruntime=300\ntime_based\n";
  TestProcess run(InNamespace(server.netns(), {Runfile("controller/iofleet"), "run", job}), TempDir() + "/nfs-loss-run");
  // Both local workers' files appear on the export at layout; then let IO run a while.
  // Kill the server once IO is under way: the first interval's progress line says so.
  ASSERT_TRUE(run.WaitForOutput("write ", std::chrono::seconds(30), /*in_stderr=*/true)) << run.Stderr();
  ASSERT_EQ(DirectoryEntries(server.export_dir()), 2) << run.Stderr();
  server.Kill();
  const auto killed = std::chrono::steady_clock::now();
  const std::optional<int> code = run.Wait(std::chrono::seconds(90));
  ASSERT_TRUE(code.has_value()) << "the run hung after the server died";
  EXPECT_EQ(*code, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(60));
  EXPECT_THAT(run.Stderr(), ::testing::HasSubstr("nfs://127.0.0.1")) << run.Stderr();
  EXPECT_THAT(run.Stdout(), ::testing::HasSubstr("write: IOPS=")) << "what was measured is still reported";
}

}  // namespace
}  // namespace iofleet
