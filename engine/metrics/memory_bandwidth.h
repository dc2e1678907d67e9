// Measures the sustained memory read bandwidth of this machine with the pool's threads, the
// bound that decode speed (a full read of the weights per token) is compared against.
#pragma once

#include <cstddef>

#include "engine/core/thread_pool.h"

namespace inferscope {

// Bytes per second of a multi-threaded streaming read (vectorized sum) of a `bytes` buffer
// (rounded down to a multiple of 4 KiB; at least 1 MiB), split evenly over the pool's threads;
// the best of `passes` timed passes after one warm-up pass. Use a buffer much larger than the
// last-level cache. Returns 0 if the buffer cannot be allocated.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t{256} << 20, int passes = 5);

}  // namespace inferscope
