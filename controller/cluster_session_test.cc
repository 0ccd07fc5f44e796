#include "controller/cluster_session.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iofleet {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

void AddWorker(v1::RunReport* report, int job, const std::string& worker, v1::StopCause cause, const std::string& stop_reason) {
  while (report->jobs_size() <= job) report->add_jobs();
  v1::WorkerResult* w = report->mutable_jobs(job)->add_workers();
  w->set_worker(worker);
  w->set_stop_cause(cause);
  w->set_stop_reason(stop_reason);
}

constexpr v1::StopCause kLease = v1::STOP_CAUSE_LEASE_EXPIRED;

TEST(ReportLeaseStops, NamesEachWorkerThatStoppedOnItsLeaseOnce) {
  v1::RunReport report;
  // The same worker in two jobs counts once; a stop the user asked for is no lease stop, whatever
  // its words ("release" has "lease" in it: the cause decides, not the text).
  AddWorker(&report, 0, "10.0.0.1:7100", kLease, "lease expired: the controller stopped sending heartbeats");
  AddWorker(&report, 1, "10.0.0.1:7100", kLease, "lease expired: the controller stopped sending heartbeats");
  AddWorker(&report, 0, "10.0.0.2:7100", v1::STOP_CAUSE_REQUESTED, "interrupted by the user");
  AddWorker(&report, 0, "10.0.0.4:7100", v1::STOP_CAUSE_REQUESTED, "stopped to release the disk");
  AddWorker(&report, 0, "10.0.0.3:7100", v1::STOP_CAUSE_UNSPECIFIED, "");
  ReportLeaseStops(report, &report);
  ASSERT_EQ(report.problems_size(), 1);
  EXPECT_EQ(report.problems(0),
            "1 worker stopped before the jobs' end (lease expired: the controller stopped sending heartbeats): 10.0.0.1:7100; their "
            "figures cover only the time until then");
}

TEST(ReportLeaseStops, BehindRelaysTheWorkersAreNamedNotTheRelay) {
  v1::RunReport report;
  // The relay's job results carry its workers' stop reason; the relay itself did not stop.
  AddWorker(&report, 0, "10.0.1.1:7200", kLease, "lease expired");
  for (int i = 0; i < 8; ++i) {
    v1::RelayedWorkerSummary* w = report.add_relayed_workers();
    w->set_address("10.0.2." + std::to_string(i) + ":7100");
    w->add_relays("10.0.1.1:7200");
    if (i % 4 == 3) continue;
    w->set_stop_cause(kLease);
    w->set_stop_reason(i == 1 ? "the controller was not heard for a lease (the relay stopped the run)" : "lease expired");
  }
  ReportLeaseStops(report, &report);
  ASSERT_EQ(report.problems_size(), 1);
  EXPECT_THAT(report.problems(0), HasSubstr("6 workers stopped before the jobs' end (lease expired): 10.0.2.0:7100 (behind 10.0.1.1:7200), "
                                            "10.0.2.1:7100 (behind 10.0.1.1:7200)"));
  EXPECT_THAT(report.problems(0), HasSubstr(" and 1 more;"));
  EXPECT_THAT(report.problems(0), ::testing::Not(HasSubstr("10.0.2.3:")));
}

TEST(ReportLeaseStops, NothingWhenEveryWorkerRanToTheEnd) {
  v1::RunReport report;
  AddWorker(&report, 0, "10.0.0.1:7100", v1::STOP_CAUSE_UNSPECIFIED, "");
  ReportLeaseStops(report, &report);
  EXPECT_THAT(report.problems(), IsEmpty());
}

}  // namespace
}  // namespace iofleet
