// Runs an emulated kernel launch: each block of the grid in turn, its threads as fibers
// (fibers.h), each handing over to the next that can run at the barriers of device.h.
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/cuda/emulator/device.h"

namespace cuda_emulator {

constexpr unsigned kMaxThreadsPerBlock = 1024;
constexpr std::size_t kMaxSharedBytes = 227 * 1024;  // an H100/H200 block's opt-in maximum

// Runs `thread_body` once per thread of every block (it reads threadIdx and friends through
// current_thread()). Aborts with a message when the threads of a block cannot all reach a
// barrier (a __syncthreads or warp operation some thread never calls). One launch at a time
// per process (a lock is held throughout).
void run_grid(dim3 grid, dim3 block, std::size_t shared_bytes, const std::function<void()>& thread_body);

}  // namespace cuda_emulator
