// ThreadPool: every index runs exactly once per run, results are visible after run() returns,
// many tiny jobs in a row, sleeping after the spin time and waking up again.
#include "engine/core/thread_pool.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace inferscope
