#include "kernels/cuda/emulator/grid_runner.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/cuda/emulator/fibers.h"

namespace cuda_emulator {
namespace {

constexpr std::size_t kStackBytes = 256 * 1024;

enum class FiberState { Ready, AtBlockBarrier, AtWarpBarrier, Done };

struct Fiber {
  void* sp = nullptr;
  ThreadState thread;
  FiberState state = FiberState::Ready;
  uint64_t waiting_for = 0;  // the barrier generation it waits to see pass
  int warp = 0, lane = 0;
  uint32_t gathers = 0;      // warp_gather calls so far (picks the exchange buffer)
};

struct Warp {
  int live = 0, arrived = 0;
  uint64_t generation = 0;
  uint64_t slots[2][32] = {};  // double-buffered: gather k uses slots[k % 2]
};

// The block being run.
struct Block {
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  int live = 0, arrived = 0;
  uint64_t generation = 0;
  const std::function<void()>* body = nullptr;
  std::vector<unsigned char> shared;
};

std::mutex launch_mutex;
Block* block = nullptr;
Fiber* running = nullptr;
void* scheduler_sp = nullptr;
std::vector<std::unique_ptr<FiberStack>> stacks;

void fail(const char* what) {
  std::fprintf(stderr, "cuda emulator: %s\n", what);
  std::abort();
}

// Opens a barrier once every live thread it waits for has arrived.
void release_block_if_complete() {
  if (block->arrived > 0 && block->arrived == block->live) {
    block->arrived = 0;
    ++block->generation;
  }
}

void release_warp_if_complete(Warp& w) {
  if (w.arrived > 0 && w.arrived == w.live) {
    w.arrived = 0;
    ++w.generation;
  }
}

bool runnable(const Fiber& f) {
  switch (f.state) {
    case FiberState::Ready: return true;
    case FiberState::AtBlockBarrier: return block->generation != f.waiting_for;
    case FiberState::AtWarpBarrier: return block->warps[static_cast<size_t>(f.warp)].generation != f.waiting_for;
    case FiberState::Done: return false;
  }
  return false;
}

// The first thread after `from` in block order (wrapping round) that can run, or nullptr.
Fiber* next_runnable(const Fiber* from) {
  std::vector<Fiber>& fibers = block->fibers;
  const size_t n = fibers.size();
  const auto at = static_cast<size_t>(from - fibers.data());
  for (size_t k = 1; k <= n; ++k) {
    Fiber& f = fibers[(at + k) % n];
    if (runnable(f)) return &f;
  }
  return nullptr;
}

// The running thread, stopped at a barrier or done, hands over straight to the next thread that
// can run (one switch per hand-over); to the scheduler only when none can: the block is done, or
// deadlocked.
void switch_away() {
  Fiber* self = running;
  Fiber* next = next_runnable(self);
  if (next == nullptr) {
    cuda_emulator_switch(&self->sp, scheduler_sp);
    return;
  }
  next->state = FiberState::Ready;
  running = next;
  cuda_emulator_switch(&self->sp, next->sp);
}

[[noreturn]] void fiber_entry() {
  (*block->body)();
  running->state = FiberState::Done;
  --block->live;
  Warp& w = block->warps[static_cast<size_t>(running->warp)];
  --w.live;
  release_block_if_complete();
  release_warp_if_complete(w);
  switch_away();
  fail("a finished thread was resumed");
  std::abort();
}

void run_block(const dim3& block_idx) {
  for (size_t i = 0; i < block->fibers.size(); ++i) {
    Fiber& f = block->fibers[i];
    f.thread.block_idx = {block_idx.x, block_idx.y, block_idx.z};
    f.state = FiberState::Ready;
    f.gathers = 0;
    f.sp = stacks[i]->start(fiber_entry);
  }
  block->live = static_cast<int>(block->fibers.size());
  block->arrived = 0;
  for (Warp& w : block->warps) w = Warp{};
  for (const Fiber& f : block->fibers) ++block->warps[static_cast<size_t>(f.warp)].live;
  running = &block->fibers.front();
  cuda_emulator_switch(&scheduler_sp, running->sp);
  if (block->live > 0) fail("deadlock: a thread waits at __syncthreads() or a warp operation that others never reach");
  running = nullptr;
}

}  // namespace

const ThreadState& current_thread() {
  if (!running) fail("threadIdx read outside a kernel");
  return running->thread;
}

int lane_id() { return running->lane; }

void* dynamic_shared() { return block->shared.data(); }

void sync_block() {
  ++block->arrived;
  if (block->arrived == block->live) {
    release_block_if_complete();
    return;
  }
  running->state = FiberState::AtBlockBarrier;
  running->waiting_for = block->generation;
  switch_away();
}

void sync_warp() {
  Warp& w = block->warps[static_cast<size_t>(running->warp)];
  ++w.arrived;
  if (w.arrived == w.live) {
    release_warp_if_complete(w);
    return;
  }
  running->state = FiberState::AtWarpBarrier;
  running->waiting_for = w.generation;
  switch_away();
}

// Each lane writes its slot, all wait, each reads. Gather k+2 reuses gather k's buffer only
// after every lane has passed gather k+1's barrier, so after every lane has read gather k.
const uint64_t* warp_gather(uint64_t value) {
  Warp& w = block->warps[static_cast<size_t>(running->warp)];
  uint64_t* slots = w.slots[running->gathers++ & 1];
  slots[running->lane] = value;
  sync_warp();
  return slots;
}

void run_grid(dim3 grid, dim3 block_dim, std::size_t shared_bytes, const std::function<void()>& thread_body) {
  std::lock_guard lock(launch_mutex);
  const size_t threads = static_cast<size_t>(block_dim.x) * block_dim.y * block_dim.z;
  while (stacks.size() < threads) stacks.push_back(std::make_unique<FiberStack>(kStackBytes));
  Block b;
  b.body = &thread_body;
  // Shared memory starts as NaN bytes, so a kernel reading what no thread wrote shows it.
  b.shared.assign(shared_bytes + 16, 0xFF);
  b.fibers.resize(threads);
  b.warps.resize((threads + 31) / 32);
  size_t i = 0;
  for (unsigned z = 0; z < block_dim.z; ++z) {
    for (unsigned y = 0; y < block_dim.y; ++y) {
      for (unsigned x = 0; x < block_dim.x; ++x, ++i) {
        Fiber& f = b.fibers[i];
        f.thread.thread_idx = {x, y, z};
        f.thread.block_dim = block_dim;
        f.thread.grid_dim = grid;
        f.warp = static_cast<int>(i / 32);
        f.lane = static_cast<int>(i % 32);
      }
    }
  }
  block = &b;
  for (unsigned z = 0; z < grid.z; ++z) {
    for (unsigned y = 0; y < grid.y; ++y) {
      for (unsigned x = 0; x < grid.x; ++x) run_block(dim3(x, y, z));
    }
  }
  block = nullptr;
}

}  // namespace cuda_emulator
