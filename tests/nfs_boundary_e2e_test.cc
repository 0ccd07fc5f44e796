// The worker as a security boundary on nfs:// roots: another NFS client swaps a directory the
// run made for a relative symlink that leads out of the worker's allowed directory, and no
// removal, rename, stat, create, read or listing may follow it (libnfs's path calls would: they
// resolve relative symlinks on the client). Against a real nfs-ganesha export in a network
// namespace of its own, which this process joins (as //tests:nfs_engine_conformance_test), with
// real worker and controller processes; the swaps are made through NFS, as another client would.
#include <fcntl.h>
#include <nfsc/libnfs.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nfs/nfs_connection.h"
#include "nfs/nfs_tree.h"
#include "tests/targets.h"
#include "tests/test_process.h"

namespace iofleet {
namespace {

using ::iofleet::testing::DirectoryEntries;
using ::iofleet::testing::DirectoryNames;
using ::iofleet::testing::Runfile;
using ::iofleet::testing::TempDir;
using ::iofleet::testing::TestProcess;
using ::iofleet::testing::PathExists;
using ::iofleet::testing::TestWorker;
using ::iofleet::testing::WaitFor;
using ::testing::HasSubstr;

std::string ExportUrl() { return std::getenv("IOFLEET_TEST_NFS_URL"); }
std::string ExportDir() { return std::getenv("IOFLEET_TEST_NFS_EXPORT"); }



// Each test works in a directory of its own on the export: `allowed` (the worker's root) and
// `other` beside it (outside the root, holding files named like the run's), changed through a
// libnfs connection of the test's own — ganesha caches metadata, so the export is never changed
// behind its back.
class NfsBoundary : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    auto url = ParseNfsUrl(ExportUrl());
    ASSERT_TRUE(url.ok()) << url.status();
    auto connection = NfsConnection::Connect(*url);
    ASSERT_TRUE(connection.ok()) << connection.status();
    client_ = std::move(*connection);
    ASSERT_EQ(nfs_mkdir(client_->context(), Inside("").c_str()), 0) << client_->LastError();
    ASSERT_EQ(nfs_mkdir(client_->context(), Inside("/allowed").c_str()), 0) << client_->LastError();
    ASSERT_EQ(nfs_mkdir(client_->context(), Inside("/other").c_str()), 0) << client_->LastError();
  }
  void TearDown() override { client_.reset(); }

  // The path of a test item inside the export ("/<test>/allowed/..."), and on this machine.
  std::string Inside(const std::string& rest) const { return "/" + name_ + rest; }
  std::string Local(const std::string& rest) const { return ExportDir() + Inside(rest); }
  std::string Url(const std::string& rest) const { return ExportUrl() + Inside(rest); }

  // Files in `other` named like the ones a run makes, so that a followed symlink would stat,
  // remove or overwrite them.
  void PlantOther(const std::vector<std::string>& names) {
    planted_ = names;
    for (const std::string& name : names) {
      nfsfh* handle = nullptr;
      ASSERT_EQ(nfs_create(client_->context(), Inside("/other/" + name).c_str(), O_WRONLY, 0644, &handle), 0) << client_->LastError();
      const std::string data = "outside " + name;
      ASSERT_EQ(nfs_pwrite(client_->context(), handle, 0, data.size(), data.data()), static_cast<int>(data.size()));
      ASSERT_EQ(nfs_close(client_->context(), handle), 0);
    }
  }
  void ExpectOtherUntouched() {
    EXPECT_EQ(DirectoryNames(Local("/other")).size(), planted_.size()) << "something was created in or removed from the outside directory";
    for (const std::string& name : planted_) {
      EXPECT_EQ(testing::ReadFile(Local("/other/" + name)), "outside " + name) << name << " outside the root was changed or removed";
    }
  }
  // Moves `rest` (a directory under allowed/) aside to `rest`.moved and puts a relative symlink
  // to ../(…)/other in its place: inside the export, outside the worker's root.
  void SwapForSymlink(const std::string& rest) {
    ASSERT_EQ(nfs_rename(client_->context(), Inside(rest).c_str(), Inside(rest + ".moved").c_str()), 0) << client_->LastError();
    std::string target;
    for (size_t i = 1; i < static_cast<size_t>(std::count(rest.begin(), rest.end(), '/')); ++i) target += "../";
    target += "other";
    ASSERT_EQ(nfs_symlink(client_->context(), target.c_str(), Inside(rest).c_str()), 0) << client_->LastError();
    // The symlink resolves to `other` for a path-following client (the hole being closed).
    struct nfs_stat_64 st;
    ASSERT_EQ(nfs_stat64(client_->context(), Inside(rest).c_str(), &st), 0) << client_->LastError();
    ASSERT_EQ(st.nfs_mode & S_IFMT, static_cast<uint64_t>(S_IFDIR)) << "the symlink does not lead to other/";
  }

  std::vector<std::string> Controller(std::vector<std::string> args) const {
    args.insert(args.begin(), Runfile("controller/iofleet"));
    args.insert(args.end(), {"--quiet", "--results-dir", "none"});
    return args;
  }
  std::string Base() const { return TempDir() + "/nfs-boundary-" + name_; }

  std::string name_;
  std::unique_ptr<NfsConnection> client_;
  std::vector<std::string> planted_;
};

// Every NfsTree call on a path through the swapped directory is refused; the same calls on the
// real directory work (so the refusals are not an artefact of a broken tree).
TEST_F(NfsBoundary, TreeCallsRefuseASymlinkedComponent) {
  auto url = ParseNfsUrl(Url("/allowed"));
  ASSERT_TRUE(url.ok());
  auto connection = NfsConnection::Connect(*url);
  ASSERT_TRUE(connection.ok()) << connection.status();
  auto opened = NfsTree::Open(connection->get());
  ASSERT_TRUE(opened.ok()) << opened.status();
  NfsTree& tree = **opened;
  auto at = [&](const std::string& rest) { return *(*connection)->PathOf(Url(rest)); };

  // The ordinary calls, checked on this machine's view of the export.
  ASSERT_EQ(tree.MakeDirectory(at("/allowed/d")), 0);
  ASSERT_EQ(tree.CreateFile(at("/allowed/d/f"), absl::MakeConstSpan("hello", 5), /*sync=*/true, false, false), 0);
  EXPECT_EQ(tree.CreateFile(at("/allowed/d/f"), {}, false, false, false), -EEXIST);
  EXPECT_EQ(tree.CreateFile(at("/allowed/d/f"), {}, false, false, /*shared=*/true), 0);
  EXPECT_EQ(testing::ReadFile(Local("/allowed/d/f")), "hello");
  NfsObject object;
  ASSERT_EQ(tree.Stat(at("/allowed/d/f"), &object), 0);
  EXPECT_EQ(object.size, 5u);
  char buffer[5];
  ASSERT_EQ(tree.ReadFile(at("/allowed/d/f"), absl::MakeSpan(buffer)), 0);
  EXPECT_EQ(std::string(buffer, 5), "hello");
  char longer[6];
  EXPECT_EQ(tree.ReadFile(at("/allowed/d/f"), absl::MakeSpan(longer)), -EIO) << "a short file is an error, as in mdtest";
  ASSERT_EQ(tree.CreateFile(at("/allowed/d/node"), {}, false, /*node=*/true, false), 0);
  std::set<std::string> names;
  ASSERT_EQ(tree.List(at("/allowed/d"), [&](absl::string_view n) { return names.insert(std::string(n)).second; }), 0);
  EXPECT_EQ(names, (std::set<std::string>{"f", "node"}));
  ASSERT_EQ(tree.Rename(at("/allowed/d/f"), at("/allowed/d/g")), 0);
  EXPECT_TRUE(PathExists(Local("/allowed/d/g")));
  ASSERT_EQ(tree.Unlink(at("/allowed/d/g")), 0);
  ASSERT_EQ(tree.Unlink(at("/allowed/d/node")), 0);
  EXPECT_EQ(tree.Unlink(at("/allowed/d/g")), -ENOENT);
  ASSERT_EQ(tree.RemoveDirectory(at("/allowed/d")), 0);
  EXPECT_FALSE(PathExists(Local("/allowed/d")));
  EXPECT_EQ(tree.Stat(at("/allowed") + "/../other", &object), -EXDEV) << "'..' never climbs";

  // Now through a swapped directory holding the run's names.
  ASSERT_EQ(tree.MakeDirectory(at("/allowed/run")), 0);
  ASSERT_EQ(tree.CreateFile(at("/allowed/run/victim"), {}, false, false, false), 0);
  PlantOther({"victim", "sub"});
  SwapForSymlink("/allowed/run");
  auto fresh = NfsTree::Open(connection->get());  // no cached parent: every call walks
  ASSERT_TRUE(fresh.ok());
  NfsTree& walk = **fresh;
  EXPECT_EQ(walk.Unlink(at("/allowed/run/victim")), -ELOOP);
  EXPECT_EQ(walk.Stat(at("/allowed/run/victim"), &object), -ELOOP);
  EXPECT_EQ(walk.ReadFile(at("/allowed/run/victim"), absl::MakeSpan(buffer)), -ELOOP);
  EXPECT_EQ(walk.CreateFile(at("/allowed/run/new"), absl::MakeConstSpan("x", 1), false, false, false), -ELOOP);
  EXPECT_EQ(walk.MakeDirectory(at("/allowed/run/newdir")), -ELOOP);
  EXPECT_EQ(walk.RemoveDirectory(at("/allowed/run/sub")), -ELOOP);
  EXPECT_EQ(walk.Rename(at("/allowed/run/victim"), at("/allowed/taken")), -ELOOP);
  EXPECT_EQ(walk.Rename(at("/allowed/run.moved/victim"), at("/allowed/run/victim")), -ELOOP);
  EXPECT_EQ(walk.List(at("/allowed/run"), [](absl::string_view) { return true; }), -ELOOP);
  EXPECT_EQ(walk.Identify(at("/allowed/run/victim"), false, &object), -ELOOP);
  nfsfh* handle = nullptr;
  EXPECT_EQ(walk.OpenFile(at("/allowed/run/victim"), O_RDWR, true, &handle), -ELOOP);
  EXPECT_EQ(handle, nullptr);
  // The symlink itself is described, not followed, and can be removed like any name.
  ASSERT_EQ(walk.Stat(at("/allowed/run"), &object), 0);
  EXPECT_TRUE(object.symlink);
  ExpectOtherUntouched();
  EXPECT_TRUE(PathExists(Local("/allowed/run.moved/victim")));

  // A tree that cached the directory before the swap keeps using the real one.
  ASSERT_EQ(tree.CreateFile(at("/allowed/keep/before"), {}, false, false, false), -ENOENT);
  ASSERT_EQ(tree.MakeDirectory(at("/allowed/keep")), 0);
  ASSERT_EQ(tree.CreateFile(at("/allowed/keep/before"), {}, false, false, false), 0);
  SwapForSymlink("/allowed/keep");
  ASSERT_EQ(tree.CreateFile(at("/allowed/keep/after"), {}, false, false, false), 0);
  EXPECT_TRUE(PathExists(Local("/allowed/keep.moved/after"))) << "the cached handle is the real directory";
  ExpectOtherUntouched();
}

// mdtest -C, then the tree directory becomes a relative symlink to a directory of files with
// the same names; mdtest -T and -r with the same options must refuse to go through it.
TEST_F(NfsBoundary, MdtestTreeSwappedBetweenPhasesIsRefused) {
  TestWorker worker("nfs-boundary-md-worker", {"--allow-root", Url("/allowed")});
  ASSERT_FALSE(worker.address().empty());
  const std::vector<std::string> md = {"mdtest", "-d", Url("/allowed/md"), "-n", "5", "-F", "--hosts", worker.address()};
  auto with = [&](const std::string& flag) {
    std::vector<std::string> args = md;
    args.push_back(flag);
    return Controller(args);
  };
  TestProcess create(with("-C"), Base() + "-create");
  ASSERT_EQ(create.Wait(std::chrono::seconds(90)).value_or(-1), 0) << create.Stderr();
  const std::string tree = "/allowed/md/test-dir.0-0/mdtest_tree.0";
  ASSERT_EQ(DirectoryEntries(Local(tree)), 5);

  PlantOther({"file.mdtest.0.0", "file.mdtest.0.1", "file.mdtest.0.2", "file.mdtest.0.3", "file.mdtest.0.4"});
  SwapForSymlink(tree);

  TestProcess stat(with("-T"), Base() + "-stat");
  EXPECT_NE(stat.Wait(std::chrono::seconds(90)).value_or(0), 0) << "a stat phase went through a swapped directory";
  EXPECT_THAT(stat.Stderr(), HasSubstr("symlink")) << stat.Stderr();

  TestProcess remove(with("-r"), Base() + "-remove");
  EXPECT_NE(remove.Wait(std::chrono::seconds(90)).value_or(0), 0) << "a removal phase went through a swapped directory";
  EXPECT_THAT(remove.Stderr(), HasSubstr("PERMISSION_DENIED")) << remove.Stderr();
  EXPECT_THAT(remove.Stderr(), HasSubstr(Url(tree))) << "the refusal names the path: " << remove.Stderr();
  ExpectOtherUntouched();
  EXPECT_EQ(DirectoryEntries(Local(tree + ".moved")), 5) << "the run's own files are where it made them";
  EXPECT_TRUE(PathExists(Local(tree))) << "tree removal went through the symlink";
}

// fio unlink=1 with the nfs engine: the job's directory is swapped while the job runs; the
// end-of-job unlink must not delete the outside file of the same name, and the run says why.
TEST_F(NfsBoundary, UnlinkAfterTheDirectoryWasSwappedIsRefused) {
  TestWorker worker("nfs-boundary-unlink-worker", {"--allow-root", Url("/allowed")});
  ASSERT_FALSE(worker.address().empty());
  PlantOther({"victim.conf"});
  const std::string job = Base() + ".fio";
  // create_on_open: the job thread itself creates the file, so its appearance means IO began.
  std::ofstream(job) << "[j]\nioengine=nfs\nrw=write\nbs=4k\nsize=256k\ntime_based=1\nruntime=3s\nunlink=1\n"
                     << "create_on_open=1\nfilename=victim.conf\n"
                     << "nfs_url=" << Url("/allowed/job") << "\n";
  TestProcess run(Controller({"run", job, "--hosts", worker.address()}), Base() + "-unlink");
  ASSERT_TRUE(WaitFor([&] { return PathExists(Local("/allowed/job/victim.conf")); }, std::chrono::seconds(30))) << run.Stderr();
  SwapForSymlink("/allowed/job");
  const int code = run.Wait(std::chrono::seconds(90)).value_or(-1);
  EXPECT_NE(code, 0) << "the run claimed success although its unlink was refused";
  EXPECT_THAT(run.Stderr(), HasSubstr("PERMISSION_DENIED: unlink " + Url("/allowed/job/victim.conf"))) << run.Stderr();
  EXPECT_THAT(run.Stderr(), HasSubstr("symlink")) << run.Stderr();
  ExpectOtherUntouched();
  EXPECT_TRUE(PathExists(Local("/allowed/job.moved/victim.conf"))) << "the run's own file is where it made it";
}

// unlink=1 with the nfs engine removes the run's files through NFS (it used to call
// ::unlink on the nfs:// URL, fail with ENOENT and say nothing).
TEST_F(NfsBoundary, UnlinkRemovesTheRunsFilesThroughNfs) {
  TestWorker worker("nfs-boundary-unlink-ok-worker", {"--allow-root", Url("/allowed")});
  ASSERT_FALSE(worker.address().empty());
  const std::string job = Base() + ".fio";
  std::ofstream(job) << "[j]\nioengine=nfs\nrw=write\nbs=4k\nsize=64k\nnumjobs=2\nunlink=1\nnfs_url=" << Url("/allowed/job") << "\n";
  TestProcess run(Controller({"run", job, "--hosts", worker.address()}), Base() + "-run");
  ASSERT_EQ(run.Wait(std::chrono::seconds(90)).value_or(-1), 0) << run.Stderr();
  EXPECT_EQ(DirectoryEntries(Local("/allowed/job")), 0) << "unlink=1 left the run's files on the export";
}

// A job whose directory is already a symlink out of the allowed directory is refused before
// anything is made or opened there: layout's mkdir -p and the engine's open do not follow it.
TEST_F(NfsBoundary, AJobDirectoryThatIsASymlinkIsNotFollowed) {
  TestWorker worker("nfs-boundary-open-worker", {"--allow-root", Url("/allowed")});
  ASSERT_FALSE(worker.address().empty());
  PlantOther({"data.bin"});
  ASSERT_EQ(nfs_mkdir(client_->context(), Inside("/allowed/link").c_str()), 0);
  SwapForSymlink("/allowed/link");
  for (const std::string& where : {std::string("nfs_url=") + Url("/allowed/link/deeper"), std::string("nfs_url=") + Url("/allowed/link")}) {
    const std::string job = Base() + ".fio";
    std::ofstream(job) << "[j]\nioengine=nfs\nrw=write\nbs=4k\nsize=64k\nfilename=data.bin\n" << where << "\n";
    TestProcess run(Controller({"run", job, "--hosts", worker.address()}), Base() + "-run");
    EXPECT_NE(run.Wait(std::chrono::seconds(90)).value_or(0), 0) << where;
    EXPECT_THAT(run.Stderr(), HasSubstr("symlink")) << where << ": " << run.Stderr();
    ExpectOtherUntouched();
  }
}

}  // namespace
}  // namespace iofleet

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return iofleet::testing::RunInNfsServerNamespace(iofleet::testing::TempDir() + "/nfs-boundary", [] { return RUN_ALL_TESTS(); });
}
