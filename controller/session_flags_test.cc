#include "controller/session_flags.h"

#include <cstdlib>
#include <fstream>

#include "controller/mdtest_options.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<SessionFlags> Read(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> cl = ParseCommandLine(args, SessionOptionSpecs());
  if (!cl.ok()) return cl.status();
  SessionFlags flags;
  if (absl::Status s = ReadSessionFlags(*cl, &flags); !s.ok()) return s;
  return flags;
}

// The same flags mean the same thing on run's and compare's table and in mdtest's getopt-style
// command line: one reader, one set of rules.
TEST(SessionFlags, MdtestReadsTheSharedFlagsLikeRunAndCompare) {
  const std::string hostfile = std::string(std::getenv("TEST_TMPDIR")) + "/hosts";
  std::ofstream(hostfile) << "# workers\nnode2:7420\n\nnode3:7420  # rack 2\n";
  const std::vector<std::string> shared = {"--hosts", "node1:7420", "--hostfile", hostfile, "--interval=500ms", "--lease", "2s",
                                           "--quiet", "--straggler-threshold", "0.3", "--results-dir", "none", "--token-file", "/t",
                                           "--worker-intervals", "all"};
  absl::StatusOr<SessionFlags> run = Read(shared);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_THAT(run->hosts, ElementsAre("node1:7420", "node2:7420", "node3:7420"));
  EXPECT_EQ(run->interval, absl::Milliseconds(500));
  EXPECT_EQ(run->lease, absl::Seconds(2));
  EXPECT_TRUE(run->quiet);
  EXPECT_DOUBLE_EQ(run->straggler_fraction, 0.3);
  EXPECT_EQ(run->results_dir, "none");
  EXPECT_EQ(run->token_file, "/t");
  EXPECT_EQ(run->worker_intervals, true);
  EXPECT_EQ(Read({"--worker-intervals", "none"})->worker_intervals, false);
  EXPECT_EQ(Read({})->worker_intervals, std::nullopt);
  EXPECT_THAT(Read({"--worker-intervals", "some"}).status().message(), HasSubstr("--worker-intervals must be all or none, not 'some'"));

  std::vector<std::string> mdtest_args = {"-n", "10", "-d", "/tmp/x", "-u"};
  mdtest_args.insert(mdtest_args.end(), shared.begin(), shared.end());
  MdtestOptions mdtest;
  ASSERT_TRUE(ParseMdtestArgs(mdtest_args, &mdtest).ok());
  EXPECT_EQ(mdtest.session.hosts, run->hosts);
  EXPECT_EQ(mdtest.session.interval, run->interval);
  EXPECT_EQ(mdtest.session.lease, run->lease);
  EXPECT_EQ(mdtest.session.quiet, run->quiet);
  EXPECT_EQ(mdtest.session.results_dir, run->results_dir);
  EXPECT_EQ(mdtest.session.worker_intervals, run->worker_intervals);
  EXPECT_EQ(mdtest.phase.items_per_task(), 10u);
}

// --slurm: the allocation's nodes are the workers; what would contradict that is refused.
TEST(SessionFlags, SlurmStartsTheWorkersItself) {
  absl::StatusOr<SessionFlags> slurm = Read({"--slurm", "--wait", "2m"});
  ASSERT_TRUE(slurm.ok()) << slurm.status();
  EXPECT_TRUE(slurm->slurm);
  EXPECT_FALSE(slurm->local());
  EXPECT_EQ(slurm->wait, absl::Minutes(2));
  EXPECT_TRUE(Read({"--slurm", "--listen", "0.0.0.0:7400"}).ok());
  EXPECT_THAT(Read({"--slurm", "--hosts", "n1:7420"}).status().message(), HasSubstr("--slurm (workers on the allocation's nodes) and --hosts"));
  EXPECT_THAT(Read({"--slurm", "--expect-workers", "3"}).status().message(), HasSubstr("--expect-workers does not apply"));
  EXPECT_THAT(Read({"--slurm", "--local-workers", "3"}).status().message(), HasSubstr("--local-workers applies only without"));
}

// --ssh: one worker per host, started over ssh; the options that shape it need it.
TEST(SessionFlags, SshStartsAWorkerOnEachHost) {
  absl::StatusOr<SessionFlags> ssh = Read({"--ssh", "node1,root@node2", "--ssh", "node3", "--ssh-copy", "--ssh-command", "ssh -p 2222"});
  ASSERT_TRUE(ssh.ok()) << ssh.status();
  EXPECT_THAT(ssh->ssh_hosts, ElementsAre("node1", "root@node2", "node3"));
  EXPECT_TRUE(ssh->ssh_copy);
  EXPECT_EQ(ssh->ssh_command, "ssh -p 2222");
  EXPECT_FALSE(ssh->local());
  EXPECT_THAT(Read({"--ssh-copy"}).status().message(), HasSubstr("--ssh-copy applies only with --ssh"));
  EXPECT_THAT(Read({"--ssh", "n1", "--slurm"}).status().message(), HasSubstr("exclude each other"));
  EXPECT_THAT(Read({"--ssh", "n1", "--hosts", "n2:7420"}).status().message(), HasSubstr("exclude each other"));
  EXPECT_THAT(Read({"--ssh", "-oProxyCommand=x"}).status().message(), HasSubstr("is not a host name"));
  EXPECT_THAT(Read({"--ssh", "n1", "--ssh-copy", "--ssh-worker", "/x"}).status().message(), HasSubstr("--ssh-worker does not apply"));
}

TEST(SessionFlags, RulesHoldForEveryCommand) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--local-workers", "65"}, "--local-workers"},
      {{"--hosts", "a:1", "--local-workers", "2"}, "--local-workers applies only without --hosts/--hostfile"},
      {{"--hosts", "node1"}, "host 'node1' is not HOST:PORT"},
      {{"--interval", "1ms"}, "--interval"},
      {{"--interval", "soon"}, "--interval must be a duration of at least 10ms"},
      {{"--lease", "10ms"}, "--lease"},
      {{"--metrics-hold", "5s"}, "--metrics-hold needs --metrics-listen"},
      {{"--straggler-threshold", "2"}, "--straggler-threshold must be a fraction between 0 and 1"},
      {{"--on-worker-loss", "retry"}, "--on-worker-loss must be continue or abort"},
      {{"--hostfile", "/nonexistent/hosts"}, "cannot read hostfile /nonexistent/hosts"},
      {{"--quite"}, "did you mean --quiet"},
  };
  for (const auto& [args, message] : refused) {
    absl::StatusOr<SessionFlags> run = Read(args);
    EXPECT_THAT(std::string(run.status().message()), HasSubstr(message)) << args[0];
    std::vector<std::string> mdtest_args = {"-n", "10", "-d", "/tmp/x"};
    mdtest_args.insert(mdtest_args.end(), args.begin(), args.end());
    MdtestOptions mdtest;
    EXPECT_THAT(std::string(ParseMdtestArgs(mdtest_args, &mdtest).message()), HasSubstr(message)) << "mdtest " << args[0];
  }
}

}  // namespace
}  // namespace iofleet
