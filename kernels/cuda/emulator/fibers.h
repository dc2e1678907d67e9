// Fibers for the CUDA emulator: one stack per emulated GPU thread and a context switch between
// them, so that a thread of a thread block can stop at __syncthreads() or a warp shuffle and let
// the others catch up. Cooperative and single-OS-thread: a fiber runs until it switches away.
// x86-64 System V only (the switch saves the callee-saved registers, MXCSR and the x87 control
// word).
#pragma once

#include <cstddef>

namespace cuda_emulator {

// A stack with a guard page below it (an overflow faults instead of overwriting a neighbour).
class FiberStack {
 public:
  explicit FiberStack(std::size_t bytes);
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  // The stack pointer a fiber starts from, such that switching to it calls entry() (which must
  // never return: it ends by switching away for good).
  void* start(void (*entry)());

 private:
  char* base_ = nullptr;  // the guard page, then the stack
  std::size_t bytes_ = 0;
};

// Saves the running context's stack pointer into *from and continues the context whose stack
// pointer is `to` (one returned by FiberStack::start, or saved by an earlier switch).
extern "C" void cuda_emulator_switch(void** from, void* to);

}  // namespace cuda_emulator
