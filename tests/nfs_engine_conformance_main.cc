// The engine conformance suite (engines/engine_conformance_test.cc) for ioengine=nfs, against a
// real nfs-ganesha export: the server runs in a network namespace of its own (NfsServer) and
// this process joins it, so libnfs's sockets reach 127.0.0.1 there.
#include "gtest/gtest.h"
#include "tests/targets.h"
#include "tests/test_process.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::GTEST_FLAG(filter) = "*/nfs";
  return iofleet::testing::RunInNfsServerNamespace(iofleet::testing::TempDir() + "/nfs-conformance", [] { return RUN_ALL_TESTS(); });
}
