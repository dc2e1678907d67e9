// Random matmul inputs for the kernel tests: quantized weight rows, activations with outliers,
// and their decoded / packed forms.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/formats/ggml_type.h"

namespace inferscope::testing {

struct MatmulProblem {
  kernels::GgmlType type;
  int64_t k, rows, n_tokens;
  std::vector<uint8_t> weights;  // rows of row_bytes(type, k)
  std::vector<float> w_float;    // the weights decoded bit-exactly
  std::vector<float> x;          // [n_tokens][k]
  std::vector<uint8_t> packed;   // pack_activations(type, x)
};

// n_tokens rows of k normal values, a random scale in [0.25, 4] per token and every 97th value
// x20 (outliers, as in real activations).
std::vector<float> random_activations(int64_t k, int64_t n_tokens, std::mt19937& rng);

// `rows` rows of normal values at different magnitudes, quantized to `type`; rows with
// r % zero_period == zero_phase start with zero_len zeros (an all-zero block).
std::vector<uint8_t> random_quantized_rows(kernels::GgmlType type, int64_t k, int64_t rows, std::mt19937& rng,
                                           int64_t zero_period, int64_t zero_phase, int64_t zero_len);

// `rows` rows of uniformly random super-blocks of an i-quant (IQ1_S..IQ3_S, IQ4_XS: every grid
// index, sign and scale bit pattern, including those no quantizer writes) with finite F16
// super-block scales (normal, sigma 1e-3; IQ1_M's in the top nibbles of its scale words).
std::vector<uint8_t> random_iq_rows(kernels::GgmlType type, int64_t k, int64_t rows, std::mt19937& rng);

// Writes F16 d as IQ1_M's super-block scale: nibble i of d tops scale word i (bytes 48..55).
void set_iq1_m_unit(uint8_t* block, uint16_t d);

// Fills w_float (dequantized weights) and packed (packed x) from weights and x.
void decode_and_pack(MatmulProblem& p);

}  // namespace inferscope::testing
