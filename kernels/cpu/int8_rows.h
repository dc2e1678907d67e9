// INT8 per output channel, our own weight format (docs/WEIGHT-LAB.md): each row of a matrix is
// stored as GGUF type I8 (one signed byte per weight) and the matrix has a companion F32 tensor
// "<name>.scale" with one scale per row; weight = scale * q, q in [-127, 127]. Other GGUF
// readers do not know the convention and will not run such a file.
// In memory the rows are re-blocked as Q8_0 (d = the row's scale, F16) so that every backend's
// int8 Q8_0 kernels multiply them.
#pragma once

#include <cstdint>

namespace inferscope::kernels {

// Symmetric per-row quantization: returns scale = max|x| / 127 (0 for a zero row) and writes
// q = round(x / scale) (half away from zero), n values.
float quantize_row_i8(const float* x, int8_t* q, int64_t n);

// One I8 row of n values (n % 32 == 0) and its scale as n / 32 Q8_0 blocks at dst.
void i8_row_as_q8_0(const int8_t* q, float scale, uint8_t* dst, int64_t n);

}  // namespace inferscope::kernels
