// ThreadPool: every index runs exactly once per run, results are visible after run() returns,
// many tiny jobs in a row, sleeping after the spin time and waking up again; fewer active
// threads, fixed or chosen by a ThreadAdaptation (with a synthetic imbalance and a fake clock),
// and adapting next to a real busy thread (results only, no timings).
#include "engine/core/thread_pool.h"

#include <gtest/gtest.h>

#include "engine/core/thread_adaptation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace inferscope {
namespace {

TEST(ThreadPool, SizeCountsTheCaller) {
  EXPECT_EQ(ThreadPool(1).size(), 1);
  EXPECT_EQ(ThreadPool(3).size(), 3);
  EXPECT_EQ(ThreadPool(0).size(), 1);
}

TEST(ThreadPool, EveryIndexRunsOnce) {
  for (int n : {1, 2, 3, 4, 8}) {
    ThreadPool pool(n);
    std::vector<int> hits(static_cast<size_t>(n), 0);
    std::vector<int> seen_n(static_cast<size_t>(n), 0);
    const std::thread::id caller = std::this_thread::get_id();
    bool index0_on_caller = false;
    pool.run([&](int ith, int nth) {
      hits[static_cast<size_t>(ith)] += 1;  // plain writes: run() must order them before return
      seen_n[static_cast<size_t>(ith)] = nth;
      if (ith == 0) index0_on_caller = std::this_thread::get_id() == caller;
    });
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(hits[static_cast<size_t>(i)], 1) << "n=" << n << " i=" << i;
      EXPECT_EQ(seen_n[static_cast<size_t>(i)], n);
    }
    EXPECT_TRUE(index0_on_caller);
  }
}

TEST(ThreadPool, RepeatedRunsAccumulate) {
  ThreadPool pool(4);
  std::vector<int64_t> sums(4, 0);
  for (int iter = 0; iter < 20000; ++iter) {
    pool.run([&](int ith, int) { sums[static_cast<size_t>(ith)] += iter; });
  }
  const int64_t expected = int64_t{20000} * 19999 / 2;
  for (int64_t s : sums) EXPECT_EQ(s, expected);
}

TEST(ThreadPool, ManyTinyJobsStress) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::atomic<int> data[2] = {0, 0};
  std::atomic<int> stale{0};
  for (int iter = 0; iter < 100000; ++iter) {
    pool.run([&](int ith, int nth) {
      total.fetch_add(ith + 1, std::memory_order_relaxed);
      data[ith].store(iter, std::memory_order_relaxed);
      if (ith == 0) {  // every worker has finished the previous job before this one starts
        for (int j = 1; j < nth; ++j) {
          if (iter > 0 && data[j].load(std::memory_order_relaxed) < iter - 1) stale.fetch_add(1);
        }
      }
    });
  }
  EXPECT_EQ(stale.load(), 0);
  EXPECT_EQ(total.load(), int64_t{100000} * (1 + 2));
}

TEST(ThreadPool, AcceptsStdFunctionAndSplitsWork) {
  ThreadPool pool(2);
  std::vector<int> out(1000, 0);
  const std::function<void(int, int)> fn = [&](int ith, int nth) {
    for (size_t i = static_cast<size_t>(ith); i < out.size(); i += static_cast<size_t>(nth)) out[i] = static_cast<int>(i);
  };
  pool.run(fn);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<int>(i));
}

TEST(ThreadPool, WorkersSleepWhenIdleAndWakeUp) {
  ThreadPool pool(3, std::chrono::microseconds(1000));
  pool.run([](int, int) {});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pool.sleeping_workers() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(pool.sleeping_workers(), 2);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> count{0};
    pool.run([&](int, int) { count.fetch_add(1); });
    EXPECT_EQ(count.load(), 3);
    if (round % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // let them sleep again
  }
}

TEST(ThreadPool, CallerExceptionIsRethrownAfterWorkersFinish) {
  ThreadPool pool(2);
  std::atomic<int> done{0};
  EXPECT_THROW(pool.run([&](int ith, int) {
    if (ith == 0) throw std::runtime_error("boom");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done.store(1);
  }),
               std::runtime_error);
  EXPECT_EQ(done.load(), 1);
  std::atomic<int> count{0};
  pool.run([&](int, int) { count.fetch_add(1); });
  EXPECT_EQ(count.load(), 2);
}

TEST(ThreadPool, DestroyWhileSleeping) {
  auto pool = std::make_unique<ThreadPool>(4, std::chrono::microseconds(100));
  pool->run([](int, int) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pool.reset();  // must not hang
  SUCCEED();
}

TEST(ThreadPool, OnlyTheActiveThreadsRun) {
  ThreadPool pool(4);
  pool.set_active_threads(2);
  EXPECT_EQ(pool.active_threads(), 2);
  EXPECT_EQ(pool.size(), 4);
  std::vector<int> hits(4, 0);
  std::vector<int> seen_n(4, 0);
  pool.run([&](int ith, int nth) {
    hits[static_cast<size_t>(ith)] += 1;
    seen_n[static_cast<size_t>(ith)] = nth;
  });
  EXPECT_EQ(hits, (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(seen_n[0], 2);
  EXPECT_EQ(seen_n[1], 2);
  pool.set_active_threads(0);
  EXPECT_EQ(pool.active_threads(), 1);
  pool.set_active_threads(9);
  EXPECT_EQ(pool.active_threads(), 4);
}

// Workers left out of some jobs must neither run them nor miss the next job they are part of.
TEST(ThreadPool, ChangingTheActiveThreadsBetweenRuns) {
  ThreadPool pool(4, std::chrono::microseconds(200));
  std::vector<int64_t> runs(4, 0), expected(4, 0);
  for (int iter = 0; iter < 20000; ++iter) {
    const int active = 1 + (iter * 7 + iter / 5) % 4;
    pool.set_active_threads(active);
    for (int i = 0; i < active; ++i) expected[static_cast<size_t>(i)] += 1;
    pool.run([&](int ith, int nth) {
      ASSERT_EQ(nth, active);
      runs[static_cast<size_t>(ith)] += 1;
    });
    if (iter % 4000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // some fall asleep
  }
  EXPECT_EQ(runs, expected);
}

TEST(ThreadPool, InactiveWorkersSleep) {
  ThreadPool pool(3, std::chrono::microseconds(500));
  pool.set_active_threads(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pool.sleeping_workers() < 2 && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 100; ++i) pool.run([](int, int) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(pool.sleeping_workers(), 2);
}

// A job whose workers take far longer than the caller looks like a descheduled thread: a job is
// almost all lateness (unless the OS takes the caller off its core until the worker is done, so
// the pool runs jobs until it has dropped), so the adaptation drops to one thread, and probes
// after its back-off on the fake clock.
TEST(ThreadPool, AdaptationFollowsTheMeasuredLateness) {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  ThreadAdaptationOptions options;
  options.window = std::chrono::microseconds(0);  // every job is a window
  ThreadPool pool(2);
  pool.adapt(std::make_unique<ThreadAdaptation>(2, options, [&] { return now; }, [] { return -1; }));
  EXPECT_TRUE(pool.adaptive());
  EXPECT_EQ(pool.active_threads(), 2);
  auto uneven = [](int ith, int) {
    if (ith == 0) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(500);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  for (int i = 0; i < 1000 && pool.active_threads() == 2; ++i) pool.run(uneven);
  ASSERT_EQ(pool.active_threads(), 1);
  pool.run(uneven);
  EXPECT_EQ(pool.active_threads(), 1);
  now += options.first_backoff;
  pool.run(uneven);
  EXPECT_EQ(pool.active_threads(), 2);  // the probe
  pool.set_active_threads(2);
  EXPECT_FALSE(pool.adaptive());
}

// Next to a thread that keeps a core busy, the adaptive pool still runs every job's share once.
TEST(ThreadPool, AdaptingNextToABusyThreadKeepsResultsRight) {
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  ThreadPool pool(2);
  pool.adapt();
  std::vector<int64_t> sums(2, 0);
  int64_t expected = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const int active = pool.active_threads();
    pool.run([&](int ith, int nth) {
      ASSERT_EQ(nth, active);
      for (int64_t i = ith; i < 64; i += nth) sums[static_cast<size_t>(ith)] += i;
    });
    expected += 64 * 63 / 2;
  }
  stop.store(true);
  busy.join();
  EXPECT_EQ(sums[0] + sums[1], expected);
}

}  // namespace
}  // namespace inferscope
