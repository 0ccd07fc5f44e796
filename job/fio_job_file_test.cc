#include "job/fio_job_file.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
  EXPECT_EQ(w.block_size(), 4096u);
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
  EXPECT_EQ(r.block_size(), 65536u);
  EXPECT_TRUE(r.direct());
  EXPECT_EQ(r.filename(), "shared.dat");
  EXPECT_EQ(r.numjobs(), 1u);  // not inherited from a sibling job
  EXPECT_TRUE(w.invalidate());  // fio's default
  EXPECT_EQ(r.ioengine(), "sync");
  EXPECT_TRUE(ValidateRunSpec(*spec).ok()) << ValidateRunSpec(*spec);
}

TEST(FioJobFile, FioDefaultsAndBooleanSpellings) {
  auto spec = ParseFioJobText("[j]\nsize=1m\ninvalidate=0\ndirect=1\n", "d.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const JobSpec& j = spec->jobs(0);
  EXPECT_EQ(j.rw(), v1::SEQ_READ);
  EXPECT_EQ(j.block_size(), 4096u);
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
