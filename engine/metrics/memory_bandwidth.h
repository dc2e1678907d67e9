// Measures the sustained memory read bandwidth of this machine with the pool's threads, the
// bound that decode speed (a full read of the weights per token) is compared against.
#pragma once

#include <cstddef>

#include "engine/core/thread_pool.h"

namespace inferscope {

// Bytes per second of a multi-threaded streaming read (vectorized sum) of a `bytes` buffer
// (rounded to a multiple of 2 MiB; at least 2 MiB), split evenly over the pool's threads; the
// best of `passes` timed passes after one warm-up pass. Use a buffer much larger than the
// last-level cache. With huge_pages the buffer asks for transparent huge pages (Linux
// MADV_HUGEPAGE), which removes a TLB miss and a hardware-prefetch restart every 4 KiB and so
// measures the best streaming rate (~20% higher than 4 KiB pages on the development machine);
// weights that sit in 4 KiB pages (a plain mmap of the model file) stream at the lower rate.
// Returns 0 if the buffer cannot be allocated.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t{256} << 20, int passes = 5,
                              bool huge_pages = true);

}  // namespace inferscope
