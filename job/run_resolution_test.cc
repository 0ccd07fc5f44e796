#include "job/run_resolution.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "job/fio_job_file.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;

// A job file resolved for local workers, with /tmp/t as the temporary directory.
absl::StatusOr<ResolvedRun> ResolveLocal(const std::string& text, int* temporaries_made = nullptr) {
  auto spec = ParseFioJobText(text, "x.fio");
  if (!spec.ok()) return spec.status();
  return ResolveRunSpec(*spec, RunPlacement{.local_workers = true, .temporary_directory = [temporaries_made]() -> absl::StatusOr<std::string> {
                                              if (temporaries_made) ++*temporaries_made;
                                              return std::string("/tmp/t");
                                            }});
}

TEST(ResolveRunSpec, VerifyAcrossWorkersAddsAStonewalledReadBackOfTheSameFiles) {
  auto run = ResolveLocal("[global]\ndirectory=/tmp\n[w]\nrw=randwrite\nbs=4k\nsize=1m\nverify=md5\nverify_across_workers=1\nunlink=1\n[next]\nrw=read\nsize=1m\n");
  ASSERT_TRUE(run.ok()) << run.status();
  const v1::RunSpec& spec = run->spec;
  ASSERT_EQ(spec.jobs_size(), 3);
  const v1::JobSpec& writer = spec.jobs(0);
  const v1::JobSpec& verifier = spec.jobs(1);
  EXPECT_FALSE(writer.do_verify());  // another worker reads it back instead
  EXPECT_FALSE(writer.unlink());     // the files outlive the write phase
  EXPECT_EQ(verifier.name(), "w-verify");
  EXPECT_EQ(verifier.files_of_job(), "w");
  EXPECT_EQ(verifier.rw(), v1::SEQ_READ);
  EXPECT_TRUE(verifier.stonewall());
  EXPECT_TRUE(verifier.verify_across_workers());
  EXPECT_EQ(verifier.verify(), v1::JobSpec::VERIFY_MD5);
  EXPECT_TRUE(verifier.unlink());
  EXPECT_EQ(spec.jobs(2).name(), "next");

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"rw=randwrite\nbs=4k\n", "x.fio:1: job 'w': verify_across_workers needs verify= (a checksum, meta or pattern)"},
      {"rw=randrw\nbs=4k\nverify=crc32c\n", "needs rw=write or rw=randwrite (not randrw)"},
      {"rw=write\nbs=4k\nverify=crc32c\nfilename=shared\n", "needs one file per worker (remove filename=)"},
      {"rw=write\nbs=4k\nverify=crc32c\ntime_based\nruntime=5s\n", "needs every block of the file written once"},
      {"rw=write\nbsrange=4k-16k\nverify=crc32c\n", "needs one block size"},
  };
  for (const auto& [options, message] : refused) {
    auto bad = ResolveLocal(absl::StrCat("[w]\nsize=1m\nverify_across_workers=1\n", options));
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << options;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(message)) << options;
  }
  // A read job with it reads the next worker's files; it needs a verify kind.
  auto reader = ResolveLocal("[w]\ndirectory=/tmp\nrw=read\nsize=1m\nverify_across_workers=1\n");
  EXPECT_THAT(std::string(reader.status().message()), HasSubstr("verify_across_workers needs verify= (a checksum, meta or pattern)"));
}

// --directory places the jobs that name no place; locally the rest share one temporary
// directory (made once); with --hosts a job that does file IO and names no place is refused.
TEST(ResolveRunSpec, PlacesFilesFromTheCommandLineOrATemporaryDirectory) {
  const std::string text = "[global]\nrw=read\nsize=1m\n[a]\n[b]\ndirectory=/data\n[c]\nfilename=/dev/shm/f\n[d]\n";
  auto spec = ParseFioJobText(text, "x.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto placed = ResolveRunSpec(*spec, RunPlacement{.default_directory = "/mnt/nfs"});
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->spec.jobs(0).directory(), "/mnt/nfs");
  EXPECT_EQ(placed->spec.jobs(1).directory(), "/data");
  EXPECT_EQ(placed->spec.jobs(2).directory(), "");
  EXPECT_EQ(placed->spec.jobs(3).directory(), "/mnt/nfs");

  int made = 0;
  auto local = ResolveLocal(text, &made);
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->spec.jobs(0).directory(), "/tmp/t");
  EXPECT_EQ(local->spec.jobs(3).directory(), "/tmp/t");
  EXPECT_EQ(made, 1);

  auto remote = ResolveRunSpec(*spec, RunPlacement{});
  EXPECT_EQ(remote.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(remote.status().message()), HasSubstr("job 'a': no directory= (where the job's files go); with --hosts"));
  EXPECT_THAT(std::string(ResolveRunSpec(*spec, RunPlacement{.default_directory = "data"}).status().message()),
              HasSubstr("--directory data must be an absolute path"));
  // A diskless job needs no place, even with --hosts.
  auto null = ParseFioJobText("[n]\nioengine=null\nrw=read\nsize=1m\n", "x.fio");
  ASSERT_TRUE(null.ok());
  EXPECT_TRUE(ResolveRunSpec(*null, RunPlacement{}).ok());
}

// A compare target replaces every job's directory; an nfs:// target switches the jobs to the
// nfs engine (and says so), a local one refuses a job that needs the nfs engine.
TEST(ResolveRunSpec, CompareTargetsPlaceEveryJobAndPickTheNfsEngine) {
  auto spec = ParseFioJobText("[a]\nrw=read\nsize=1m\ndirectory=/data\nioengine=psync\n", "x.fio");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto local = ResolveRunSpec(*spec, RunPlacement{.target = "/mnt/local"});
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->spec.jobs(0).directory(), "/mnt/local");
  EXPECT_EQ(local->spec.jobs(0).ioengine(), "psync");
  EXPECT_TRUE(local->notes.empty());

  auto nfs = ResolveRunSpec(*spec, RunPlacement{.target = "nfs://127.0.0.1/export/dir"});
  ASSERT_TRUE(nfs.ok()) << nfs.status();
  EXPECT_EQ(nfs->spec.jobs(0).ioengine(), "nfs");
  EXPECT_EQ(nfs->spec.jobs(0).nfs_url(), "nfs://127.0.0.1/export/dir");
  ASSERT_EQ(nfs->notes.size(), 1u);
  EXPECT_THAT(nfs->notes[0], HasSubstr("job 'a' runs with ioengine=nfs (libnfs, no mount) instead of psync"));

  EXPECT_THAT(std::string(ResolveRunSpec(nfs->spec, RunPlacement{.target = "/mnt/local"}).status().message()),
              HasSubstr("job 'a' uses ioengine=nfs, which cannot run on the local path /mnt/local"));
}

// Whatever the front end, what leaves the stage is validated: a bound the parser does not
// check (here iodepth above the limit in a hand-made spec) is refused here.
TEST(ResolveRunSpec, ValidatesWhatEveryFrontEndHandsIn) {
  v1::RunSpec spec;
  v1::JobSpec* job = spec.add_jobs();
  job->set_name("hand-made");
  job->set_ioengine("null");
  job->set_rw(v1::SEQ_READ);
  job->set_size(1 << 20);
  job->set_numjobs(1);
  job->set_iodepth(0);
  auto resolved = ResolveRunSpec(spec, RunPlacement{});
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(resolved.status().message()), HasSubstr("iodepth must be at least 1"));
}

// fio's 1mbs_clients.fio has directory=tmp: beneath --directory (or a local run's temporary
// directory), never beneath the controller's working directory, which no worker shares.
TEST(ResolveRunSpec, RelativeDirectoriesGoBeneathTheRunsDirectory) {
  auto local = ResolveLocal("[j]\ndirectory=tmp:/abs:a\\:b\nrw=read\nsize=1m\n");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->spec.jobs(0).directory(), "/tmp/t/tmp:/abs:/tmp/t/a\\:b");
  auto spec = ParseFioJobText("[j]\ndirectory=tmp\nrw=read\nsize=1m\n", "x.fio");
  ASSERT_TRUE(spec.ok());
  auto placed = ResolveRunSpec(*spec, RunPlacement{.default_directory = "/mnt/nfs"});
  ASSERT_TRUE(placed.ok()) << placed.status();
  EXPECT_EQ(placed->spec.jobs(0).directory(), "/mnt/nfs/tmp");
  auto remote = ResolveRunSpec(*spec, RunPlacement{});
  EXPECT_THAT(std::string(remote.status().message()), HasSubstr("x.fio:1: job 'j': directory=tmp is relative: give --directory"));
}

}  // namespace
}  // namespace iofleet
