#include "controller/ssh_workers.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The command a host's shell runs, run here by sh with what ssh would send on stdin: every
// argument arrives as given (quotes and all), the token comes from stdin and never appears in
// the command, the rank is set.
TEST(RemoteWorkerCommand, ArgumentsSurviveTheRemoteShellAndTheTokenStaysOffTheCommandLine) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  const std::string fake = dir + "/fake-worker";
  std::ofstream(fake) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << dir << "/args\necho \"$IOFLEET_RUN_TOKEN $IOFLEET_LAUNCH_RANK\" > " << dir
                      << "/env\n";
  ASSERT_EQ(std::system(("chmod +x " + fake).c_str()), 0);
  SshLaunch launch{.hosts = {"h"}, .controller = "ctl:7400", .token = "s3cret", .allowed_roots = {"/mnt/it's here", "/b c"}, .remote_worker = fake};
  const std::string command = RemoteWorkerCommand(launch, 3, 0);
  EXPECT_THAT(command, Not(HasSubstr("s3cret")));
  const std::string script = dir + "/command";
  std::ofstream(script) << command;
  ASSERT_EQ(std::system(("printf 's3cret\\n' | sh " + script).c_str()), 0);
  std::ifstream args(dir + "/args"), env(dir + "/env");
  std::string all((std::istreambuf_iterator<char>(args)), std::istreambuf_iterator<char>());
  std::string vars((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
  EXPECT_THAT(all, HasSubstr("--allow-root\n/mnt/it's here\n--allow-root\n/b c\n"));
  EXPECT_THAT(all, HasSubstr("--controller\nctl:7400\n"));
  EXPECT_THAT(all, HasSubstr("--stdin-lifeline\n"));
  EXPECT_EQ(vars, "s3cret 3\n");
}

}  // namespace
}  // namespace iofleet
