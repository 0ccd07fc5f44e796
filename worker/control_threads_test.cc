#include "worker/control_threads.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
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

// A thread's allowed CPUs, as the kernel has them.
cpu_set_t AllowedCpus(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(tid, sizeof(set), &set), 0);
  return set;
}

// The collector's hand-off: a waker that is leaving its CPU puts the thread it wakes there; the
// woken thread, once it runs, may use all of its own CPUs again.
TEST(CpuHandOff, TheWokenThreadRunsOnTheWakersCpuThenOnItsOwnAgain) {
  const cpu_set_t all = AllowedCpus(0);
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "one CPU: nothing to steer";
  int last = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &all)) last = cpu;
  }
  CpuHandOff hand_off;
  hand_off.SteerHere();  // nobody registered yet: nothing happens
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<pid_t> tid{0};
  bool woken = false;
  cpu_set_t ran_on;
  CPU_ZERO(&ran_on);
  int cpu_when_woken = -1;
  std::thread collector([&] {
    hand_off.Register();
    tid = ::gettid();
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return woken; });
    cpu_when_woken = ::sched_getcpu();
    ran_on = AllowedCpus(0);
    hand_off.Release();
  });
  while (tid.load() == 0) std::this_thread::yield();
  std::thread waker([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);
    hand_off.SteerHere();
    const cpu_set_t steered = AllowedCpus(tid.load());
    EXPECT_EQ(CPU_COUNT(&steered), 1);
    EXPECT_TRUE(CPU_ISSET(last, &steered)) << "steered to the waker's CPU";
    {
      std::lock_guard<std::mutex> lock(mu);
      woken = true;
    }
    cv.notify_all();
  });
  waker.join();
  collector.join();
  EXPECT_EQ(cpu_when_woken, last) << "woken, it ran where the waker was";
  EXPECT_EQ(CPU_COUNT(&ran_on), 1);
  // Released: its own CPUs again (checked on the thread itself before it ended).
  std::thread check([&] {
    CpuHandOff again;
    again.Register();
    const pid_t self = ::gettid();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);  // as a waker on `last` would
    again.SteerHere();  // (steering itself: the same calls)
    const cpu_set_t steered = AllowedCpus(self);
    EXPECT_EQ(CPU_COUNT(&steered), 1);
    again.Release();
    const cpu_set_t released = AllowedCpus(self);
    EXPECT_TRUE(CPU_EQUAL(&released, &all)) << "its own CPUs again";
  });
  check.join();
}

}  // namespace
}  // namespace iofleet
