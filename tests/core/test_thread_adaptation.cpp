// ThreadAdaptation with synthetic windows, a fake clock and a fake run queue: contended windows
// drop the threads, quiet ones keep them, probes come after the back-off (doubling while they
// fail or contention soon returns, reset after a calm spell), a full run queue holds a probe
// back but not beyond max_backoff.
#include "engine/core/thread_adaptation.h"

#include <gtest/gtest.h>

#include <chrono>

namespace inferscope {
namespace {

using namespace std::chrono_literals;

class FakeTime {
 public:
  std::chrono::steady_clock::time_point now() const { return now_; }
  void advance(std::chrono::milliseconds d) { now_ += d; }

 private:
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1)};
};

ThreadWindow quiet(int active) { return {active, 10ms, 100us}; }    // 1% late
ThreadWindow contended(int active) { return {active, 10ms, 8ms}; }  // 80% late

class ThreadAdaptationTest : public ::testing::Test {
 protected:
  // runnable: what the run queue reads (the caller included); -1: unknown.
  ThreadAdaptation make(int n_threads) {
    return ThreadAdaptation(n_threads, options_, [this] { return time_.now(); }, [this] { return runnable_; });
  }
  // Drives `a` from all threads to fewer with contended windows.
  static void drop(ThreadAdaptation& a) {
    const int before = a.active();
    for (int i = 0; i < 10 && a.active() == before; ++i) a.observe(contended(a.active()));
    ASSERT_LT(a.active(), before);
  }

  ThreadAdaptationOptions options_;  // the defaults: back-off 100 ms to 8 s, reset after 1 s calm
  FakeTime time_;
  int runnable_ = -1;
};

TEST_F(ThreadAdaptationTest, QuietWindowsKeepEveryThread) {
  ThreadAdaptation a = make(4);
  EXPECT_EQ(a.active(), 4);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(a.observe(quiet(4)), 4);
    time_.advance(10ms);
  }
}

TEST_F(ThreadAdaptationTest, OneContendedWindowIsNotEnough) {
  ThreadAdaptation a = make(2);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(a.observe(contended(2)), 2);
    EXPECT_EQ(a.observe(quiet(2)), 2);
  }
}

TEST_F(ThreadAdaptationTest, ContendedWindowsInARowHalveTheThreads) {
  ASSERT_GE(options_.contended_windows, 2);
  ThreadAdaptation two = make(2);
  for (int i = 1; i < options_.contended_windows; ++i) EXPECT_EQ(two.observe(contended(2)), 2);
  EXPECT_EQ(two.observe(contended(2)), 1);

  ThreadAdaptation eight = make(8);
  for (int expected : {4, 2, 1}) {
    const int before = eight.active();
    for (int i = 1; i < options_.contended_windows; ++i) EXPECT_EQ(eight.observe(contended(before)), before);
    EXPECT_EQ(eight.observe(contended(before)), expected);
  }
}

TEST_F(ThreadAdaptationTest, TheShareOfLatenessDecides) {
  ThreadAdaptation a = make(2);
  const ThreadWindow just_below{2, 10ms, 3900us};  // 39% < 40%
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.observe(just_below), 2);
  const ThreadWindow just_above{2, 10ms, 4100us};
  for (int i = 1; i < options_.contended_windows; ++i) a.observe(just_above);
  EXPECT_EQ(a.observe(just_above), 1);
}

TEST_F(ThreadAdaptationTest, ProbesBackUpAfterTheBackoff) {
  ThreadAdaptation a = make(2);
  drop(a);
  time_.advance(options_.first_backoff - 1ms);
  EXPECT_EQ(a.observe(quiet(1)), 1);  // before the first back-off
  time_.advance(1ms);
  EXPECT_EQ(a.observe(quiet(1)), 2);  // the probe
  EXPECT_EQ(a.observe(quiet(2)), 2);  // it found the machine quiet: the threads stay
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.observe(quiet(2)), 2);
}

TEST_F(ThreadAdaptationTest, AFailedProbeDoublesTheBackoff) {
  ThreadAdaptation a = make(2);
  drop(a);
  std::chrono::milliseconds backoff = options_.first_backoff;
  for (int round = 0; round < 8; ++round) {
    time_.advance(backoff - 1ms);
    ASSERT_EQ(a.observe(quiet(1)), 1) << "round " << round;
    time_.advance(1ms);
    ASSERT_EQ(a.observe(quiet(1)), 2) << "round " << round;
    ASSERT_EQ(a.observe(contended(2)), 1) << "round " << round;  // one contended probe window suffices
    backoff = std::min(options_.max_backoff, backoff * 2);
  }
}

TEST_F(ThreadAdaptationTest, ProbesStepUpByDoubling) {
  ThreadAdaptation a = make(8);
  drop(a);  // 4
  drop(a);  // 2
  ASSERT_EQ(a.active(), 2);
  time_.advance(10s);
  EXPECT_EQ(a.observe(quiet(2)), 4);
  EXPECT_EQ(a.observe(quiet(4)), 4);
  time_.advance(10s);
  EXPECT_EQ(a.observe(quiet(4)), 8);
  EXPECT_EQ(a.observe(quiet(8)), 8);
}

TEST_F(ThreadAdaptationTest, AFullRunQueueHoldsTheProbeBack) {
  ThreadAdaptation a = make(2);
  drop(a);
  runnable_ = 2;  // us and one other: a second thread of ours would find no free core
  time_.advance(1s);
  EXPECT_EQ(a.observe(quiet(1)), 1);
  time_.advance(1s);
  EXPECT_EQ(a.observe(quiet(1)), 1);
  runnable_ = 1;  // the other one is gone
  EXPECT_EQ(a.observe(quiet(1)), 2);
}

TEST_F(ThreadAdaptationTest, AFullRunQueueHoldsTheProbeBackAtMostMaxBackoff) {
  ThreadAdaptation a = make(2);
  drop(a);
  runnable_ = 5;
  time_.advance(options_.max_backoff - 1ms);
  EXPECT_EQ(a.observe(quiet(1)), 1);
  time_.advance(1ms);
  EXPECT_EQ(a.observe(quiet(1)), 2);
}

TEST_F(ThreadAdaptationTest, TheRunQueueCountsOurOwnActiveThreads) {
  ThreadAdaptation a = make(4);
  drop(a);  // 2 active: both in the run queue
  runnable_ = 2;
  time_.advance(1s);
  EXPECT_EQ(a.observe(quiet(2)), 4);
}

// A spell of contention soon after the threads went up is the same one, misjudged by the probe.
TEST_F(ThreadAdaptationTest, ADropSoonAfterAProbeKeepsTheLongerBackoff) {
  ThreadAdaptation a = make(2);
  drop(a);
  time_.advance(options_.first_backoff);
  ASSERT_EQ(a.observe(quiet(1)), 2);
  ASSERT_EQ(a.observe(quiet(2)), 2);  // the probe found it calm
  time_.advance(options_.calm_reset - 1ms);
  drop(a);
  time_.advance(2 * options_.first_backoff - 1ms);
  EXPECT_EQ(a.observe(quiet(1)), 1);
  time_.advance(1ms);
  EXPECT_EQ(a.observe(quiet(1)), 2);
}

TEST_F(ThreadAdaptationTest, TheBackoffResetsAfterCalmResetWithoutContention) {
  ThreadAdaptation a = make(2);
  drop(a);
  for (int round = 0; round < 4; ++round) {  // back-off now 2^5 first back-offs
    time_.advance(options_.max_backoff);
    a.observe(quiet(1));
    a.observe(contended(2));
  }
  time_.advance(options_.max_backoff);
  ASSERT_EQ(a.observe(quiet(1)), 2);
  ASSERT_EQ(a.observe(quiet(2)), 2);
  time_.advance(options_.calm_reset);
  ASSERT_EQ(a.observe(quiet(2)), 2);  // calm for calm_reset: the back-off resets
  drop(a);
  time_.advance(options_.first_backoff);
  EXPECT_EQ(a.observe(quiet(1)), 2);
}

TEST_F(ThreadAdaptationTest, OneThreadNeverChanges) {
  ThreadAdaptation a = make(1);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a.observe(contended(1)), 1);
    time_.advance(10s);
  }
}

TEST(ThreadAdaptationRunQueue, ReadsTheMachine) {
  // The caller itself is running while it reads: at least 1 where /proc is mounted.
  const int running = ThreadAdaptation::procs_running();
  EXPECT_TRUE(running == -1 || running >= 1) << running;
}

}  // namespace
}  // namespace inferscope
