// Block encoders, the inverse of dequantize_blocks.cpp. The K-quants fit every sub-block by a
// small search over scales followed by a least-squares refit (the idea of llama.cpp's
// make_qkx2_quants / make_qx_quants, written here from the format: minimize the plain squared
// error of the decoded values), then quantize the sub-block scales to the super-block's integer
// grid and requantize every value against the scales the decoder will actually use.
#include "kernels/cpu/quantize_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/formats/e8m0.h"
#include "kernels/formats/fp16.h"

namespace inferscope::kernels::detail {
namespace {

constexpr int64_t kQK = 32;
constexpr int64_t kQKK = 256;
// Scale candidates tried per sub-block: the range maps to nmax + kStepSize * step levels,
// step in [-kSearchSteps, kSearchSteps] (nmax - 1 .. nmax + 1). Finer steps gain < 0.5% RMSE.
constexpr int kSearchSteps = 5;
constexpr float kStepSize = 0.2f;

inline void store_f16(uint8_t* p, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(p, &h, 2);
}

// Round to nearest (ties to even) for |v| < 2^22, without a libm call.
inline int nearest_int(float v) {
  const float shifted = v + 12582912.0f;  // 1.5 * 2^23: the integer lands in the low mantissa bits
  int32_t bits;
  std::memcpy(&bits, &shifted, 4);
  return (bits & 0x007FFFFF) - 0x00400000;
}

inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Round to nearest (ties to even) for |v| < 2^22, staying in float so that loops vectorize.
inline float round_float(float v) { return (v + 12582912.0f) - 12582912.0f; }

// The weight of each of a block's n values in an importance-weighted fit: the column's
// importance (an imatrix's mean squared activation) times sqrt(sigma2 + x^2), sigma2 = 2 mean(x^2),
// so that within a column larger weights count more (the weighting llama.cpp's quantizers use).
// Returns w, or null when importance is null (an unweighted fit).
const float* element_weights(const float* x, const float* importance, int n, float* w) {
  if (importance == nullptr) return nullptr;
  double sum_xx = 0.0;
  for (int i = 0; i < n; ++i) sum_xx += static_cast<double>(x[i]) * x[i];
  const float sigma2 = static_cast<float>(2.0 * sum_xx / n);
  for (int i = 0; i < n; ++i) w[i] = importance[i] * std::sqrt(sigma2 + x[i] * x[i]);
  return w;
}

// ---- sub-block fits --------------------------------------------------------------------------

// Sums over a sub-block of n values (n % 4 == 0) for candidate integer levels q (held as floats):
// four interleaved partial sums, so that the additions do not wait on one another.
struct LevelSums {
  double sq = 0.0, sqq = 0.0, sqx = 0.0;
};

// With weights w (importance-weighted fits, w_i >= 0; null: all 1), each sum is of w_i times
// its term.
LevelSums level_sums(const float* x, const float* q, int n, const float* w) {
  if (w != nullptr) {
    double sq = 0.0, sqq = 0.0, sqx = 0.0;
    for (int i = 0; i < n; ++i) {
      sq += static_cast<double>(w[i]) * q[i];
      sqq += static_cast<double>(w[i]) * q[i] * q[i];
      sqx += static_cast<double>(w[i]) * q[i] * x[i];
    }
    return {sq, sqq, sqx};
  }
  float sq[4] = {}, sqq[4] = {}, sqx[4] = {};
  for (int i = 0; i < n; i += 4) {
    for (int k = 0; k < 4; ++k) {
      sq[k] += q[i + k];
      sqq[k] += q[i + k] * q[i + k];
      sqx[k] += q[i + k] * x[i + k];
    }
  }
  return {static_cast<double>((sq[0] + sq[1]) + (sq[2] + sq[3])),
          static_cast<double>((sqq[0] + sqq[1]) + (sqq[2] + sqq[3])),
          static_cast<double>((sqx[0] + sqx[1]) + (sqx[2] + sqx[3]))};
}

// x ~ scale * q - min, integer q in [0, nmax], scale >= 0, min >= 0 (the K-quant sub-block form:
// the decoder subtracts an unsigned min). n <= 32, n % 4 == 0.
struct AffineFit {
  float scale = 0.0f;
  float min = 0.0f;
};

AffineFit fit_affine(const float* x, int n, int nmax, const float* w) {
  float lo = x[0], hi = x[0];
  double sw = w ? 0.0 : n, sx = 0.0, sxx = 0.0;
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    const double wi = w ? w[i] : 1.0;
    if (w) sw += wi;
    sx += wi * x[i];
    sxx += wi * x[i] * x[i];
  }
  lo = std::min(lo, 0.0f);
  if (hi <= lo) return {0.0f, -lo};
  AffineFit best{(hi - lo) / static_cast<float>(nmax), -lo};
  double best_err = std::numeric_limits<double>::infinity();
  const float top = static_cast<float>(nmax);
  float q[32];
  for (int step = -kSearchSteps; step <= kSearchSteps; ++step) {
    const float iscale = (top + kStepSize * static_cast<float>(step)) / (hi - lo);
    for (int i = 0; i < n; ++i) q[i] = std::min(top, static_cast<float>(static_cast<int>((x[i] - lo) * iscale + 0.5f)));
    const LevelSums s = level_sums(x, q, n, w);
    // Least squares for x ~ a * q + b, with b <= 0 enforced by refitting a alone.
    const double det = sw * s.sqq - s.sq * s.sq;
    if (det <= 0.0) continue;
    double a = (sw * s.sqx - s.sq * sx) / det;
    double b = (sx - a * s.sq) / sw;
    if (b > 0.0) {
      b = 0.0;
      a = s.sqx / s.sqq;
    }
    if (a <= 0.0) continue;
    const double err = sxx - 2 * a * s.sqx - 2 * b * sx + a * a * s.sqq + 2 * a * b * s.sq + sw * b * b;
    if (err < best_err) {
      best_err = err;
      best = {static_cast<float>(a), static_cast<float>(-b)};
    }
  }
  return best;
}

// x ~ scale * q, integer q in [-nneg, nneg - 1]; the scale may be negative so that the value of
// largest magnitude lands on the longer negative side (mapping it to the positive side instead
// was measured to gain < 2% RMSE on Q6_K and nothing on Q3_K, for twice the time). n <= 16.
float fit_symmetric(const float* x, int n, int nneg, const float* w) {
  float amax = 0.0f, signed_max = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      signed_max = x[i];
    }
  }
  if (amax == 0.0f) return 0.0f;
  float best_scale = signed_max / static_cast<float>(-nneg);
  double best_gain = -1.0;  // (sum q*x)^2 / sum q^2: the error is sum x^2 minus this
  float q[16];
  const float bottom = -static_cast<float>(nneg), top = static_cast<float>(nneg - 1);
  for (int step = -kSearchSteps; step <= kSearchSteps; ++step) {
    const float iscale = (bottom - kStepSize * static_cast<float>(step)) / signed_max;
    for (int i = 0; i < n; ++i) q[i] = std::min(top, std::max(bottom, round_float(x[i] * iscale)));
    const LevelSums s = level_sums(x, q, n, w);
    if (s.sqq == 0.0) continue;
    const double gain = s.sqx * s.sqx / s.sqq;
    if (gain > best_gain) {
      best_gain = gain;
      best_scale = static_cast<float>(s.sqx / s.sqq);
    }
  }
  return best_scale;
}

// ---- super-blocks with unsigned sub-scales and mins (Q2_K, Q4_K, Q5_K) ------------------------

// Quantized super-block of `n_sub` sub-blocks of `sub` values: integer scales/mins in [0, smax]
// and values q in [0, nmax]; d and dmin are the f16-rounded super-block factors.
struct AffineSuperBlock {
  float d = 0.0f, dmin = 0.0f;
  uint8_t sc[16] = {}, mn[16] = {};
  uint8_t q[kQKK] = {};
};

AffineSuperBlock quantize_affine_superblock(const float* x, int n_sub, int sub, int nmax, int smax, const float* w) {
  AffineFit fits[16];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int s = 0; s < n_sub; ++s) {
    fits[s] = fit_affine(x + s * sub, sub, nmax, w ? w + s * sub : nullptr);
    max_scale = std::max(max_scale, fits[s].scale);
    max_min = std::max(max_min, fits[s].min);
  }
  AffineSuperBlock out;
  out.d = round_to_fp16(max_scale / static_cast<float>(smax));
  out.dmin = round_to_fp16(max_min / static_cast<float>(smax));
  for (int s = 0; s < n_sub; ++s) {
    out.sc[s] = static_cast<uint8_t>(out.d > 0 ? clamp_int(nearest_int(fits[s].scale / out.d), 0, smax) : 0);
    out.mn[s] = static_cast<uint8_t>(out.dmin > 0 ? clamp_int(nearest_int(fits[s].min / out.dmin), 0, smax) : 0);
    // Requantize against the decoder's own factors.
    const float dl = out.d * static_cast<float>(out.sc[s]);
    const float ml = out.dmin * static_cast<float>(out.mn[s]);
    for (int i = 0; i < sub; ++i) {
      const int e = s * sub + i;
      out.q[e] = static_cast<uint8_t>(dl > 0 ? clamp_int(nearest_int((x[e] + ml) / dl), 0, nmax) : 0);
    }
  }
  return out;
}

// ---- super-blocks with signed sub-scales (Q3_K, Q6_K) ------------------------------------------

// 16 sub-blocks of 16 values: integer scales in [-smin, smin - 1], values in [-nneg, nneg - 1].
struct SymmetricSuperBlock {
  float d = 0.0f;
  int sc[16] = {};
  int q[kQKK] = {};
};

SymmetricSuperBlock quantize_symmetric_superblock(const float* x, int nneg, int smin, const float* w) {
  float scales[16];
  float max_scale = 0.0f, amax = 0.0f;
  for (int s = 0; s < 16; ++s) {
    scales[s] = fit_symmetric(x + 16 * s, 16, nneg, w ? w + 16 * s : nullptr);
    if (std::fabs(scales[s]) > amax) {
      amax = std::fabs(scales[s]);
      max_scale = scales[s];
    }
  }
  SymmetricSuperBlock out;
  if (amax == 0.0f) return out;
  const float iscale = -static_cast<float>(smin) / max_scale;
  out.d = round_to_fp16(1.0f / iscale);
  for (int s = 0; s < 16; ++s) {
    out.sc[s] = clamp_int(nearest_int(scales[s] / out.d), -smin, smin - 1);
    const float dl = out.d * static_cast<float>(out.sc[s]);
    for (int i = 0; i < 16; ++i) {
      const int e = 16 * s + i;
      out.q[e] = dl != 0.0f ? clamp_int(nearest_int(x[e] / dl), -nneg, nneg - 1) : 0;
    }
  }
  return out;
}

// ---- bit packing, mirrors of the decoder's index arithmetic ------------------------------------

// 2-bit fields of Q2_K / Q3_K / TQ2_0: element e lives in byte 32*(e/128) + e%32, bits 2*((e%128)/32).
inline void put_2bit(uint8_t* qs, int e, int v) {
  const int h = e / 128, r = e % 128;
  qs[32 * h + r % 32] |= static_cast<uint8_t>(v << (2 * (r / 32)));
}

// 4-bit fields of Q4_K / Q5_K: 64-element chunks of 32 bytes, low nibbles first.
inline void put_nibble_k(uint8_t* qs, int e, int v) {
  const int c = e / 64, r = e % 64;
  qs[32 * c + r % 32] |= static_cast<uint8_t>(r < 32 ? v : v << 4);
}

// Q4_K / Q5_K 12-byte scale/min table (6 bits each; the inverse of scale_min_k4).
void pack_scale_min_k4(const uint8_t* sc, const uint8_t* mn, uint8_t* scales) {
  for (int s = 0; s < 4; ++s) {
    scales[s] = static_cast<uint8_t>(sc[s] | ((sc[s + 4] >> 4) << 6));
    scales[s + 4] = static_cast<uint8_t>(mn[s] | ((mn[s + 4] >> 4) << 6));
    scales[s + 8] = static_cast<uint8_t>((sc[s + 4] & 15) | ((mn[s + 4] & 15) << 4));
  }
}

// Q4_0-style blocks of 32: the value of largest magnitude (first one wins) and the min/max.
struct BlockRange {
  float signed_max = 0.0f;
  float min = std::numeric_limits<float>::max();
  float max = -std::numeric_limits<float>::max();
};

BlockRange range_of(const float* x) {
  BlockRange r;
  float amax = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      r.signed_max = x[j];
    }
    r.min = std::min(r.min, x[j]);
    r.max = std::max(r.max, x[j]);
  }
  return r;
}

// Q5_0 / Q5_1 tail: 5-bit values -> 4 bytes of high bits + 16 bytes of nibbles.
void pack_q5(const uint8_t* v, uint8_t* qh_dst, uint8_t* qs) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((v[j] & 0x0F) | ((v[j + 16] & 0x0F) << 4));
    qh |= static_cast<uint32_t>((v[j] >> 4) & 1) << j;
    qh |= static_cast<uint32_t>((v[j + 16] >> 4) & 1) << (j + 16);
  }
  const uint8_t bytes[4] = {static_cast<uint8_t>(qh), static_cast<uint8_t>(qh >> 8),
                            static_cast<uint8_t>(qh >> 16), static_cast<uint8_t>(qh >> 24)};
  std::memcpy(qh_dst, bytes, 4);
}

constexpr int8_t kIq4nlTable[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                    1,    13,   25,  38,  53,  69,  89,  113};

// Index of the table entry nearest to v (ties to the lower entry).
inline int nearest_iq4nl(float v) {
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (v < static_cast<float>(kIq4nlTable[mid])) hi = mid; else lo = mid;
  }
  return v - static_cast<float>(kIq4nlTable[lo]) <= static_cast<float>(kIq4nlTable[hi]) - v ? lo : hi;
}

// nearest_iq4nl of every integer in [-128, 127] (index + 128): the scale search rounds to the
// integer grid first, which is exact enough to rank candidates and much faster.
struct Iq4nlLookup {
  uint8_t index[256];
  Iq4nlLookup() {
    for (int v = -128; v < 128; ++v) index[v + 128] = static_cast<uint8_t>(nearest_iq4nl(static_cast<float>(v)));
  }
  int operator()(float v) const { return index[clamp_int(nearest_int(v), -128, 127) + 128]; }
};

// The scale of an IQ4_NL block: candidates map the value of largest magnitude near the table's
// -127 end, one table unit apart (the longer side; the +113 end gained < 2% RMSE for twice the
// time; steps of two units cost stories260K 2% more KL), each refit by least squares over the
// chosen table entries.
constexpr int kIq4nlSteps = 7;
float fit_iq4nl(const float* x, const float* w) {
  static const Iq4nlLookup approx_nearest;
  const float signed_max = range_of(x).signed_max;
  if (signed_max == 0.0f) return 0.0f;
  float d = 0.0f;
  double best_gain = -1.0;
  float t[kQK];
  for (int step = -kIq4nlSteps; step <= kIq4nlSteps; ++step) {
    const float iscale = (kIq4nlTable[0] + static_cast<float>(step)) / signed_max;
    for (int j = 0; j < kQK; ++j) t[j] = kIq4nlTable[approx_nearest(x[j] * iscale)];
    const LevelSums s = level_sums(x, t, kQK, w);
    const double gain = s.sqx * s.sqx / s.sqq;
    if (gain > best_gain) {
      best_gain = gain;
      d = static_cast<float>(s.sqx / s.sqq);
    }
  }
  return d;
}

// Ternary super-block: the least-squares optimum. With q in {-1, 0, 1} and one scale d, the best
// choice gives +-1 to the k largest magnitudes and d = their mean magnitude; k maximizes
// (sum of those k)^2 / k. Returns d (f16-rounded) and writes the trits t = q + 1.
float quantize_ternary(const float* x, uint8_t* t) {
  float mag[kQKK];
  for (int e = 0; e < kQKK; ++e) mag[e] = std::fabs(x[e]);
  std::sort(mag, mag + kQKK, [](float a, float b) { return a > b; });
  double sum = 0.0, best_gain = 0.0;
  float d = 0.0f;
  for (int k = 1; k <= kQKK; ++k) {
    sum += mag[k - 1];
    const double gain = sum * sum / k;
    if (gain > best_gain) {
      best_gain = gain;
      d = static_cast<float>(sum / k);
    }
  }
  d = round_to_fp16(d);
  for (int e = 0; e < kQKK; ++e) {
    // Nearest of {-d, 0, d}: the threshold is d/2.
    t[e] = d > 0.0f && std::fabs(x[e]) > 0.5f * d ? (x[e] > 0 ? 2 : 0) : 1;
  }
  return d;
}

// Five trits in one byte (TQ1_0): the base-3 number t0 t1 t2 t3 t4 (t0 most significant) scaled
// to 256/243 with ceiling division, so that the decoder's (byte * 3^p * 3) >> 8 reads trit p.
inline uint8_t pack_trits(const int* t) {
  int v = 0;
  for (int p = 0; p < 5; ++p) v = v * 3 + t[p];
  return static_cast<uint8_t>((v * 256 + 242) / 243);
}

}  // namespace

void quantize_q4_1(const float* src, uint8_t* dst, int64_t n, const float* /*importance*/) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    uint8_t* block = dst + b * 20;
    const BlockRange r = range_of(x);
    const float d = (r.max - r.min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(block, d);
    store_f16(block + 2, r.min);
    for (int j = 0; j < 16; ++j) {
      // Truncation of a non-negative value (+0.5 rounds), clamped to 15.
      const int lo = std::min(15, static_cast<int>((x[j] - r.min) * id + 0.5f));
      const int hi = std::min(15, static_cast<int>((x[j + 16] - r.min) * id + 0.5f));
      block[4 + j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_q5_0(const float* src, uint8_t* dst, int64_t n, const float* /*importance*/) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    uint8_t* block = dst + b * 22;
    const float d = range_of(x).signed_max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(block, d);
    uint8_t v[kQK];
    for (int j = 0; j < kQK; ++j) {
      const float a = x[j] * id + 16.5f;
      v[j] = static_cast<uint8_t>(a >= 31.0f ? 31 : (a > 0.0f ? static_cast<int>(a) : 0));
    }
    pack_q5(v, block + 2, block + 6);
  }
}

void quantize_q5_1(const float* src, uint8_t* dst, int64_t n, const float* /*importance*/) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    uint8_t* block = dst + b * 24;
    const BlockRange r = range_of(x);
    const float d = (r.max - r.min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(block, d);
    store_f16(block + 2, r.min);
    uint8_t v[kQK];
    for (int j = 0; j < kQK; ++j) v[j] = static_cast<uint8_t>((x[j] - r.min) * id + 0.5f);
    pack_q5(v, block + 4, block + 8);
  }
}

void quantize_q2_k(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* weights = element_weights(src + b * kQKK, importance ? importance + b * kQKK : nullptr, kQKK, w);
    uint8_t* block = dst + b * 84;
    std::memset(block, 0, 84);
    const AffineSuperBlock sb = quantize_affine_superblock(src + b * kQKK, 16, 16, 3, 15, weights);
    for (int s = 0; s < 16; ++s) block[s] = static_cast<uint8_t>(sb.sc[s] | (sb.mn[s] << 4));
    for (int e = 0; e < kQKK; ++e) put_2bit(block + 16, e, sb.q[e]);
    store_f16(block + 80, sb.d);
    store_f16(block + 82, sb.dmin);
  }
}

void quantize_q3_k(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* weights = element_weights(src + b * kQKK, importance ? importance + b * kQKK : nullptr, kQKK, w);
    uint8_t* block = dst + b * 110;
    std::memset(block, 0, 110);
    const SymmetricSuperBlock sb = quantize_symmetric_superblock(src + b * kQKK, 4, 32, weights);
    uint8_t* hmask = block;
    uint8_t* qs = block + 32;
    uint8_t* scales = block + 96;
    for (int e = 0; e < kQKK; ++e) {
      const int u = sb.q[e] + 4;  // 0..7: bit 2 goes to hmask
      put_2bit(qs, e, u & 3);
      hmask[e % 32] |= static_cast<uint8_t>((u >> 2) << (e / 32));
    }
    for (int s = 0; s < 16; ++s) {
      const int v = sb.sc[s] + 32;
      scales[s % 8] |= static_cast<uint8_t>((v & 15) << (s < 8 ? 0 : 4));
      scales[8 + s % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (s / 4)));
    }
    store_f16(block + 108, sb.d);
  }
}

void quantize_q4_k(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* weights = element_weights(src + b * kQKK, importance ? importance + b * kQKK : nullptr, kQKK, w);
    uint8_t* block = dst + b * 144;
    std::memset(block, 0, 144);
    const AffineSuperBlock sb = quantize_affine_superblock(src + b * kQKK, 8, 32, 15, 63, weights);
    store_f16(block, sb.d);
    store_f16(block + 2, sb.dmin);
    pack_scale_min_k4(sb.sc, sb.mn, block + 4);
    for (int e = 0; e < kQKK; ++e) put_nibble_k(block + 16, e, sb.q[e]);
  }
}

void quantize_q5_k(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* weights = element_weights(src + b * kQKK, importance ? importance + b * kQKK : nullptr, kQKK, w);
    uint8_t* block = dst + b * 176;
    std::memset(block, 0, 176);
    const AffineSuperBlock sb = quantize_affine_superblock(src + b * kQKK, 8, 32, 31, 63, weights);
    store_f16(block, sb.d);
    store_f16(block + 2, sb.dmin);
    pack_scale_min_k4(sb.sc, sb.mn, block + 4);
    uint8_t* qh = block + 16;
    for (int e = 0; e < kQKK; ++e) {
      put_nibble_k(block + 48, e, sb.q[e] & 15);
      qh[e % 32] |= static_cast<uint8_t>((sb.q[e] >> 4) << (e / 32));
    }
  }
}

void quantize_q6_k(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* weights = element_weights(src + b * kQKK, importance ? importance + b * kQKK : nullptr, kQKK, w);
    uint8_t* block = dst + b * 210;
    std::memset(block, 0, 210);
    const SymmetricSuperBlock sb = quantize_symmetric_superblock(src + b * kQKK, 32, 128, weights);
    uint8_t* ql = block;
    uint8_t* qh = block + 128;
    for (int e = 0; e < kQKK; ++e) {
      const int u = sb.q[e] + 32;  // 0..63
      const int h = e / 128, r = e % 128, g = r / 32, l = r % 32;
      ql[64 * h + (g % 2) * 32 + l] |= static_cast<uint8_t>(g < 2 ? (u & 15) : (u & 15) << 4);
      qh[32 * h + l] |= static_cast<uint8_t>((u >> 4) << (2 * g));
    }
    for (int s = 0; s < 16; ++s) block[192 + s] = static_cast<uint8_t>(static_cast<int8_t>(sb.sc[s]));
    store_f16(block + 208, sb.d);
  }
}

void quantize_iq4_nl(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    uint8_t* block = dst + b * 18;
    const float d = round_to_fp16(fit_iq4nl(x, element_weights(x, importance ? importance + b * kQK : nullptr, kQK, w)));
    store_f16(block, d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 16; ++j) {
      const int lo = nearest_iq4nl(x[j] * id);
      const int hi = nearest_iq4nl(x[j + 16] * id);
      block[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// IQ4_XS: each group of 32 gets IQ4_NL's scale fit, then the super-block scale d puts the
// largest of them at -32 (llama.cpp's rule: d = -max_scale / 32, stored as F16), each group's
// 6-bit scale is the nearest multiple of d (clamped to [-32, 31]; the multiple of the unrounded
// d, as the reference), and every value takes the nearest level under its group's scale.
void quantize_iq4_xs(const float* src, uint8_t* dst, int64_t n, const float* importance) {
  float w[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    uint8_t* block = dst + b * 136;
    std::memset(block, 0, 136);
    const float* weights = element_weights(x, importance ? importance + b * kQKK : nullptr, kQKK, w);
    float scales[8];
    float max_scale = 0.0f;
    for (int ib = 0; ib < 8; ++ib) {
      scales[ib] = fit_iq4nl(x + kQK * ib, weights ? weights + kQK * ib : nullptr);
      if (std::fabs(scales[ib]) > std::fabs(max_scale)) max_scale = scales[ib];
    }
    const float d = -max_scale / 32.0f;
    store_f16(block, d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint16_t scales_h = 0;
    for (int ib = 0; ib < 8; ++ib) {
      const int l = clamp_int(nearest_int(id * scales[ib]), -32, 31);
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
      const float* xb = x + kQK * ib;
      for (int j = 0; j < 16; ++j) {
        block[8 + 16 * ib + j] = static_cast<uint8_t>(nearest_iq4nl(xb[j] * idl) | (nearest_iq4nl(xb[j + 16] * idl) << 4));
      }
      block[4 + ib / 2] |= static_cast<uint8_t>(((l + 32) & 0xF) << (4 * (ib % 2)));
      scales_h |= static_cast<uint16_t>(((l + 32) >> 4) << (2 * ib));
    }
    std::memcpy(block + 2, &scales_h, 2);
  }
}

// MXFP4's rule, byte-identical to llama-quantize: the exponent puts the largest magnitude in
// the top octave of the levels (e = floor(log2 amax) - 2 + 127; 0 for an all-zero block), and
// every value takes the level nearest to it, the first of equals (+0 before -0).
void quantize_mxfp4(const float* src, uint8_t* dst, int64_t n, const float* /*importance*/) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    uint8_t* block = dst + b * 17;
    float amax = 0.0f;
    for (int64_t j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    // Clamped to the byte: magnitudes below 2^-125 (or above 2^128) have no exponent of their own.
    const float exponent = amax > 0.0f ? std::floor(std::log2(amax)) - 2 + 127 : 0.0f;
    const auto e = static_cast<uint8_t>(std::clamp(exponent, 0.0f, 255.0f));
    const float d = e8m0_to_fp32_half(e);
    auto nearest = [d](float v) {
      int best = 0;
      float best_err = std::fabs(kMxfp4Levels[0] * d - v);
      for (int i = 1; i < 16; ++i) {
        const float err = std::fabs(kMxfp4Levels[i] * d - v);
        if (err < best_err) {
          best = i;
          best_err = err;
        }
      }
      return best;
    };
    block[0] = e;
    for (int j = 0; j < 16; ++j) block[1 + j] = static_cast<uint8_t>(nearest(x[j]) | (nearest(x[j + 16]) << 4));
  }
}

void quantize_tq1_0(const float* src, uint8_t* dst, int64_t n, const float* /*importance*/) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint8_t* block = dst + b * 54;
    uint8_t t[kQKK];
    const float d = quantize_ternary(src + b * kQKK, t);
    // Bytes 0..31: elements i + 32p (p = 0..4); bytes 32..47: 160 + i + 16p; qh 48..51:
    // 240 + i + 4p (p = 0..3, the fifth trit unused and zero).
    for (int i = 0; i < 32; ++i) {
      const int g[5] = {t[i], t[i + 32], t[i + 64], t[i + 96], t[i + 128]};
      block[i] = pack_trits(g);
    }
    for (int i = 0; i < 16; ++i) {
      const int g[5] = {t[160 + i], t[176 + i], t[192 + i], t[208 + i], t[224 + i]};
      block[32 + i] = pack_trits(g);
    }
    for (int i = 0; i < 4; ++i) {
      const int g[5] = {t[240 + i], t[244 + i], t[248 + i], t[252 + i], 0};
      block[48 + i] = pack_trits(g);
    }
    store_f16(block + 52, d);
  }
}

void quantize_tq2_0(const float* src, uint8_t* dst, int64_t n, const float* /*importance*/) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    uint8_t* block = dst + b * 66;
    std::memset(block, 0, 66);
    uint8_t t[kQKK];
    const float d = quantize_ternary(src + b * kQKK, t);
    for (int e = 0; e < kQKK; ++e) put_2bit(block, e, t[e]);
    store_f16(block + 64, d);
  }
}

}  // namespace inferscope::kernels::detail
