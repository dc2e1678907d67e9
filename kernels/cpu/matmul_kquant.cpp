// Super-block weight types with Q8_K activations: the activation packer, the scalar unpacking of
// every weight layout into the common form of matmul_kquant.h (written from GGUF-FORMATS.md
// 3.9-3.13, 3.17, 3.18; the i-quants from iquant_blocks.h), and the scalar reference product.
#include "kernels/cpu/matmul_kquant.h"

#include <cmath>
#include <cstring>

#include "kernels/cpu/iquant_blocks.h"
#include "kernels/formats/fp16.h"
#include "kernels/formats/k_quant_scales.h"

namespace inferscope::kernels::detail {
namespace {

// Q8_K rule (GGUF-FORMATS.md 3.14): the signed value of largest magnitude (first wins) sets
// iscale = -127 / max; q = min(127, nearest-even(iscale * x)); d = 1 / iscale.
float quantize_q8k_block(const float* x, int8_t* q) {
  float amax = 0.0f, max = 0.0f;
  for (int i = 0; i < 256; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax == 0.0f) {
    std::memset(q, 0, 256);
    return 0.0f;
  }
  const float iscale = -127.0f / max;
  for (int i = 0; i < 256; ++i) {
    const float v = std::nearbyint(iscale * x[i]);
    q[i] = static_cast<int8_t>(v > 127.0f ? 127.0f : v);
  }
  return 1.0f / iscale;
}

// Expands one int16 per sub-block to the per-pair multipliers.
void spread_scales(const int sc[16], UnpackedBlock* out) {
  for (int i = 0; i < 128; ++i) out->sc_pairs[i] = static_cast<int16_t>(sc[i / 8]);
}

// 2-bit field shared by Q2_K, Q3_K and TQ2_0: byte qs[32h + l] holds elements 128h + 32j + l.
int two_bits(const uint8_t* qs, int e) {
  const int h = e / 128, r = e % 128;
  return (qs[32 * h + r % 32] >> (2 * (r / 32))) & 3;
}

int high_bit(const uint8_t* bits, int e) { return (bits[e % 32] >> (e / 32)) & 1; }

void unpack_q2_k(const uint8_t* blk, UnpackedBlock* out) {
  int sc[16], mn[16];
  for (int s = 0; s < 16; ++s) {
    sc[s] = blk[s] & 15;
    mn[s] = blk[s] >> 4;
  }
  for (int e = 0; e < 256; ++e) out->u[e] = static_cast<uint8_t>(two_bits(blk + 16, e));
  spread_scales(sc, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = static_cast<int16_t>(mn[s]);
  out->d = fp16_to_fp32(load_u16(blk + 80));
  out->dmin = fp16_to_fp32(load_u16(blk + 82));
}

// q = lo + 4 * hb - 4: u = lo + 4 * hb, mn = 4 * sc.
void unpack_q3_k(const uint8_t* blk, UnpackedBlock* out) {
  const uint8_t* scales = blk + 96;
  int sc[16];
  for (int s = 0; s < 16; ++s) {
    const int low4 = s < 8 ? (scales[s] & 15) : (scales[s - 8] >> 4);
    const int high2 = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    sc[s] = (low4 | (high2 << 4)) - 32;
  }
  for (int e = 0; e < 256; ++e) out->u[e] = static_cast<uint8_t>(two_bits(blk + 32, e) + 4 * high_bit(blk, e));
  spread_scales(sc, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = static_cast<int16_t>(4 * sc[s]);
  out->d = fp16_to_fp32(load_u16(blk + 108));
  out->dmin = 0.0f;
}

// The low 4 bits of Q4_K / Q5_K element e: byte qs[32c + l] holds 64c + l (low) and 64c + 32 + l.
int low_nibble_k(const uint8_t* qs, int e) {
  const int c = e / 64, r = e % 64;
  const uint8_t byte = qs[32 * c + r % 32];
  return r < 32 ? (byte & 15) : (byte >> 4);
}

void unpack_scale_min_head(const uint8_t* blk, UnpackedBlock* out) {
  int sc[16], mn[16];
  for (int s = 0; s < 8; ++s) {
    scale_min_k4(blk + 4, s, sc[2 * s], mn[2 * s]);
    sc[2 * s + 1] = sc[2 * s];
    mn[2 * s + 1] = mn[2 * s];
  }
  spread_scales(sc, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = static_cast<int16_t>(mn[s]);
  out->d = fp16_to_fp32(load_u16(blk));
  out->dmin = fp16_to_fp32(load_u16(blk + 2));
}

void unpack_q4_k(const uint8_t* blk, UnpackedBlock* out) {
  unpack_scale_min_head(blk, out);
  for (int e = 0; e < 256; ++e) out->u[e] = static_cast<uint8_t>(low_nibble_k(blk + 16, e));
}

void unpack_q5_k(const uint8_t* blk, UnpackedBlock* out) {
  unpack_scale_min_head(blk, out);
  for (int e = 0; e < 256; ++e) {
    out->u[e] = static_cast<uint8_t>(low_nibble_k(blk + 48, e) + 16 * high_bit(blk + 16, e));
  }
}

// q = u - 32 with u the 6-bit value: mn = 32 * sc.
void unpack_q6_k(const uint8_t* blk, UnpackedBlock* out) {
  const uint8_t* ql = blk;
  const uint8_t* qh = blk + 128;
  int sc[16];
  for (int s = 0; s < 16; ++s) sc[s] = static_cast<int8_t>(blk[192 + s]);
  for (int e = 0; e < 256; ++e) {
    const int h = e / 128, r = e % 128, g = r / 32, l = r % 32;
    const uint8_t lbyte = ql[64 * h + (g % 2) * 32 + l];
    const int low4 = g < 2 ? (lbyte & 15) : (lbyte >> 4);
    const int high2 = (qh[32 * h + l] >> (2 * g)) & 3;
    out->u[e] = static_cast<uint8_t>(low4 | (high2 << 4));
  }
  spread_scales(sc, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = static_cast<int16_t>(32 * sc[s]);
  out->d = fp16_to_fp32(load_u16(blk + 208));
  out->dmin = 0.0f;
}

// Ternary digit n (0 = most significant) of a TQ1_0 byte (GGUF-FORMATS.md 3.17).
int trit(uint8_t v, int n) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const uint8_t prod = static_cast<uint8_t>(v * kPow3[n]);
  return (static_cast<int>(prod) * 3) >> 8;
}

// q = t - 1: u = t, sc = mn = 1.
void unpack_tq1_0(const uint8_t* blk, UnpackedBlock* out) {
  const uint8_t* qs = blk;
  const uint8_t* qh = blk + 48;
  for (int e = 0; e < 256; ++e) {
    int t;
    if (e < 160) {
      t = trit(qs[e % 32], e / 32);
    } else if (e < 240) {
      t = trit(qs[32 + (e - 160) % 16], (e - 160) / 16);
    } else {
      t = trit(qh[(e - 240) % 4], (e - 240) / 4);
    }
    out->u[e] = static_cast<uint8_t>(t);
  }
  const int ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  spread_scales(ones, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = 1;
  out->d = fp16_to_fp32(load_u16(blk + 52));
  out->dmin = 0.0f;
}

// The i-quants through their integer form (iquant_blocks.h): x = unit * scale * v with
// u = v + offset, sc = scale, mn = scale * offset, d = unit.
void unpack_iq(GgmlType w, const uint8_t* blk, UnpackedBlock* out) {
  IqIntBlock b;
  read_iq_block(w, blk, &b);
  const int offset = iq_max_level(w);
  for (int e = 0; e < 256; ++e) out->u[e] = static_cast<uint8_t>(b.v[e] + offset);
  spread_scales(b.scale, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = static_cast<int16_t>(b.scale[s] * offset);
  out->d = b.unit;
  out->dmin = 0.0f;
}

void unpack_tq2_0(const uint8_t* blk, UnpackedBlock* out) {
  for (int e = 0; e < 256; ++e) out->u[e] = static_cast<uint8_t>(two_bits(blk, e));
  const int ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  spread_scales(ones, out);
  for (int s = 0; s < 16; ++s) out->mn[s] = 1;
  out->d = fp16_to_fp32(load_u16(blk + 64));
  out->dmin = 0.0f;
}

// Integer block terms of one unpacked weight block with one activation block.
struct BlockTerms {
  int64_t scaled_dot;  // sum_s sc[s] * dot_s(u, qa)
  int64_t min_dot;     // sum_s mn[s] * bsum_s
};

BlockTerms block_terms(const UnpackedBlock& w, const int8_t* qa, const int16_t* bsums) {
  BlockTerms t{0, 0};
  for (int s = 0; s < 16; ++s) {
    int64_t dot = 0;
    for (int j = 0; j < 16; ++j) dot += static_cast<int64_t>(w.u[16 * s + j]) * qa[16 * s + j];
    t.scaled_dot += w.sc_pairs[8 * s] * dot;
    t.min_dot += static_cast<int64_t>(w.mn[s]) * bsums[s];
  }
  return t;
}

}  // namespace

void unpack_block_scalar(GgmlType w, const uint8_t* row, int64_t b, UnpackedBlock* out) {
  const uint8_t* blk = row + b * type_info(w).type_size;
  switch (w) {
    case GgmlType::Q2_K: unpack_q2_k(blk, out); break;
    case GgmlType::Q3_K: unpack_q3_k(blk, out); break;
    case GgmlType::Q4_K: unpack_q4_k(blk, out); break;
    case GgmlType::Q5_K: unpack_q5_k(blk, out); break;
    case GgmlType::Q6_K: unpack_q6_k(blk, out); break;
    case GgmlType::TQ1_0: unpack_tq1_0(blk, out); break;
    case GgmlType::TQ2_0: unpack_tq2_0(blk, out); break;
    default:
      if (is_iq_block_type(w)) unpack_iq(w, blk, out);
      break;
  }
}

void pack_q8k(const float* x, int64_t k, uint8_t* packed, int64_t t_begin, int64_t t_end) {
  const Q8KLayout l = q8k_layout(k);
  for (int64_t t = t_begin; t < t_end; ++t) {
    uint8_t* row = packed + t * l.row_stride;
    auto* qs = reinterpret_cast<int8_t*>(row);
    auto* d = reinterpret_cast<float*>(row + l.d_offset);
    auto* bsums = reinterpret_cast<int16_t*>(row + l.bsums_offset);
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      d[b] = quantize_q8k_block(x + t * k + b * kSuperBlock, qs + b * kSuperBlock);
    }
    for (int64_t s = 0; s < k / 16; ++s) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += qs[16 * s + j];
      bsums[s] = static_cast<int16_t>(sum);
    }
    std::memset(qs + k, 0, static_cast<size_t>(l.d_offset - k));
  }
}

void matmul_kquant_reference(const MatmulArgs& a) {
  const Q8KLayout l = q8k_layout(a.k);
  const bool float_min = has_float_min(a.type);
  auto* sums = static_cast<double*>(thread_scratch(2, static_cast<size_t>(a.n_tokens) * sizeof(double)));
  UnpackedBlock w;
  for (int64_t r = a.row_begin; r < a.row_end; ++r) {
    const uint8_t* row = a.w + r * a.row_bytes;
    for (int64_t t = 0; t < a.n_tokens; ++t) sums[t] = 0.0;
    for (int64_t b = 0; b < l.n_blocks; ++b) {
      unpack_block_scalar(a.type, row, b, &w);
      const double dmin = float_min ? static_cast<double>(w.dmin) : static_cast<double>(w.d);
      for (int64_t t = 0; t < a.n_tokens; ++t) {
        const uint8_t* act = a.packed + t * l.row_stride;
        const auto* qa = reinterpret_cast<const int8_t*>(act) + b * kSuperBlock;
        const auto* bsums = reinterpret_cast<const int16_t*>(act + l.bsums_offset) + 16 * b;
        const double da = reinterpret_cast<const float*>(act + l.d_offset)[b];
        const BlockTerms bt = block_terms(w, qa, bsums);
        sums[t] += da * (static_cast<double>(w.d) * static_cast<double>(bt.scaled_dot) -
                         dmin * static_cast<double>(bt.min_dot));
      }
    }
    for (int64_t t = 0; t < a.n_tokens; ++t) a.y[t * a.y_stride + r] = static_cast<float>(sums[t]);
  }
}

}  // namespace inferscope::kernels::detail
