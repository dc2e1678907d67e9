// Run-time CPU feature detection (cpuid + xgetbv) and the SIMD dispatch level the kernels use.
// Code built with -mavx2/-mavx512* lives in *_avx2.cpp / *_avx512.cpp files and is only
// called when the level below says the CPU and the OS support it.
#pragma once

namespace inferscope::kernels {

struct CpuFeatures {
  // Instruction sets reported by cpuid, already masked by what the OS saves (XCR0).
  bool sse42 = false;
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool avx_vnni = false;
  // AMX tiles: reported by cpuid, enabled in XCR0, and the kernel granted this process the
  // permission to use tile data (Linux arch_prctl ARCH_REQ_XCOMP_PERM).
  bool amx_tile = false;
  bool amx_int8 = false;
  bool amx_bf16 = false;
};

// Detected once (thread-safe) on first use.
const CpuFeatures& cpu_features();

// Dispatch levels, in increasing order. Avx2 = AVX2 + FMA + F16C. Avx512 = AVX-512
// F/BW/VL/DQ/VNNI (plus the Avx2 set). Amx = Avx512 + AVX512-BF16 + AMX tile/int8/bf16.
enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2, Amx = 3 };

const char* simd_level_name(SimdLevel level);
// Highest level this CPU and OS support.
SimdLevel detected_simd_level();
// Level the kernels use now (defaults to detected_simd_level()).
SimdLevel active_simd_level();
// Forces a level for tests and benchmarks; clamped to detected_simd_level(). Not meant to be
// changed while kernels run on other threads.
void set_simd_level(SimdLevel level);

}  // namespace inferscope::kernels
