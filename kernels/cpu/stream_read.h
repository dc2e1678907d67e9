// A streaming read of a float buffer at full vector width, for memory-bandwidth measurement.
#pragma once

#include <cstddef>

namespace inferscope::kernels {

// Sum of n floats (order unspecified); reads every byte once with the widest loads available.
float stream_sum(const float* p, size_t n);

namespace detail {
float stream_sum_avx2(const float* p, size_t n);
float stream_sum_avx512(const float* p, size_t n);
}  // namespace detail

}  // namespace inferscope::kernels
