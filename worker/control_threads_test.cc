#include "worker/control_threads.h"

#include <sched.h>

#include <thread>

#include "gtest/gtest.h"

namespace iofleet {
namespace {

// Runs `body` on a fresh thread (a policy is per thread; each test thread is thrown away).
template <typename Body>
void OnOwnThread(Body body) {
  std::thread(body).join();
}

TEST(ControlThreads, BatchButNotTheWorkThreads) {
  // A process under another policy is left alone (SCHED_IDLE needs no privilege to enter).
  OnOwnThread([] {
    const sched_param none{};
    ASSERT_EQ(::sched_setscheduler(0, SCHED_IDLE, &none), 0);
    EXPECT_FALSE(ScheduleControlThreadsAsBatch());
    EXPECT_EQ(::sched_getscheduler(0), SCHED_IDLE);
    ScheduleThisThreadForWork();
    EXPECT_EQ(::sched_getscheduler(0), SCHED_IDLE) << "not switched: nothing to undo";
  });
  // Switched: the threads started after inherit SCHED_BATCH; a work thread goes back.
  OnOwnThread([] {
    ASSERT_EQ(::sched_getscheduler(0), SCHED_OTHER);
    EXPECT_TRUE(ScheduleControlThreadsAsBatch());
    EXPECT_EQ(::sched_getscheduler(0), SCHED_BATCH);
    OnOwnThread([] { EXPECT_EQ(::sched_getscheduler(0), SCHED_BATCH) << "a control thread, as gRPC's"; });
    OnOwnThread([] {
      ScheduleThisThreadForWork();
      EXPECT_EQ(::sched_getscheduler(0), SCHED_OTHER) << "an IO thread";
    });
    OnOwnThread([] {
      const sched_param none{};
      ASSERT_EQ(::sched_setscheduler(0, SCHED_IDLE, &none), 0);
      ScheduleThisThreadForWork();
      EXPECT_EQ(::sched_getscheduler(0), SCHED_IDLE) << "only what was switched is switched back";
    });
  });
}

}  // namespace
}  // namespace iofleet
