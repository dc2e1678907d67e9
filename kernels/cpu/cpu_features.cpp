// cpuid / xgetbv probing. Compiled for baseline x86-64, so it runs on any CPU.
#include "kernels/cpu/cpu_features.h"

#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace inferscope::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  // xgetbv without requiring -mxsave; only called when cpuid reports OSXSAVE.
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Linux keeps AMX tile data disabled per process until it is requested.
bool request_amx_permission() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr int kArchGetXcompPerm = 0x1022;
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  uint64_t bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) == 0 && (bitmask & (1ull << kXfeatureXtiledata))) {
    return true;
  }
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  bitmask = 0;
  return syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) == 0 && (bitmask & (1ull << kXfeatureXtiledata));
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.sse42 = (c >> 20) & 1;
  const bool osxsave = (c >> 27) & 1;
  const bool cpu_avx = (c >> 28) & 1;
  const bool cpu_fma = (c >> 12) & 1;
  const bool cpu_f16c = (c >> 29) & 1;
  if (!osxsave || !cpu_avx) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;            // SSE + AVX state
  const bool os_zmm = os_ymm && (xcr0 & 0xE0) == 0xE0;  // opmask + ZMM_Hi256 + Hi16_ZMM
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;     // XTILECFG + XTILEDATA
  if (!os_ymm) return f;
  f.avx = true;
  f.fma = cpu_fma;
  f.f16c = cpu_f16c;
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned ebx7 = b, ecx7 = c, edx7 = d;
  f.avx2 = (ebx7 >> 5) & 1;
  if (os_zmm) {
    f.avx512f = (ebx7 >> 16) & 1;
    f.avx512dq = (ebx7 >> 17) & 1;
    f.avx512bw = (ebx7 >> 30) & 1;
    f.avx512vl = (ebx7 >> 31) & 1;
    f.avx512vnni = (ecx7 >> 11) & 1;
  }
  __cpuid_count(7, 1, a, b, c, d);
  f.avx_vnni = (a >> 4) & 1;
  if (os_zmm) f.avx512bf16 = (a >> 5) & 1;
  const bool cpu_amx_bf16 = (edx7 >> 22) & 1;
  const bool cpu_amx_tile = (edx7 >> 24) & 1;
  const bool cpu_amx_int8 = (edx7 >> 25) & 1;
  if (os_amx && cpu_amx_tile && request_amx_permission()) {
    f.amx_tile = true;
    f.amx_int8 = cpu_amx_int8;
    f.amx_bf16 = cpu_amx_bf16;
  }
  return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

SimdLevel compute_level(const CpuFeatures& f) {
  if (!(f.avx2 && f.fma && f.f16c)) return SimdLevel::Scalar;
  if (!(f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni)) return SimdLevel::Avx2;
  if (!(f.avx512bf16 && f.amx_tile && f.amx_int8 && f.amx_bf16)) return SimdLevel::Avx512;
  return SimdLevel::Amx;
}

std::atomic<int> g_forced_level{-1};

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

const char* simd_level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::Scalar: return "scalar";
    case SimdLevel::Avx2: return "avx2";
    case SimdLevel::Avx512: return "avx512";
    case SimdLevel::Amx: return "amx";
  }
  return "?";
}

SimdLevel detected_simd_level() {
  static const SimdLevel level = compute_level(cpu_features());
  return level;
}

SimdLevel active_simd_level() {
  const int forced = g_forced_level.load(std::memory_order_relaxed);
  return forced < 0 ? detected_simd_level() : static_cast<SimdLevel>(forced);
}

void set_simd_level(SimdLevel level) {
  const SimdLevel max = detected_simd_level();
  if (static_cast<int>(level) > static_cast<int>(max)) level = max;
  g_forced_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

}  // namespace inferscope::kernels
