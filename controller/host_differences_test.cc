#include "controller/host_differences.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::WorkerInfo* Worker(v1::RunReport* report, const std::string& scheduler, const std::string& kernel = "Linux 6.1") {
  v1::WorkerInfo* w = report->add_workers();
  w->mutable_facts()->set_kernel(kernel);
  w->mutable_facts()->set_cpus(8);
  v1::TargetFacts* t = w->mutable_facts()->add_targets();
  t->set_path("/mnt/x");
  t->set_fs_type("ext4");
  t->set_scheduler(scheduler);
  return w;
}

TEST(HostDifferences, TheOddWorkerOutIsNamed) {
  v1::RunReport report;
  Worker(&report, "none");
  Worker(&report, "kyber");
  Worker(&report, "none");
  MarkHostDifferences(&report);
  EXPECT_THAT(report.workers(0).differs(), IsEmpty());
  EXPECT_THAT(report.workers(1).differs(), ElementsAre("scheduler of /mnt/x: kyber (others: none)"));
  EXPECT_THAT(report.workers(2).differs(), IsEmpty());
}

TEST(HostDifferences, AlikeWorkersHaveNothingToSay) {
  v1::RunReport report;
  Worker(&report, "none");
  Worker(&report, "none");
  MarkHostDifferences(&report);
  EXPECT_THAT(report.workers(0).differs(), IsEmpty());
  Worker(&report, "none", "Linux 5.10");
  MarkHostDifferences(&report);
  EXPECT_THAT(report.workers(2).differs(), ElementsAre("kernel: Linux 5.10 (others: Linux 6.1)"));
}

}  // namespace
}  // namespace iofleet
