// Proof of equivalence with fio: the same small job files run with fio and with iofleet (one
// local worker) on the same temporary filesystem, and what was *done* is compared — IOs per
// direction, bytes, files laid out and their sizes, the read/write mix, fsync counts,
// verification passing on clean data and failing on corrupted data. Not how fast.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::ReadFile;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::testing::HasSubstr;

constexpr char kFio[] = "/usr/bin/fio";

struct Outcome {
  int exit_code = -1;
  std::string err;
  google::protobuf::Struct json;
};

double Number(const google::protobuf::Struct& json, const std::vector<std::string>& path, int job = 0) {
  const google::protobuf::Value* v = &json.fields().at("jobs").list_value().values(job);
  for (const std::string& key : path) v = &v->struct_value().fields().at(key);
  return v->number_value();
}

int JobCount(const google::protobuf::Struct& json) { return json.fields().at("jobs").list_value().values_size(); }

// Sums a number over all of the output's jobs (fio reports each numjobs clone separately).
double Total(const google::protobuf::Struct& json, const std::vector<std::string>& path) {
  double total = 0;
  for (int j = 0; j < JobCount(json); ++j) total += Number(json, path, j);
  return total;
}

// The files a tool left in `dir`: name -> size.
std::map<std::string, off_t> Files(const std::string& dir) {
  std::map<std::string, off_t> files;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = ::readdir(d)) {
    struct stat st;
    const std::string path = dir + "/" + e->d_name;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) files[e->d_name] = st.st_size;
  }
  ::closedir(d);
  return files;
}

class FioEquivalence : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kFio, X_OK) != 0) GTEST_SKIP() << "fio is not installed (tools/install_deps.sh installs it)";
    base_ = TempDir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ::mkdir(base_.c_str(), 0755);
  }

  // Runs `job` (without directory=) with the tool in its own directory under the test's.
  Outcome Run(const std::string& tool, const std::string& job, const std::string& dir_name) {
    const std::string dir = base_ + "/" + dir_name;
    ::mkdir(dir.c_str(), 0755);
    const std::string job_path = base_ + "/" + dir_name + ".fio";
    std::ofstream(job_path) << "[global]\ndirectory=" << dir << "\n" << job;
    const std::string json_path = base_ + "/" + dir_name + ".json";
    std::vector<std::string> argv;
    if (tool == "fio") {
      argv = {kFio, "--output-format=json", "--output=" + json_path, job_path};
    } else {
      argv = {Runfile("controller/iofleet"), "run", job_path, "--local-workers", "1", "--worker-binary",
              Runfile("worker/iofleet-worker"), "--output-format", "json", "--output", json_path};
    }
    TestProcess process(argv, base_ + "/" + dir_name + "-" + tool);
    Outcome outcome;
    outcome.exit_code = process.Wait(std::chrono::seconds(60)).value_or(-1);
    outcome.err = process.Stderr();
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadFile(json_path), &outcome.json).ok())
        << tool << " wrote no JSON; stderr: " << outcome.err;
    return outcome;
  }

  std::string base_;
};

// The lines of a log file, split at commas.
std::vector<std::vector<std::string>> LogLines(const std::string& path) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream fs(line);
    for (std::string f; std::getline(fs, f, ',');) fields.push_back(f);
    lines.push_back(fields);
  }
  return lines;
}

// fio's write_*_log options: iofleet's files have fio's names and line formats, windows of
// log_avg_msec, and the histogram log's buckets add up to every completed IO.
TEST_F(FioEquivalence, LogFilesInFiosFormats) {
  auto job = [&](const std::string& tool) {
    const std::string prefix = base_ + "/" + tool + "-logs/j";
    return "[j]\nioengine=psync\nrw=randrw\nbs=4k\nsize=1m\nruntime=2s\ntime_based\nlog_avg_msec=500\nlog_hist_msec=500\n"
           "write_bw_log=" + prefix + "\nwrite_iops_log=" + prefix + "\nwrite_lat_log=" + prefix + "\nwrite_hist_log=" + prefix + "\n";
  };
  ::mkdir((base_ + "/fio-logs").c_str(), 0755);
  Outcome fio = Run("fio", job("fio"), "fio");
  Outcome ifl = Run("iofleet", job("iofleet"), "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  for (const char* kind : {"bw", "iops", "lat", "clat"}) {
    const auto theirs = LogLines(absl::StrCat(base_, "/fio-logs/j_", kind, ".1.log"));
    const auto ours = LogLines(absl::StrCat(base_, "/iofleet-logs/j_", kind, ".1.log"));
    ASSERT_FALSE(theirs.empty()) << kind;
    ASSERT_FALSE(ours.empty()) << kind;
    EXPECT_NEAR(static_cast<double>(ours.size()), static_cast<double>(theirs.size()), 3) << kind << ": one line per direction and window";
    for (const auto& line : ours) {
      ASSERT_EQ(line.size(), theirs[0].size()) << kind;
      const long msec = std::stol(line[0]);
      EXPECT_LE(std::abs(msec - 500 * ((msec + 250) / 500)), 20) << kind << ": windows of log_avg_msec";
      EXPECT_TRUE(line[2] == " 0" || line[2] == " 1") << kind << ": data direction";
      EXPECT_GT(std::stoull(line[1]), 0u) << kind;
    }
  }
  const auto theirs = LogLines(base_ + "/fio-logs/j_clat_hist.1.log");
  const auto ours = LogLines(base_ + "/iofleet-logs/j_clat_hist.1.log");
  ASSERT_FALSE(theirs.empty());
  ASSERT_FALSE(ours.empty());
  uint64_t counted = 0;
  for (const auto& line : ours) {
    ASSERT_EQ(line.size(), theirs[0].size()) << "time, direction, block size and fio's 1856 buckets";
    EXPECT_EQ(std::stoul(line[2]), 4096u);
    for (size_t i = 3; i < line.size(); ++i) counted += std::stoull(line[i]);
  }
  const double ios = Total(ifl.json, {"read", "total_ios"}) + Total(ifl.json, {"write", "total_ios"});
  EXPECT_EQ(counted, ios) << "every completed IO is in exactly one bucket of one window";

  // fio's own reader of histogram logs (shipped, gzipped, with Debian's fio) reads iofleet's:
  // unweighted, its per-window sample counts add up to every IO and its percentiles lie
  // within the run's latency range.
  const std::string parser = base_ + "/fiologparser_hist.py";
  ASSERT_EQ(std::system(("gzip -dc /usr/share/doc/fio/fiologparser_hist.py.gz > " + parser).c_str()), 0)
      << "fio's fiologparser_hist.py is missing (Debian's fio package ships it)";
  TestProcess parse({"/usr/bin/python3", parser, "--noweight", "-i", "500", base_ + "/iofleet-logs/j_clat_hist.1.log"},
                    base_ + "/fiologparser");
  ASSERT_EQ(parse.Wait(std::chrono::seconds(60)).value_or(-1), 0) << parse.Stderr();
  const auto rows = LogLines(base_ + "/fiologparser.out");
  ASSERT_GE(rows.size(), 3u) << "a header and a row per window:\n" << parse.Stdout();
  EXPECT_EQ(rows[0][1], " samples");
  double samples = 0;
  const double max_ns = std::max(Number(ifl.json, {"read", "clat_ns", "max"}), Number(ifl.json, {"write", "clat_ns", "max"}));
  for (size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), 9u) << "end-time, samples, min, avg, median, 90%, 95%, 99%, max";
    samples += std::stod(rows[r][1]);
    const double p99 = std::stod(rows[r][7]);
    EXPECT_GT(p99, 0);
    EXPECT_LE(p99, max_ns * 1.01) << "window " << rows[r][0] << ": p99 beyond the run's largest latency";
  }
  EXPECT_EQ(samples, ios) << "fio's parser found every IO in iofleet's histogram log";
}

// log_offset=1: fio's averaged lines gain an offset column (time, value, direction, block size,
// offset 0, priority); iofleet's lines have the same columns.
TEST_F(FioEquivalence, LogOffsetAddsFiosOffsetColumn) {
  auto job = [&](const std::string& tool) {
    return "[j]\nioengine=psync\nrw=randrw\nbs=4k\nsize=1m\nruntime=1s\ntime_based\nlog_avg_msec=500\nlog_offset=1\n"
           "write_bw_log=" + base_ + "/" + tool + "-logs/j\n";
  };
  ::mkdir((base_ + "/fio-logs").c_str(), 0755);
  Outcome fio = Run("fio", job("fio"), "fio");
  Outcome ifl = Run("iofleet", job("iofleet"), "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  const auto theirs = LogLines(base_ + "/fio-logs/j_bw.1.log");
  const auto ours = LogLines(base_ + "/iofleet-logs/j_bw.1.log");
  ASSERT_FALSE(theirs.empty());
  ASSERT_FALSE(ours.empty());
  ASSERT_EQ(theirs[0].size(), 6u) << "fio 3.33's columns with log_offset";
  for (const auto& line : ours) {
    ASSERT_EQ(line.size(), theirs[0].size());
    EXPECT_EQ(line[4], " 0") << "an averaged line's offset";
  }
}

TEST_F(FioEquivalence, RandomWritesWithFsyncFromTwoJobs) {
  const std::string job = "[w]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=1m\nfsync=8\nnumjobs=2\n";
  Outcome fio = Run("fio", job, "fio");
  Outcome ifl = Run("iofleet", job, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  EXPECT_EQ(Total(ifl.json, {"write", "total_ios"}), Total(fio.json, {"write", "total_ios"}));
  EXPECT_EQ(Total(ifl.json, {"write", "io_bytes"}), Total(fio.json, {"write", "io_bytes"}));
  EXPECT_EQ(Total(ifl.json, {"sync", "total_ios"}), Total(fio.json, {"sync", "total_ios"}));
  EXPECT_EQ(Total(ifl.json, {"read", "total_ios"}), 0);
  // The same number of files of the same sizes (names differ: iofleet adds the worker).
  std::multiset<off_t> fio_sizes, ifl_sizes;
  for (const auto& [name, size] : Files(base_ + "/fio")) fio_sizes.insert(size);
  for (const auto& [name, size] : Files(base_ + "/iofleet")) ifl_sizes.insert(size);
  EXPECT_EQ(ifl_sizes, fio_sizes);
  EXPECT_EQ(ifl_sizes.size(), 2u);
}

// fio's rw modifiers: rw=write:4k keeps going past the end from the start until size bytes were
// written (size=2m bs=4k: 512 writes), rw=read:-8k reads backwards, rw=randread:8 runs of 8.
// cmdprio-percentage.fio's options on a file (best effort instead of realtime, which needs
// CAP_SYS_ADMIN): both tools send 25% of the reads at class 2 and the rest at the job's idle
// class, and list fio's "prios" in the same order: the job's class first.
TEST_F(FioEquivalence, CommandPrioritiesSplitLikeFio) {
  const std::string job = "[randread]\nrw=randread\nbs=4k\nsize=8m\nioengine=libaio\ndirect=1\niodepth=8\nprioclass=3\n"
                          "cmdprio_percentage=25\ncmdprio_class=2\ncmdprio=0\nfilename=prio.dat\n";
  for (const std::string tool : {"fio", "iofleet"}) {
    Outcome out = Run(tool, job, tool);
    ASSERT_EQ(out.exit_code, 0) << tool << ": " << out.err;
    EXPECT_EQ(Number(out.json, {"read", "total_ios"}), 2048) << tool;
    const auto& prios = out.json.fields().at("jobs").list_value().values(0).struct_value().fields().at("read").struct_value().fields().at("prios").list_value();
    ASSERT_EQ(prios.values_size(), 2) << tool;
    auto field = [&](int i, const std::string& key) { return prios.values(i).struct_value().fields().at(key); };
    EXPECT_EQ(field(0, "prioclass").number_value(), 3) << tool;
    EXPECT_EQ(field(1, "prioclass").number_value(), 2) << tool;
    EXPECT_EQ(field(1, "prio").number_value(), 0) << tool;
    const double high = field(1, "clat_ns").struct_value().fields().at("N").number_value();
    const double low = field(0, "clat_ns").struct_value().fields().at("N").number_value();
    EXPECT_EQ(high + low, 2048) << tool;
    EXPECT_NEAR(high / 2048, 0.25, 0.05) << tool;
  }
}

TEST_F(FioEquivalence, RwModifiersIssueFiosIoCounts) {
  const std::string job = "[w]\nioengine=psync\nbs=4k\nrw=write:4k\nsize=2m\n"
                          "[b]\nioengine=psync\nbs=4k\nrw=read:-8k\nsize=1m\nstonewall\n"
                          "[r]\nioengine=psync\nbs=4k\nrw=randread:8\nsize=1m\nstonewall\n";
  Outcome fio = Run("fio", job, "fio");
  Outcome ifl = Run("iofleet", job, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  for (int j = 0; j < 3; ++j) {
    for (const char* direction : {"read", "write"}) {
      EXPECT_EQ(Number(ifl.json, {direction, "total_ios"}, j), Number(fio.json, {direction, "total_ios"}, j)) << "job " << j << " " << direction;
      EXPECT_EQ(Number(ifl.json, {direction, "io_bytes"}, j), Number(fio.json, {direction, "io_bytes"}, j)) << "job " << j << " " << direction;
    }
  }
  EXPECT_EQ(Number(ifl.json, {"write", "total_ios"}, 0), 512);
  EXPECT_EQ(Number(ifl.json, {"read", "total_ios"}, 1), 256);
}

// fsync=1 over several passes (loops=3): each pass's last write gets its fsync at the start of
// the next, only the job's very last one goes without (fio 3.33 with libaio: 192 writes, 191
// fsyncs; with psync fio counts 193 fsyncs for 192 writes, an extra one per pass change, which
// iofleet does not copy).
TEST_F(FioEquivalence, FsyncEveryWriteAcrossLoopsAsFio) {
  const std::string job = "[w]\nioengine=libaio\nrw=randwrite\nbs=4k\nsize=256k\nfsync=1\nloops=3\n";
  Outcome fio = Run("fio", job, "fio");
  Outcome ifl = Run("iofleet", job, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  EXPECT_EQ(Number(fio.json, {"write", "total_ios"}), 192);
  EXPECT_EQ(Number(fio.json, {"sync", "total_ios"}), 191);
  EXPECT_EQ(Number(ifl.json, {"write", "total_ios"}), 192);
  EXPECT_EQ(Number(ifl.json, {"sync", "total_ios"}), 191);
}

// fio's zonemode=zbd on a regular file (zones emulated): random writes at the write pointers of
// at most 4 open zones, then random trims (zone resets), a sequential read of what is left and
// random reads inside it — the same IO counts as fio, phase after phase, because the zones'
// state carries across the run's stonewalled phases as in fio. And zonemode=strided.
TEST_F(FioEquivalence, ZoneModesIssueFiosIoCounts) {
  const std::string job = "[w]\nzonemode=zbd\nzonesize=1M\ndirect=1\nioengine=psync\nfilename=zf\nsize=16M\n"
                          "rw=randwrite\nbs=64k\nmax_open_zones=4\nio_size=40M\n"
                          "[t]\nstonewall\nzonemode=zbd\nzonesize=1M\nioengine=psync\nfilename=zf\nsize=16M\nrw=randtrim\nbs=1M\nio_size=6M\n"
                          "[r]\nstonewall\nzonemode=zbd\nzonesize=1M\nioengine=psync\nfilename=zf\nsize=16M\nrw=read\nbs=128k\n"
                          "[rr]\nstonewall\nzonemode=zbd\nzonesize=1M\nioengine=psync\nfilename=zf\nsize=16M\nrw=randread\nbs=16k\nio_size=2M\n"
                          "[s]\nstonewall\nzonemode=strided\nzonesize=64k\nzonerange=128k\nzoneskip=192k\nioengine=psync\nfilename=sf\n"
                          "size=1m\nrw=read\nbs=4k\nio_size=3m\n";
  // fio reads a zbd file's size before it lays anything out: the file must exist.
  for (const char* dir : {"fio", "iofleet"}) {
    const std::string d = base_ + "/" + dir;
    ::mkdir(d.c_str(), 0755);
    std::ofstream(d + "/zf").close();
    ASSERT_EQ(::truncate((d + "/zf").c_str(), 16 << 20), 0);
  }
  Outcome fio = Run("fio", job, "fio");
  Outcome ifl = Run("iofleet", job, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  for (int j = 0; j < 5; ++j) {
    for (const char* direction : {"read", "write", "trim"}) {
      EXPECT_EQ(Number(ifl.json, {direction, "total_ios"}, j), Number(fio.json, {direction, "total_ios"}, j)) << "job " << j << " " << direction;
      EXPECT_EQ(Number(ifl.json, {direction, "io_bytes"}, j), Number(fio.json, {direction, "io_bytes"}, j)) << "job " << j << " " << direction;
    }
  }
  EXPECT_EQ(Number(ifl.json, {"write", "total_ios"}, 0), 640);
  EXPECT_EQ(Number(ifl.json, {"trim", "total_ios"}, 1), 6);
  EXPECT_GT(Number(ifl.json, {"read", "total_ios"}, 2), 0) << "the data left after the trims";
  EXPECT_EQ(Number(ifl.json, {"read", "total_ios"}, 4), 768);
}

TEST_F(FioEquivalence, MixedReadWriteKeepsTheMix) {
  const std::string job = "[m]\nioengine=psync\nrw=randrw\nrwmixread=70\nbs=4k\nsize=8m\n";
  Outcome fio = Run("fio", job, "fio");
  Outcome ifl = Run("iofleet", job, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  const double fio_reads = Total(fio.json, {"read", "total_ios"}), fio_writes = Total(fio.json, {"write", "total_ios"});
  const double ifl_reads = Total(ifl.json, {"read", "total_ios"}), ifl_writes = Total(ifl.json, {"write", "total_ios"});
  EXPECT_EQ(ifl_reads + ifl_writes, fio_reads + fio_writes);  // one pass: size / bs IOs
  const double fio_mix = 100 * fio_reads / (fio_reads + fio_writes), ifl_mix = 100 * ifl_reads / (ifl_reads + ifl_writes);
  EXPECT_NEAR(ifl_mix, fio_mix, 2.0);
  EXPECT_NEAR(ifl_mix, 70, 2.0);
}

TEST_F(FioEquivalence, SeveralFilesLoopsAndBlockSizeRanges) {
  const std::string job = "[f]\nioengine=psync\nrw=write\nbs=4k\nnrfiles=3\nfilesize=256k\nloops=2\n"
                          "[r]\nioengine=psync\nrw=randread\nbsrange=4k-16k\nsize=2m\nstonewall\n";
  Outcome fio = Run("fio", job, "fio");
  Outcome ifl = Run("iofleet", job, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  EXPECT_EQ(Number(ifl.json, {"write", "total_ios"}, 0), Number(fio.json, {"write", "total_ios"}, 0));  // 3 x 64 x 2
  EXPECT_EQ(Number(ifl.json, {"write", "io_bytes"}, 0), Number(fio.json, {"write", "io_bytes"}, 0));
  EXPECT_EQ(Number(ifl.json, {"read", "io_bytes"}, 1), Number(fio.json, {"read", "io_bytes"}, 1));  // one pass of size
  std::multiset<off_t> fio_sizes, ifl_sizes;
  for (const auto& [name, size] : Files(base_ + "/fio")) fio_sizes.insert(size);
  for (const auto& [name, size] : Files(base_ + "/iofleet")) ifl_sizes.insert(size);
  EXPECT_EQ(ifl_sizes, fio_sizes);
  EXPECT_EQ(ifl_sizes.size(), 4u);  // three 256 KiB files and one 2 MiB file
}

TEST_F(FioEquivalence, VerifyPassesOnCleanDataAndFailsOnCorruptData) {
  const std::string write = "[v]\nioengine=psync\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n";
  Outcome fio = Run("fio", write, "fio");
  Outcome ifl = Run("iofleet", write, "iofleet");
  ASSERT_EQ(fio.exit_code, 0) << fio.err;
  ASSERT_EQ(ifl.exit_code, 0) << ifl.err;
  // Both read back every written block.
  EXPECT_EQ(Total(ifl.json, {"read", "total_ios"}), Total(fio.json, {"read", "total_ios"}));
  EXPECT_EQ(Total(ifl.json, {"read", "total_ios"}), 256);
  // Corrupt one block in each tool's file, then read it back verifying: both fail, and
  // iofleet names the bad block and its writer.
  for (const std::string tool : {"fio", "iofleet"}) {
    const auto files = Files(base_ + "/" + tool);
    ASSERT_EQ(files.size(), 1u) << tool;
    const std::string path = base_ + "/" + tool + "/" + files.begin()->first;
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_EQ(::pwrite(fd, "corrupt", 7, 100 * 4096 + 2000), 7);
    ::close(fd);
    const std::string read = absl::StrCat("[v]\nioengine=psync\nrw=read\nbs=4k\nsize=1m\nverify=crc32c\nfilename=", files.begin()->first, "\n");
    Outcome bad = Run(tool, read, tool);
    EXPECT_NE(bad.exit_code, 0) << tool << " did not notice the corrupted block";
    if (tool == "iofleet") {
      EXPECT_THAT(bad.err, HasSubstr("at offset 409600"));
      EXPECT_THAT(bad.err, HasSubstr("the data is corrupted"));
      EXPECT_THAT(bad.err, HasSubstr("written by job 0, worker 0, thread 0 (seed "));  // who wrote it
    }
  }
}

}  // namespace
}  // namespace iofleet
