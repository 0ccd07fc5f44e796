// The engine conformance suite (engines/engine_conformance_test.cc) for ioengine=nfs, against a
// real nfs-ganesha export: the server runs in a network namespace of its own (NfsServer) and
// this process joins it, so libnfs's sockets reach 127.0.0.1 there.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gtest/gtest.h"
#include "tests/targets.h"
#include "tests/test_process.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::GTEST_FLAG(filter) = "*/nfs";
  if (::geteuid() != 0) {
    std::fprintf(stderr, "SKIPPED: the NFS server's network namespace needs root\n");
    return 0;
  }
  iofleet::testing::NfsServer server(iofleet::testing::TempDir() + "/nfs-conformance");
  if (!server.error().empty()) {
    std::fprintf(stderr, "could not start the NFS server: %s\n", server.error().c_str());
    return 1;
  }
  const int home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  const int netns = ::open(("/run/netns/" + server.netns()).c_str(), O_RDONLY | O_CLOEXEC);
  if (home < 0 || netns < 0 || ::setns(netns, CLONE_NEWNET) != 0) {
    std::perror("join the NFS server's network namespace");
    return 1;
  }
  ::close(netns);
  ::setenv("IOFLEET_TEST_NFS_URL", server.url().c_str(), 1);
  ::setenv("IOFLEET_TEST_NFS_EXPORT", server.export_dir().c_str(), 1);
  const int result = RUN_ALL_TESTS();
  // Back home, so that the server's clean-up can delete its namespace.
  if (::setns(home, CLONE_NEWNET) != 0) std::perror("leave the NFS server's network namespace");
  ::close(home);
  return result;
}
