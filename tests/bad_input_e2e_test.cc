// Table of malformed or out-of-range job files: each gives its specific message and exit 2
// from the real controller, and no worker is touched (no file appears in the target).
#include <dirent.h>
#include <sys/stat.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::TestWorker;
using ::testing::HasSubstr;

struct BadInput {
  const char* name;
  std::string job;       // the file's text; "DIR" is replaced by the target directory
  const char* message;   // what stderr must say
};

std::vector<BadInput> Cases() {
  return {
      {"bs_zero", "[j]\nbs=0\nsize=1m\ndirectory=DIR\n", ":2: bad value for bs: a block size must be greater than 0"},
      {"iodepth_huge", "[j]\niodepth=100000\nsize=1m\ndirectory=DIR\n", ":2: bad value for iodepth: '100000' is not a whole number from 1 to 4096"},
      {"unknown_engine", "[j]\nioengine=libaoi\nsize=1m\ndirectory=DIR\n", "unknown ioengine 'libaoi' (did you mean libaio?)"},
      {"unknown_option", "[j]\nszie=1m\ndirectory=DIR\n", ":2: unknown option 'szie' (did you mean size?)"},
      {"no_section", "size=1m\n", ":1: option 'size=1m' outside of a section"},
      {"negative_runtime", "[j]\nruntime=-5\nsize=1m\ndirectory=DIR\n", ":2: bad value for runtime: '-5' is not a duration"},
      {"rwmix_150", "[j]\nrw=randrw\nrwmixread=150\nsize=1m\ndirectory=DIR\n", ":3: bad value for rwmixread: '150' is not a whole number from 0 to 100"},
      {"duplicate_jobs", "[j]\nsize=1m\n[j]\n", ":3: job 'j' is defined twice"},
      {"unreadable_include", "[j]\ninclude /nonexistent/inc.fio\n", ":2: cannot read job file /nonexistent/inc.fio"},
      {"non_utf8", "[j]\nsize=1m\n\xff\xfe=1\n", ":3: unknown option"},
      {"bad_size_unit", "[j]\nsize=4q\n", ":2: bad value for size: '4q' has an unknown size unit"},
      {"bs_above_size", "[j]\nbs=8k\nsize=4k\ndirectory=DIR\n", "bs (8192) is larger than size (4096)"},
      {"no_size", "[j]\nrw=read\ndirectory=DIR\n", "size is not set"},
      {"time_based_no_runtime", "[j]\ntime_based\nsize=1m\ndirectory=DIR\n", "time_based needs a runtime"},
      {"direct_odd_bs", "[j]\ndirect=1\nbs=1000\nsize=1m\ndirectory=DIR\n", "direct=1 needs bs to be a multiple of 512"},
      {"numjobs_zero", "[j]\nnumjobs=0\nsize=1m\n", ":2: bad value for numjobs"},
      {"bad_rw", "[j]\nrw=randreed\n", ":2: bad value for rw: unknown rw mode 'randreed' (did you mean randread?)"},
      {"malformed_header", "[j\nsize=1m\n", ":1: malformed section header"},
      {"empty_key", "[j]\n=1\n", ":2: malformed line"},
      {"missing_value", "[j]\nsize\n", ":2: option 'size' needs a value"},
      {"bool_garbage", "[j]\ndirect=maybe\n", ":2: bad value for direct: 'maybe' is not 0 or 1"},
      {"range_reversed", "[j]\nbs=64k-4k\n", "range '64k-4k' has its minimum above its maximum"},
      {"bssplit_over_100", "[j]\nbssplit=4k/60:8k/60\n", "add up to 120, above 100"},
      {"zipf_theta_one", "[j]\nrandom_distribution=zipf:1\n", "zipf needs a theta above 0 other than 1"},
      {"unset_variable", "[j]\ndirectory=${IOFLEET_SURELY_UNSET_VARIABLE}\n", "environment variable 'IOFLEET_SURELY_UNSET_VARIABLE' is not set"},
      {"exec_prerun", "[j]\nsize=1m\nexec_prerun=touch /tmp/x\n", "is refused: iofleet never runs commands on workers"},
      {"unimplemented_fio_option", "[j]\nsize=1m\ncpumask=3\n", "fio option 'cpumask' is not implemented by iofleet"},
      {"verify_unknown", "[j]\nverify=sha513\n", "(did you mean sha512?)"},
      {"hipri_buffered_uring", "[j]\nioengine=io_uring\nhipri=1\nsize=1m\ndirectory=DIR\n", "hipri=1 with io_uring polls for completions, which needs direct=1"},
      {"percent_size_no_file", "[j]\nsize=50%\ndirectory=DIR\n", "size=N% needs filename="},
      {"relative_directory", "[j]\nsize=1m\ndirectory=relative/dir\n", "directory=relative/dir is relative: give --directory"},
      {"nfs_v4", "[j]\nioengine=nfs\nnfs_url=nfs://server/export?version=4\nsize=1m\n",
       ":3: bad value for nfs_url: NFS URL 'nfs://server/export?version=4': NFSv4 is not supported: libnfs 4.0 (Debian 12) fails NFSv4 writes; use NFSv3"},
      {"nfs_dotdot", "[j]\nioengine=nfs\nnfs_url=nfs://server/export/../etc\nsize=1m\n", ":3: bad value for nfs_url: NFS URL 'nfs://server/export/../etc': '..' is not allowed"},
      {"nfs_engine_no_url", "[j]\nioengine=nfs\nsize=1m\ndirectory=DIR\n", "ioengine=nfs needs nfs_url=nfs://server/export[/path]"},
      {"nfs_url_other_engine", "[j]\nioengine=psync\nnfs_url=nfs://server/export\nsize=1m\n", "is an NFS URL: use ioengine=nfs"},
      {"verify_delay_alone", "[j]\nsize=1m\nverify_across_workers_delay=2s\ndirectory=DIR\n", "verify_across_workers_delay has no effect without verify_across_workers=1"},
      {"rate_process_bad", "[j]\nrate_process=burst\n", "'burst' is not one of linear, poisson"},
      {"thinktime_blocks_alone", "[j]\nthinktime_blocks=4\nsize=1m\ndirectory=DIR\n", "thinktime_blocks without thinktime has no effect"},
      // Values that used to fail only on the worker (raw gRPC message, exit 1, files made):
      {"filename_empty_entry", "[j]\nrw=write\nsize=64k\ndirectory=DIR\nfilename=f1:f2::f3\n", ":1: job 'j': filename 'f1:f2::f3' has an empty name"},
      {"name_with_slash", "[../../x]\nrw=write\nsize=64k\ndirectory=DIR\n", ":1: job '../../x': the job name '../../x' holds a '/'"},
      {"long_line", "[j]\nrw=write\nsize=64k\ndirectory=DIR\ndescription=" + std::string(8 << 20, 'x') + "\n",
       ":5: the line is 8388620 bytes long, above the maximum of 65536"},
      {"long_section_name", "[" + std::string(60000, 's') + "]\nrw=write\nsize=64k\ndirectory=DIR\n",
       "the job name is 60000 bytes long, above the maximum of 255"},
      {"nul_in_section_name", std::string("[ab\0cd]\nrw=write\nsize=64k\ndirectory=DIR\n", 40), ":1: a NUL byte: this is not a text job file"},
      {"binary_file", std::string("\x01\x02\x1b[2J\x7f=\x03\n", 10), ":1: option '\\x01\\x02\\x1b[2J\\x7f=\\x03' outside of a section"},
      {"bssplit_zero_size", "[j]\nbssplit=0/100\nsize=1m\ndirectory=DIR\n", "bssplit"},
      {"hosts_without_directory", "[data]\nrw=write\nsize=64k\n", "job 'data': no directory= (where the job's files go); with --hosts every job needs directory="},
      {"bssplit_trim", "[j]\nrw=randrw\nbssplit=4k/100,4k/100,4k/100\nsize=64k\ndirectory=DIR\n", ":3: bad value for bssplit: '4k/100,4k/100,4k/100': a split for trims"},
  };
}

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, SpecificMessageExitTwoNothingTouched) {
  static TestWorker* worker = new TestWorker("bad-input-worker", {"--allow-root", TempDir()});
  const BadInput& c = GetParam();
  const std::string dir = TempDir() + "/bad-" + c.name;
  ::mkdir(dir.c_str(), 0755);
  std::string text = c.job;
  for (size_t at; (at = text.find("DIR")) != std::string::npos;) text.replace(at, 3, dir);
  const std::string job = TempDir() + "/bad-" + std::string(c.name) + ".fio";
  std::ofstream(job) << text;
  TestProcess controller({Runfile("controller/iofleet"), "run", job, "--hosts", worker->address()}, TempDir() + "/bad-run-" + c.name);
  EXPECT_EQ(controller.Wait(std::chrono::seconds(20)).value_or(-1), 2) << controller.Stderr();
  EXPECT_THAT(controller.Stderr(), HasSubstr(c.message));
  for (const char ch : controller.Stderr()) {
    EXPECT_TRUE(ch == '\n' || static_cast<unsigned char>(ch) >= 0x20) << "a control byte of the job file reached the terminal";
  }
  EXPECT_LT(controller.Stderr().size(), 4096u) << "the message echoes the whole input";
  EXPECT_EQ(::iofleet::testing::DirectoryEntries(dir), 0) << "a file was created for a job that never ran";
}

INSTANTIATE_TEST_SUITE_P(Table, BadInputs, ::testing::ValuesIn(Cases()), [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace iofleet
