// What a backend holds and has done, as the memory chart, the status bar and `bench` show it.
#pragma once

#include <cstdint>

namespace inferscope {

// Memory a backend holds besides the model's weights in host memory.
struct ExecutorMemory {
  uint64_t device_weight_bytes = 0;  // weights copied to the device (0 on the CPU backend)
  uint64_t kv_cache_bytes = 0;
  // A hybrid model's recurrent states: each slot's and the checkpoints (RecurrentLayout).
  uint64_t recurrent_bytes = 0;
  uint64_t scratch_bytes = 0;
};

// Forward calls, and the work they submitted to a device (dispatches and submissions: 0 on the
// CPU backend; graph_launches: decode steps replayed as one prerecorded CUDA graph).
struct ExecutorCounters {
  uint64_t forward_calls = 0;
  uint64_t dispatches = 0;
  uint64_t submissions = 0;
  uint64_t graph_launches = 0;
};

}  // namespace inferscope
