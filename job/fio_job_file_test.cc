#include "job/fio_job_file.h"

#include <cerrno>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/block_sizes.h"
#include "job/job_phases.h"
#include "job/job_validation.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

TEST(FioJobFile, GlobalDefaultsAndJobOverrides) {
  auto spec = ParseFioJobText(R"(; a comment
[global]
ioengine=sync
bs=4k
size=16m
directory=/tmp/x
# another comment
time_based
runtime=5s

[writer]
rw=randwrite
numjobs=2
fsync=8

[reader]
readwrite=randrw
rwmixwrite=30
blocksize=64k
direct=1
filename=shared.dat
)",
                              "t.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->jobs_size(), 2);
  const JobSpec& w = spec->jobs(0);
  EXPECT_EQ(w.name(), "writer");
  EXPECT_EQ(w.rw(), v1::RAND_WRITE);
  EXPECT_EQ(w.read_bs().min(), 4096u);
  EXPECT_EQ(w.write_bs().max(), 4096u);
  EXPECT_EQ(w.size(), 16u << 20);
  EXPECT_EQ(w.numjobs(), 2u);
  EXPECT_EQ(w.fsync_every(), 8u);
  EXPECT_EQ(w.ioengine(), "sync");
  EXPECT_TRUE(w.time_based());
  EXPECT_EQ(w.runtime_ns(), 5'000'000'000ull);
  EXPECT_EQ(w.location().line(), 11u);
  const JobSpec& r = spec->jobs(1);
  EXPECT_EQ(r.rw(), v1::RAND_MIXED);
  EXPECT_EQ(r.rwmix_read(), 70u);
  EXPECT_EQ(r.read_bs().min(), 65536u);
  EXPECT_EQ(r.write_bs().max(), 65536u);
  EXPECT_TRUE(r.direct());
  EXPECT_EQ(r.filename(), "shared.dat");
  EXPECT_EQ(r.numjobs(), 1u);  // not inherited from a sibling job
  EXPECT_TRUE(w.invalidate());  // fio's default
  EXPECT_EQ(r.ioengine(), "sync");
  EXPECT_TRUE(ValidateRunSpec(*spec).ok()) << ValidateRunSpec(*spec);
}

TEST(FioJobFile, NfsUrlIsTheJobsDirectory) {
  auto spec = ParseFioJobText("[global]\nioengine=nfs\nnfs_url=nfs://filer//export/?nfsport=2049\n[a]\nsize=1m\n"
                              "[b]\nsize=1m\ndirectory=sub/dir\n",
                              "n.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).directory(), "nfs://filer/export?nfsport=2049");
  EXPECT_EQ(spec->jobs(1).directory(), "nfs://filer/export/sub/dir?nfsport=2049");
  EXPECT_TRUE(ValidateRunSpec(*spec).ok()) << ValidateRunSpec(*spec);
  // An absolute directory cannot be inside the export; another engine cannot use the URL.
  EXPECT_FALSE(ParseFioJobText("[a]\nioengine=nfs\nnfs_url=nfs://filer/export\ndirectory=/mnt\nsize=1m\n", "n.fio").ok());
  auto psync = ParseFioJobText("[a]\nnfs_url=nfs://filer/export\nsize=1m\n", "n.fio");
  ASSERT_TRUE(psync.ok());
  EXPECT_THAT(std::string(ValidateRunSpec(*psync).message()), ::testing::HasSubstr("use ioengine=nfs"));
}

TEST(FioJobFile, FioDefaultsAndBooleanSpellings) {
  auto spec = ParseFioJobText("[j]\nsize=1m\ninvalidate=0\ndirect=1\n", "d.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobSpec& j = spec->jobs(0);
  EXPECT_EQ(j.rw(), v1::SEQ_READ);
  EXPECT_EQ(j.trim_bs().min(), 4096u);
  EXPECT_EQ(j.ioengine(), "psync");
  EXPECT_EQ(j.rwmix_read(), 50u);
  EXPECT_FALSE(j.invalidate());
  EXPECT_TRUE(j.direct());
  EXPECT_FALSE(ParseFioJobText("[j]\ndirect=yes\n", "d.fio").ok());
}

TEST(FioJobFile, UnknownOptionNamesFileLineAndNearest) {
  auto spec = ParseFioJobText("[job]\nrw=read\nblcoksize=4k\n", "bad.fio");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()),
              HasSubstr("bad.fio:3: unknown option 'blcoksize' (did you mean blocksize?)"));
}

TEST(FioJobFile, BadValuesAndMalformedLines) {
  auto msg = [](const std::string& text) {
    return std::string(ParseFioJobText(text, "j.fio").status().message());
  };
  EXPECT_THAT(msg("[a]\nbs=4q\n"), HasSubstr("j.fio:2: bad value for bs: '4q' has an unknown size unit"));
  EXPECT_THAT(msg("[a]\nrw=randreed\n"), HasSubstr("j.fio:2: bad value for rw: unknown rw mode 'randreed' (did you mean randread?)"));
  EXPECT_THAT(msg("[a\n"), HasSubstr("j.fio:1: malformed section header"));
  EXPECT_THAT(msg("bs=4k\n"), HasSubstr("j.fio:1: option 'bs=4k' outside of a section"));
  EXPECT_THAT(msg("[a]\n=4\n"), HasSubstr("j.fio:2: malformed line"));
  EXPECT_THAT(msg("[a]\nsize\n"), HasSubstr("j.fio:2: option 'size' needs a value"));
  EXPECT_THAT(msg("[a]\nnumjobs=0\n"), HasSubstr("j.fio:2: bad value for numjobs"));
  EXPECT_THAT(msg("[a]\n[a]\n"), HasSubstr("j.fio:2: job 'a' is defined twice"));
  EXPECT_THAT(msg("[global]\nbs=4k\n"), HasSubstr("no job sections"));
}

TEST(JobValidation, RejectsUnrunnableJobsWithLocation) {
  auto spec = ParseFioJobText("[j]\nrw=write\nbs=8k\nsize=4k\ndirectory=/tmp\n", "v.fio");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(std::string(ValidateRunSpec(*spec).message()),
              HasSubstr("v.fio:1: job 'j': bs (8192) is larger than size (4096)"));
  spec = ParseFioJobText("[j]\nsize=1m\nioengine=libaoi\ndirectory=/tmp\n", "v.fio");
  ASSERT_TRUE(spec.ok());
  EXPECT_THAT(std::string(ValidateRunSpec(*spec).message()), HasSubstr("unknown ioengine 'libaoi'"));
  spec = ParseFioJobText("[j]\nsize=1m\ntime_based\ndirectory=/tmp\n", "v.fio");
  EXPECT_THAT(std::string(ValidateRunSpec(*spec).message()), HasSubstr("time_based needs a runtime"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

using ::testing::HasSubstr;

TEST(FioJobFile, PerDirectionBlockSizesAndRanges) {
  auto spec = ParseFioJobText("[a]\nbs=,8k\nsize=1m\n[b]\nbs=4k-64k,16k\nsize=1m\n[c]\nbsrange=512-4k\nsize=1m\n", "bs.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobSpec& a = spec->jobs(0);
  EXPECT_EQ(a.read_bs().min(), 4096u);  // unchanged default
  EXPECT_EQ(a.write_bs().min(), 8192u);
  EXPECT_EQ(a.write_bs().max(), 8192u);
  const JobSpec& b = spec->jobs(1);
  EXPECT_EQ(b.read_bs().min(), 4096u);
  EXPECT_EQ(b.read_bs().max(), 65536u);
  EXPECT_EQ(b.write_bs().min(), 16384u);
  EXPECT_EQ(b.trim_bs().min(), 4096u);
  const JobSpec& c = spec->jobs(2);
  EXPECT_EQ(c.write_bs().min(), 512u);
  EXPECT_EQ(c.trim_bs().max(), 4096u);
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nbs=64k-4k\n", "r.fio").status().message()),
              HasSubstr("r.fio:2: bad value for bs: range '64k-4k' has its minimum above its maximum"));
  EXPECT_FALSE(ParseFioJobText("[a]\nbs=1k,2k,3k,4k\n", "r.fio").ok());
}

TEST(FioJobFile, EnvironmentVariablesExpandAndUndefinedOnesAreErrors) {
  ::setenv("IOFLEET_TEST_DIR", "/mnt/x", 1);
  ::setenv("IOFLEET_TEST_BS", "16k", 1);
  auto spec = ParseFioJobText("[a]\ndirectory=${IOFLEET_TEST_DIR}/sub\nbs=$IOFLEET_TEST_BS\nsize=1m\nnumjobs=$ncpus\n", "v.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).directory(), "/mnt/x/sub");
  EXPECT_EQ(spec->jobs(0).read_bs().min(), 16384u);
  EXPECT_EQ(spec->jobs(0).numjobs(), static_cast<uint32_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_THAT(std::string(ParseFioJobText("[a]\n\ndirectory=${IOFLEET_NOT_SET_ANYWHERE}\n", "v.fio").status().message()),
              HasSubstr("v.fio:3: option 'directory': environment variable 'IOFLEET_NOT_SET_ANYWHERE' is not set"));
  // filename_format's own keywords are the worker's to fill in; ${VAR} still expands there.
  spec = ParseFioJobText("[a]\nfilename_format=${IOFLEET_TEST_BS}.$clientuid.$jobnum.$filenum.$jobname\n", "v.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).filename_format(), "16k.$clientuid.$jobnum.$filenum.$jobname");
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nfilename_format=f.$filenumber\n", "v.fio").status().message()),
              HasSubstr("environment variable 'filenumber' is not set"));
}

TEST(FioJobFile, IncludesResolveRelativeToTheIncludingFile) {
  const std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/inc";
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/common.fio") << "bs=8k\nsize=2m\n";
  std::ofstream(dir + "/bad.fio") << "bs=8k\nszie=2m\n";
  std::ofstream(dir + "/main.fio") << "[global]\ninclude common.fio\n[j]\nrw=write\n";
  auto spec = ParseFioJobFile(dir + "/main.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).write_bs().min(), 8192u);
  EXPECT_EQ(spec->jobs(0).size(), 2u << 20);
  EXPECT_EQ(spec->jobs(0).location().line(), 3u);
  // Errors inside an included file name that file and line.
  std::ofstream(dir + "/main2.fio") << "[global]\ninclude bad.fio\n[j]\n";
  EXPECT_THAT(std::string(ParseFioJobFile(dir + "/main2.fio").status().message()), HasSubstr(dir + "/bad.fio:2: unknown option 'szie'"));
  std::ofstream(dir + "/loop.fio") << "include loop.fio\n";
  EXPECT_THAT(std::string(ParseFioJobFile(dir + "/loop.fio").status().message()), HasSubstr("nested more than 16 deep"));
  std::ofstream(dir + "/device.fio") << "[j]\ninclude /dev/zero\n";
  EXPECT_THAT(std::string(ParseFioJobFile(dir + "/device.fio").status().message()), HasSubstr("is not a regular file"));
  std::ofstream(dir + "/missing.fio") << "[j]\ninclude nowhere.fio\n";
  EXPECT_THAT(std::string(ParseFioJobFile(dir + "/missing.fio").status().message()), HasSubstr("missing.fio:2: cannot read job file"));
}

TEST(FioCommandLine, GlobalOptionsThenJobsLikeFio) {
  auto spec = ParseFioCommandLine({"--bs=8k", "--size=4m", "--directory=/tmp", "--name=one", "--rw=randread",
                                   "--name=two", "--rw=write", "--numjobs=3"});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->jobs_size(), 2);
  EXPECT_EQ(spec->jobs(0).name(), "one");
  EXPECT_EQ(spec->jobs(0).rw(), v1::RAND_READ);
  EXPECT_EQ(spec->jobs(1).numjobs(), 3u);
  EXPECT_EQ(spec->jobs(1).read_bs().min(), 8192u);
  EXPECT_THAT(std::string(ParseFioCommandLine({"--name=x", "--rw=read", "--bz=4k"}).status().message()),
              HasSubstr("command line argument 3: unknown option 'bz'"));
  EXPECT_THAT(std::string(ParseFioCommandLine({"--rw=read"}).status().message()), HasSubstr("need --name=JOB"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST(FioJobFile, BssplitWeightsAndRemainders) {
  auto spec = ParseFioJobText("[a]\nrw=randrw\nsize=1m\nbssplit=4k/10:64k/50:32k,8k/30:16k\n", "s.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobSpec& a = spec->jobs(0);
  ASSERT_EQ(a.read_bssplit_size(), 3);
  EXPECT_EQ(a.read_bssplit(2).size(), 32768u);
  EXPECT_EQ(a.read_bssplit(2).percent(), 40u);  // what 10 + 50 leave
  ASSERT_EQ(a.write_bssplit_size(), 2);
  EXPECT_EQ(a.write_bssplit(1).percent(), 70u);
  EXPECT_EQ(MaxBlockSize(a), 65536u);
  EXPECT_EQ(MinBlockSize(a), 4096u);
  // Picks follow the weights.
  int big = 0;
  for (uint64_t r = 0; r < 1000; ++r) big += PickBlockSize(a, DataDirection::kRead, r * 7919) == 65536;
  EXPECT_NEAR(big, 500, 60);
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nbssplit=4k/60:8k/60\n", "s.fio").status().message()),
              HasSubstr("s.fio:2: bad value for bssplit: percentages in '4k/60:8k/60' add up to 120, above 100"));
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nbssplit=4k/60:8k/30\n", "s.fio").status().message()), HasSubstr("add up to 90, not 100"));
}

// fio's bs_unaligned: a bsrange IO is any byte count in the range, not only multiples of its
// smallest size; without it every size is a multiple.
TEST(FioJobFile, UnalignedBlockSizesTakeAnyByteCount) {
  for (const bool unaligned : {false, true}) {
    auto spec = ParseFioJobText(absl::StrCat("[a]\nrw=randwrite\nsize=1m\nbsrange=4k-16k\n", unaligned ? "bs_unaligned\n" : ""), "u.fio");
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->jobs(0).bs_unaligned(), unaligned);
    int multiples = 0;
    uint64_t smallest = ~0ull, largest = 0;
    for (uint64_t r = 0; r < 2000; ++r) {
      const uint64_t size = PickBlockSize(spec->jobs(0), DataDirection::kWrite, r * 0x9e3779b97f4a7c15ull);
      multiples += size % 4096 == 0;
      smallest = std::min(smallest, size);
      largest = std::max(largest, size);
    }
    EXPECT_GE(smallest, 4096u);
    EXPECT_LE(largest, 16384u);
    if (unaligned) {
      EXPECT_LT(multiples, 20) << "about 1 in 3072 sizes is a multiple of 4 KiB";
    } else {
      EXPECT_EQ(multiples, 2000);
    }
  }
}

TEST(FioJobFile, RandomDistributionsPercentilesAndBatching) {
  auto spec = ParseFioJobText("[a]\nrw=randread\nsize=1m\nrandom_distribution=zipf:1.2\npercentile_list=50:99.9\nlat_percentiles=1\n"
                              "iodepth=16\niodepth_batch_submit=8\niodepth_batch_complete_max=4\nblockalign=512\n", "d.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobSpec& a = spec->jobs(0);
  EXPECT_EQ(a.random_distribution().kind(), v1::RandomDistribution::ZIPF);
  EXPECT_DOUBLE_EQ(a.random_distribution().parameter(), 1.2);
  EXPECT_TRUE(a.norandommap());  // implied, as in fio
  ASSERT_EQ(a.percentile_list_size(), 2);
  EXPECT_DOUBLE_EQ(a.percentile_list(1), 99.9);
  EXPECT_TRUE(a.lat_percentiles());
  EXPECT_TRUE(a.clat_percentiles());
  EXPECT_EQ(a.iodepth_batch_submit(), 8u);
  EXPECT_EQ(a.iodepth_batch_complete_max(), 4u);
  EXPECT_EQ(OffsetUnit(a), 512u);
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nrandom_distribution=zipff:1.2\n", "d.fio").status().message()),
              HasSubstr("unknown distribution 'zipff' (did you mean zipf?)"));
  EXPECT_FALSE(ParseFioJobText("[a]\nrandom_distribution=pareto:2\n", "d.fio").ok());
  EXPECT_FALSE(ParseFioJobText("[a]\npercentile_list=50:101\n", "d.fio").ok());
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST(JobPhases, StonewallStartsPhasesAndGroupsNewGroupOnlyGroups) {
  auto spec = ParseFioJobText("[global]\nsize=1m\ngroup_reporting\n[a]\n[b]\n[c]\nstonewall\n[d]\nnew_group\n[e]\nwait_for_previous\n", "p.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  JobPhases phases = SplitIntoPhases(*spec);
  EXPECT_EQ(phases.phases, 3u);
  EXPECT_EQ(phases.groups, 4u);
  EXPECT_EQ(phases.phase_of, (std::vector<uint32_t>{0, 0, 1, 1, 2}));
  EXPECT_EQ(phases.group_of, (std::vector<uint32_t>{0, 0, 1, 2, 3}));
  EXPECT_TRUE(spec->jobs(0).group_reporting());
}

// What fio's own example job files are written with (../shared/peers/fio-examples).
TEST(FioJobFile, FioSyntaxOfItsOwnExamples) {
  // Comments after values, ';' or '#', anywhere on the line, as fio reads them.
  auto spec = ParseFioJobText("[j]   ; a job\nsize=102404k ; 100Mb+4k\nruntime=3600  # an hour\nbs=4k#4096\nrw=read\n", "c.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).size(), 102404u << 10);
  EXPECT_EQ(spec->jobs(0).runtime_ns(), 3600'000'000'000u);
  EXPECT_EQ(spec->jobs(0).name(), "j");
  // Arithmetic and fio's aliases (timeout=runtime, threads=thread, blockalign=ba, ...).
  spec = ParseFioJobText("[j]\nsize=(5*1024*1024)\ntimeout=60\nthreads=1\nblockalign=8k\nnr_files=2\nio_limit=(1+1)*1m\niodepth=(4*4)\n", "a.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).size(), 5u << 20);
  EXPECT_EQ(spec->jobs(0).runtime_ns(), 60'000'000'000u);
  EXPECT_EQ(spec->jobs(0).blockalign(), 8192u);
  EXPECT_EQ(spec->jobs(0).nrfiles(), 2u);
  EXPECT_EQ(spec->jobs(0).io_size(), 2u << 20);
  EXPECT_EQ(spec->jobs(0).iodepth(), 16u);
  // rw=read:-8k goes backwards; a negative modifier on random IO is an error.
  spec = ParseFioJobText("[j]\nsize=1m\nrw=read:-8k\n", "b.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).rw_modifier(), 8192u);
  EXPECT_TRUE(spec->jobs(0).rw_modifier_backwards());
  EXPECT_FALSE(ParseFioJobText("[j]\nsize=1m\nrw=randread:-8\n", "b.fio").ok());
  // No size= with named files: their size (size=100%, resolved on the worker).
  spec = ParseFioJobText("[j]\nfilename=/dev/sdb\n", "d.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).size_percent(), 100u);
  // fallocate=: fio's modes (none in examples/enospc-pressure.fio).
  spec = ParseFioJobText("[a]\nsize=1m\nfallocate=none\n[b]\nsize=1m\nfallocate=keep\n[c]\nsize=1m\n", "f.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).fallocate(), v1::JobSpec::FALLOCATE_NONE);
  EXPECT_EQ(spec->jobs(1).fallocate(), v1::JobSpec::FALLOCATE_KEEP_SIZE);
  EXPECT_EQ(spec->jobs(2).fallocate(), v1::JobSpec::FALLOCATE_NATIVE);
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nfallocate=kep\n", "f.fio").status().message()), HasSubstr("(did you mean keep?)"));
  // --section: only the named job is read (the other may need variables that are not set).
  spec = ParseFioJobText("[global]\nsize=1m\n[default]\n[override]\nrw=${IOFLEET_SURELY_UNSET}\n", "s.fio", {.sections = {"default"}});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->jobs_size(), 1);
  EXPECT_EQ(spec->jobs(0).name(), "default");
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nsize=1m\n", "s.fio", {.sections = {"b"}}).status().message()),
              HasSubstr("--section b: no job section [b]"));
  // Engines and options for hardware iofleet does not drive: refused, saying what they are,
  // even when the engine's own options come first.
  EXPECT_THAT(std::string(ParseFioJobText("[global]\nport=8888\n[r]\nioengine=rdma\n", "r.fio").status().message()),
              HasSubstr("r.fio:4: job 'r': ioengine=rdma is one of fio's engines that iofleet does not have: it does RDMA transfers between hosts"));
  EXPECT_THAT(std::string(ParseFioJobText("[j]\nsize=1m\nfdp=1\n", "f.fio").status().message()),
              HasSubstr("f.fio:3: fio option 'fdp' cannot run in iofleet: NVMe flexible data placement needs an NVMe device"));
}

// fio's wait_for (examples/waitfor.fio): a job starts after the one it names; jobs after it
// that wait for nothing still start with the first phase; stonewall waits for everything.
TEST(JobPhases, WaitForRunsAfterTheNamedJob) {
  auto spec = ParseFioJobText("[global]\nsize=1m\n[a]\n[b]\nwait_for=a\n[c]\n[d]\nwait_for=b\n[e]\nstonewall\n", "w.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  JobPhases phases = SplitIntoPhases(*spec);
  EXPECT_EQ(phases.phase_of, (std::vector<uint32_t>{0, 1, 0, 2, 3}));
  EXPECT_EQ(phases.phases, 4u);
  auto unknown = ParseFioJobText("[a]\nsize=1m\nwait_for=z\n[z]\nsize=1m\n", "w.fio");
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("w.fio:1: job 'a': wait_for=z names no job defined before this one"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST(FioJobFile, UnimplementedFioOptionsAreErrorsUnlessIgnored) {
  const std::string text = "[a]\nsize=1m\ncpumask=3\nszie=1m\n";
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nsize=1m\ncpumask=3\n", "u.fio").status().message()),
              HasSubstr("u.fio:3: fio option 'cpumask' is not implemented by iofleet; --ignore-unsupported runs without it"));
  auto spec = ParseFioJobText("[a]\nsize=1m\ncpumask=3\n", "u.fio", {.ignore_unsupported = true});
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->ignored_options_size(), 1);
  EXPECT_EQ(spec->ignored_options(0), "u.fio:3: cpumask=3");
  // Running commands on workers is refused even with --ignore-unsupported.
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nexec_prerun=rm -rf /\n", "x.fio", {.ignore_unsupported = true}).status().message()),
              HasSubstr("x.fio:2: 'exec_prerun=rm -rf /' is refused: iofleet never runs commands on workers"));
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nioengine=exec\n", "x.fio").status().message()),
              HasSubstr("x.fio:2: job 'a': ioengine=exec is one of fio's engines that iofleet does not have: it runs a program, and iofleet never runs commands on workers"));
  // A typo is not a fio option: still an error, with the nearest known option.
  EXPECT_THAT(std::string(ParseFioJobText(text, "u.fio", {.ignore_unsupported = true}).status().message()),
              HasSubstr("u.fio:4: unknown option 'szie' (did you mean size?)"));
}

}  // namespace
}  // namespace iofleet

namespace iofleet {
namespace {

TEST(FioJobFile, RwModifiersPercentSizesAndCompression) {
  auto spec = ParseFioJobText("[a]\nrw=randread:8\nsize=50%\nfilename=/tmp/dev.img\nbuffer_compress_percentage=40\n"
                              "[b]\nrw=write:4k\nsize=1m\ndirectory=/tmp\nverify=md5\n", "m.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->jobs(0).rw(), v1::RAND_READ);
  EXPECT_EQ(spec->jobs(0).rw_modifier(), 8u);
  EXPECT_EQ(spec->jobs(0).size_percent(), 50u);
  EXPECT_EQ(spec->jobs(0).buffer_compress_percentage(), 40u);
  EXPECT_EQ(spec->jobs(1).rw_modifier(), 4096u);
  EXPECT_EQ(spec->jobs(1).verify(), v1::JobSpec::VERIFY_MD5);
  EXPECT_TRUE(spec->jobs(1).do_verify());
  EXPECT_TRUE(ValidateRunSpec(*spec).ok()) << ValidateRunSpec(*spec);
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nsize=150%\n", "m.fio").status().message()), HasSubstr("not a percentage"));
  auto no_file = ParseFioJobText("[a]\nsize=50%\ndirectory=/tmp\n", "m.fio");
  ASSERT_TRUE(no_file.ok());
  EXPECT_THAT(std::string(ValidateRunSpec(*no_file).message()), HasSubstr("size=N% needs filename="));
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nverify=sha513\n", "m.fio").status().message()), HasSubstr("sha512"));
  // fio's verify kinds and pattern options, resolved.
  auto kinds = ParseFioJobText(
      "[global]\nrw=write\nbs=64k\nsize=1m\n[m]\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n"
      "[p]\nverify_pattern=\"ab\"%o\n[n]\nverify=pattern\nverify_pattern=7\n[c]\nverify=crc64\nverify_write_sequence=0\n"
      "[b]\nbuffer_pattern=0xdeadbeef\n",
      "k.fio");
  ASSERT_TRUE(kinds.ok()) << kinds.status();
  EXPECT_EQ(kinds->jobs(0).verify(), v1::JobSpec::VERIFY_META);
  EXPECT_EQ(kinds->jobs(0).verify_pattern().bytes(), "\xaa\x55\x5a\xa5");
  EXPECT_EQ(kinds->jobs(0).verify_interval(), 512u);
  EXPECT_EQ(kinds->jobs(1).verify(), v1::JobSpec::VERIFY_PATTERN);  // fio: a pattern alone is verified after a header
  EXPECT_EQ(kinds->jobs(1).verify_pattern().block_offset_at(0), 2u);
  EXPECT_EQ(kinds->jobs(2).verify(), v1::JobSpec::VERIFY_PATTERN_NO_HEADER);
  EXPECT_EQ(kinds->jobs(3).verify(), v1::JobSpec::VERIFY_CRC64);
  EXPECT_TRUE(kinds->jobs(3).verify_any_sequence());
  EXPECT_EQ(kinds->jobs(4).buffer_pattern().bytes(), "\xde\xad\xbe\xef");
  EXPECT_EQ(kinds->jobs(4).verify(), v1::JobSpec::VERIFY_NONE);
  // fio HOWTO's ignore_error example: EAGAIN for reads, ENOSPC and 122 (EDQUOT) for writes.
  auto ignore = ParseFioJobText("[a]\nrw=write\nsize=1m\nignore_error=EAGAIN,ENOSPC:122\noffset_increment=1m\nverify_backlog=16\n", "i.fio");
  ASSERT_TRUE(ignore.ok()) << ignore.status();
  EXPECT_THAT(ignore->jobs(0).ignore_read_errors(), ::testing::ElementsAre(EAGAIN));
  EXPECT_THAT(ignore->jobs(0).ignore_write_errors(), ::testing::ElementsAre(ENOSPC, 122));
  EXPECT_EQ(ignore->jobs(0).offset_increment(), 1u << 20);
  EXPECT_EQ(ignore->jobs(0).verify_backlog(), 16u);
  // fio's `fio --filename=/dev/sdb --ioengine=io_uring job.fio`: command-line options are
  // defaults the job file's own [global] overrides.
  FioParseOptions with_defaults;
  with_defaults.global_options = {"--filename=/dev/sdb", "--ioengine=io_uring", "--iodepth=4"};
  auto defaulted = ParseFioJobText("[global]\nioengine=libaio\n[j]\nrw=randwrite\nsize=1m\n", "d.fio", with_defaults);
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  EXPECT_EQ(defaulted->jobs(0).filename(), "/dev/sdb");
  EXPECT_EQ(defaulted->jobs(0).ioengine(), "libaio");
  EXPECT_EQ(defaulted->jobs(0).iodepth(), 4u);
  with_defaults.global_options = {"--nosuchoption=1"};
  EXPECT_THAT(std::string(ParseFioJobText("[j]\nsize=1m\n", "d.fio", with_defaults).status().message()), HasSubstr("command line argument 1"));
  EXPECT_THAT(std::string(ParseFioJobText("[a]\nignore_error=,ENOSPX\n", "i.fio").status().message()),
              HasSubstr("'ENOSPX' is not an errno name or number (did you mean ENOSPC?)"));
  for (const auto& [text, error] : std::vector<std::pair<std::string, std::string>>{
           {"verify=pattern\n", "verify=pattern needs verify_pattern="},
           {"verify=md5\nverify_interval=64\n", "verify_interval must be at least 128 bytes"},
           {"verify=md5\nverify_interval=3000\n", "verify_interval (3000) must divide the block size (4096)"},
           {"verify_interval=512\n", "have no effect without verify="},
           {"buffer_pattern=%o\n", "%o (the block's offset) is for verify_pattern only"},
       }) {
    auto parsed = ParseFioJobText("[a]\nrw=write\nsize=1m\n" + text, "e.fio");
    EXPECT_THAT(std::string(parsed.ok() ? ValidateRunSpec(*parsed).message() : parsed.status().message()), HasSubstr(error)) << text;
  }
}

// fio's third part of rate/rate_iops/bssplit is for trims, which iofleet never issues: a job
// that asks for one is told so (it used to be dropped without a word).
// iofleet issues no trims. A trim rate limits nothing — as in fio for a job without trims
// (fio's exitwhat.fio gives rate=300,300,300 to randrw jobs) — and is kept; a trim block-size
// split would describe IO that never happens, and is refused.
TEST(FioJobFile, TrimParts) {
  for (const std::string option : {"rate_iops=1,2,3", "rate=1m,2m,3m"}) {
    auto spec = ParseFioJobText("[j]\nrw=randrw\n" + option + "\n", "t.fio");
    ASSERT_TRUE(spec.ok()) << option << ": " << spec.status();
    const auto& rates = option[4] == '_' ? spec->jobs(0).rate_iops() : spec->jobs(0).rate_bytes();
    ASSERT_EQ(rates.size(), 3) << option;
    EXPECT_EQ(rates.Get(2), option[4] == '_' ? 3u : 3u << 20) << option;
  }
  auto split = ParseFioJobText("[j]\nrw=randrw\nbssplit=4k/100,8k/100,16k/100\n", "t.fio");
  ASSERT_FALSE(split.ok());
  EXPECT_THAT(std::string(split.status().message()), HasSubstr("t.fio:3"));
  EXPECT_THAT(std::string(split.status().message()), HasSubstr("trims"));
  EXPECT_TRUE(ParseFioJobText("[j]\nrw=randrw\nrate_iops=1,2,\n", "t.fio").ok()) << "an empty trim part is fine";
  auto both = ParseFioJobText("[j]\nrw=randrw\nrate_iops=5\n", "t.fio");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->jobs(0).rate_iops_size(), 3);
  EXPECT_EQ(both->jobs(0).rate_iops(2), 5u) << "one value limits reads, writes and trims";
}

// fio's zone options: sizes in zones (Nz) resolved once the job is read, a bare zonesize is
// the strided mode, and what zonemode=zbd cannot take is refused naming the option.
TEST(FioJobFile, ZoneModesAndZoneUnits) {
  auto zbd = ParseFioJobText("[global]\ndirectory=/tmp\nzonemode=zbd\noffset=524z\nsize=128z\n[j]\nrw=randwrite\nzonesize=256M\nbs=2M\n"
                             "max_open_zones=32\nzone_reset_threshold=0.7\nzone_reset_frequency=0.125\nread_beyond_wp=1\n", "z.fio");
  ASSERT_TRUE(zbd.ok()) << zbd.status();
  const v1::JobSpec& job = zbd->jobs(0);
  EXPECT_EQ(job.offset(), 524ull * (256 << 20));
  EXPECT_EQ(job.size(), 128ull * (256 << 20));
  EXPECT_EQ(job.zones().mode(), v1::ZoneSpec::ZBD);
  EXPECT_EQ(job.zones().max_open_zones(), 32u);
  EXPECT_DOUBLE_EQ(job.zones().reset_threshold(), 0.7);
  EXPECT_TRUE(job.zones().read_beyond_wp());
  EXPECT_EQ(job.zones().size_zones(), 0u) << "resolved to bytes";
  EXPECT_TRUE(ValidateRunSpec(*zbd).ok()) << ValidateRunSpec(*zbd);
  auto strided = ParseFioJobText("[j]\nrw=read\nsize=1g\nzonesize=256m\nzoneskip=2g\nwrite_bw_log\nlog_offset=1\n", "s.fio");
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_EQ(strided->jobs(0).zones().mode(), v1::ZoneSpec::STRIDED) << "fio: a zonesize alone is the strided mode";
  EXPECT_EQ(strided->jobs(0).zones().skip(), 2ull << 30);
  EXPECT_EQ(strided->jobs(0).write_bw_log(), "j") << "fio: no prefix is the job's name";
  EXPECT_TRUE(strided->jobs(0).log_offset());
  auto rw = ParseFioJobText("[j]\nrw=randtrim\nsize=1m\n", "t.fio");
  ASSERT_TRUE(rw.ok()) << rw.status();
  EXPECT_EQ(rw->jobs(0).rw(), v1::RAND_TRIM);

  auto error = [](const std::string& text) {
    auto spec = ParseFioJobText("[global]\ndirectory=/tmp\n" + text, "e.fio");
    if (!spec.ok()) return std::string(spec.status().message());
    absl::Status valid = ValidateRunSpec(*spec);
    return valid.ok() ? std::string("accepted") : std::string(valid.message());
  };
  EXPECT_THAT(error("[j]\nrw=write\nsize=4z\n"), HasSubstr("size=4z counts zones, but the job sets no zonesize="));
  EXPECT_THAT(error("[j]\nrw=write\nsize=1m\nzonemode=zbd\n"), HasSubstr("zonemode=zbd needs zonesize="));
  EXPECT_THAT(error("[j]\nrw=randtrim\nsize=4m\nzonemode=zbd\nzonesize=1m\nbs=4k\n"), HasSubstr("the trim block size must be zonesize"));
  EXPECT_THAT(error("[j]\nrw=write\nsize=4m\nzonemode=zbd\nzonesize=1m\nbs=2m\n"), HasSubstr("larger than a zone's capacity"));
  EXPECT_THAT(error("[j]\nrw=write\nsize=4m\nzonemode=zbd\nzonesize=1m\nzonecapacity=2m\n"), HasSubstr("zonecapacity 2097152 is larger than zonesize"));
  EXPECT_THAT(error("[j]\nrw=write\nsize=4m\nzonemode=zbd\nzonesize=1m\nzoneskip=1m\n"), HasSubstr("zoneskip with zonemode=zbd is not implemented"));
  EXPECT_THAT(error("[j]\nrw=trim\nsize=4m\nioengine=nfs\nnfs_url=nfs://127.0.0.1/x\ndirectory=d\n"), HasSubstr("no way to deallocate"));
  EXPECT_THAT(error("[j]\nrw=write\nsize=4m\nzonemode=zoned\n"), HasSubstr("is not one of none, strided, zbd"));
}

// fio's placement options: CPU and node lists as fio writes them, refused with the option's
// syntax when malformed.
TEST(FioJobFile, CpuAndNumaPlacement) {
  auto spec = ParseFioJobText("[a]\nsize=1m\ncpus_allowed=0-2,5\ncpus_allowed_policy=split\nnuma_cpu_nodes=0-1\n"
                              "numa_mem_policy=interleave:0-1\n[b]\nsize=1m\nnuma_mem_policy=local\n", "n.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->jobs(0).cpus_allowed(), ::testing::ElementsAre(0, 1, 2, 5));
  EXPECT_TRUE(spec->jobs(0).cpus_allowed_split());
  EXPECT_THAT(spec->jobs(0).numa_cpu_nodes(), ::testing::ElementsAre(0, 1));
  EXPECT_EQ(spec->jobs(0).numa_mem_policy(), v1::JobSpec::NUMA_MEM_INTERLEAVE);
  EXPECT_THAT(spec->jobs(0).numa_mem_nodes(), ::testing::ElementsAre(0, 1));
  EXPECT_EQ(spec->jobs(1).numa_mem_policy(), v1::JobSpec::NUMA_MEM_LOCAL);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"cpus_allowed=3-1", "'3-1' is not a number or an ascending range"},
      {"cpus_allowed=9000", "'9000' goes above 8191"},
      {"numa_mem_policy=bnid:0", "unknown numa_mem_policy 'bnid' (did you mean bind?)"},
      {"numa_mem_policy=prefer:0-1", "prefer takes one node"},
      {"numa_mem_policy=bind", "bind needs nodes, e.g. bind:0"},
      {"numa_mem_policy=local:0", "local takes no nodes"},
      {"cpus_allowed_policy=spread", "'spread' is not shared or split"},
  };
  for (const auto& [option, message] : refused) {
    auto bad = ParseFioJobText(absl::StrCat("[a]\nsize=1m\n", option, "\n"), "n.fio");
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(message)) << option;
  }
}

}  // namespace
}  // namespace iofleet
