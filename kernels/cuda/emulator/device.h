// The device side of the CUDA emulator: what a kernel in kernels/cuda/*.cu may use, for those
// kernels to compile as C++ and run on the CPU (tests/cuda_emulated). Each emulated GPU thread is
// a fiber (fibers.h); the threads of a block run one after another on the calling OS thread,
// switching at __syncthreads() and at warp operations, so every thread of a block sees the
// others' shared-memory writes exactly where CUDA guarantees it. Blocks run one at a time.
//
// The subset: __global__/__device__/__shared__/__constant__, threadIdx, blockIdx, blockDim,
// gridDim, warpSize, __syncthreads, __syncwarp, __shfl_sync/_xor/_down/_up (values of up to 8
// bytes, full-warp masks), __ballot_sync, __any_sync, __all_sync, __dp4a, __ldg, atomicAdd,
// atomicMax, atomicCAS, fast-math intrinsics (__expf, __fdividef...), bit casts, and
// min/max of integers. Dynamic shared memory through INFERSCOPE_DYNAMIC_SHARED
// (kernels/cuda/launch.h). `__shared__` variables are function-local statics: kernels must not
// rely on them being zero.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __constant__
#define __launch_bounds__(...)

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct float2 {
  float x, y;
};
struct float4 {
  float x, y, z, w;
};
struct int2 {
  int x, y;
};
struct int4 {
  int x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }

namespace cuda_emulator {

struct ThreadState {
  uint3 thread_idx, block_idx;
  dim3 block_dim, grid_dim;
};

// The running emulated thread.
const ThreadState& current_thread();
// Waits until every live thread of the block arrives.
void sync_block();
// Waits until every live thread of the calling thread's warp arrives.
void sync_warp();
// Every live lane of the warp deposits `value`; returns the 32 deposits (a lane that does not
// exist or has exited leaves 0) once all have.
const uint64_t* warp_gather(uint64_t value);
// The calling thread's lane (0..31).
int lane_id();
// This launch's dynamic shared memory.
void* dynamic_shared();

template <class T>
uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "warp shuffles move values of up to 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

template <class T>
T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The value of lane `source` (itself when `source` is outside its width-lane segment).
template <class T>
T shuffle(T v, int source, int width) {
  const int lane = lane_id();
  const int base = lane - lane % width;
  const uint64_t* all = warp_gather(to_bits(v));
  if (source < base || source >= base + width) return v;
  return from_bits<T>(all[source]);
}

}  // namespace cuda_emulator

#define threadIdx (::cuda_emulator::current_thread().thread_idx)
#define blockIdx (::cuda_emulator::current_thread().block_idx)
#define blockDim (::cuda_emulator::current_thread().block_dim)
#define gridDim (::cuda_emulator::current_thread().grid_dim)
constexpr int warpSize = 32;

inline void __syncthreads() { cuda_emulator::sync_block(); }
inline void __syncwarp(unsigned = 0xffffffffu) { cuda_emulator::sync_warp(); }

template <class T>
T __shfl_sync(unsigned, T v, int src_lane, int width = 32) {
  const int lane = cuda_emulator::lane_id();
  return cuda_emulator::shuffle(v, lane - lane % width + src_lane % width, width);
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int lane_mask, int width = 32) {
  return cuda_emulator::shuffle(v, cuda_emulator::lane_id() ^ lane_mask, width);
}
template <class T>
T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
  return cuda_emulator::shuffle(v, cuda_emulator::lane_id() + static_cast<int>(delta), width);
}
template <class T>
T __shfl_up_sync(unsigned, T v, unsigned delta, int width = 32) {
  return cuda_emulator::shuffle(v, cuda_emulator::lane_id() - static_cast<int>(delta), width);
}
inline unsigned __ballot_sync(unsigned, int predicate) {
  const uint64_t* all = cuda_emulator::warp_gather(predicate != 0 ? 1 : 0);
  unsigned bits = 0;
  for (int i = 0; i < 32; ++i) bits |= static_cast<unsigned>(all[i]) << i;
  return bits;
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned mask, int predicate) { return __ballot_sync(mask, !predicate) == 0; }

// Four signed 8-bit products of a and b, summed, plus c.
inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; ++i) {
    c += static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * i)) * static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * i));
  }
  return c;
}

template <class T>
T __ldg(const T* p) {
  return *p;
}

// One block runs at a time, so atomics are plain read-modify-writes.
template <class T>
T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
template <class T>
T atomicMax(T* p, T v) {
  const T old = *p;
  if (v > old) *p = v;
  return old;
}
template <class T>
T atomicCAS(T* p, T compare, T v) {
  const T old = *p;
  if (old == compare) *p = v;
  return old;
}

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }  // x86-64 without FMA flags: never contracted
inline float __fadd_rn(float a, float b) { return a + b; }
inline int __float_as_int(float f) { return cuda_emulator::from_bits<int>(cuda_emulator::to_bits(f)); }
inline float __int_as_float(int i) { return cuda_emulator::from_bits<float>(cuda_emulator::to_bits(i)); }
inline unsigned __float_as_uint(float f) { return cuda_emulator::from_bits<unsigned>(cuda_emulator::to_bits(f)); }
inline float __uint_as_float(unsigned u) { return cuda_emulator::from_bits<float>(cuda_emulator::to_bits(u)); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }

// Correctly rounded division (nvcc's __fdiv_rn), for kernels that must match the CPU's bits.
inline float __fdiv_rn(float a, float b) { return a / b; }
