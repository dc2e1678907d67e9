#include "kernels/cuda/emulator/fibers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cuda_emulator {

// The switch: push the callee-saved registers and the floating-point control words, swap stack
// pointers, pop the other context's. A fresh stack (FiberStack::start) holds the same frame,
// with entry() as the return address.
asm(R"(
  .text
  .globl cuda_emulator_switch
  .type cuda_emulator_switch,@function
cuda_emulator_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuda_emulator_switch,.-cuda_emulator_switch
  .section .note.GNU-stack,"",@progbits
  .text
)");

namespace {

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

FiberStack::FiberStack(std::size_t bytes) {
  const std::size_t page = page_size();
  bytes_ = (bytes + page - 1) / page * page + page;
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "cuda emulator: cannot map a fiber stack of %zu bytes\n", bytes_);
    std::abort();
  }
  base_ = static_cast<char*>(p);
  mprotect(base_, page, PROT_NONE);
}

FiberStack::~FiberStack() { munmap(base_, bytes_); }

// Frame, from the top (16-byte aligned) down: a zero "return address" of entry() (entry is
// entered by `ret`, so the stack pointer is then 8 mod 16, as after a call), entry's address,
// six zeroed registers, then MXCSR and the x87 control word of the caller.
void* FiberStack::start(void (*entry)()) {
  auto top = reinterpret_cast<uintptr_t>(base_ + bytes_) & ~uintptr_t{15};
  auto* slot = reinterpret_cast<uint64_t*>(top);
  *--slot = 0;
  *--slot = reinterpret_cast<uint64_t>(entry);
  for (int i = 0; i < 6; ++i) *--slot = 0;
  uint32_t mxcsr = 0;
  uint16_t x87 = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(x87));
  --slot;
  std::memcpy(reinterpret_cast<char*>(slot), &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(slot) + 4, &x87, 2);
  return slot;
}

}  // namespace cuda_emulator
