// Vectorisable numerics over logit vectors (max, sum of exponentials, log-sum-exp) shared by the
// sampler, top_logprobs and beam search. One pass over a 152k vocabulary costs tens of
// microseconds instead of the ~300 us of a scalar std::exp loop.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <span>

namespace inferscope {

// NaN would break the strict weak ordering the sorts rely on; +inf would turn softmax into
// inf - inf. NaN ranks like a masked token (-inf), +inf like the largest finite logit.
inline float sanitize_logit(float x) {
  if (x != x) return -std::numeric_limits<float>::infinity();
  if (x == std::numeric_limits<float>::infinity()) return std::numeric_limits<float>::max();
  return x;
}

// exp(x) for x <= 0, relative error < 1e-7 (Cephes expf: x = n ln2 + r, degree-6 polynomial
// in r, 2^n through the exponent bits). x > 0 counts as 0 (gives 1), NaN and x < -87.3 give 0,
// so a masked token never gets weight. Branch-free (bit masks rather than selects, which GCC
// will not if-convert under -ftrapping-math) so loops calling it vectorise; keep such loops free
// of accumulations, which stop that (a scalar loop is ~10x slower).
inline float exp_nonpositive(float x) {
  // Range checks on the bit pattern, as integer compares: cheaper than float compares in both
  // scalar and SIMD code, and NaN needs no special case.
  constexpr uint32_t kLowBits = std::bit_cast<uint32_t>(-87.33654f);  // below: subnormal result
  const int32_t xi = std::bit_cast<int32_t>(x);
  const uint32_t xu = static_cast<uint32_t>(xi);
  // Negative floats order like their bits as unsigned, so xu > kLowBits is "x < -87.33654,
  // -inf or a negative NaN"; xi > 0x7F800000 is a positive NaN.
  const int32_t zero = -static_cast<int32_t>((xu > kLowBits) | (xi > 0x7F800000));
  const int32_t high = -static_cast<int32_t>(xi > 0);  // x > 0, +inf included
  const float c = std::bit_cast<float>(xi & ~(zero | high));  // out of range -> 0.0f
  const float t = c * 1.44269504089f + 12582912.0f;  // 1.5 * 2^23: rounds c / ln2 to an integer
  const float n = t - 12582912.0f;
  const int32_t ni = std::bit_cast<int32_t>(t) - 0x4B400000;
  float r = c - n * 0.693359375f;  // ln 2 in two parts for an exact reduction
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float result = p * std::bit_cast<float>((ni + 127) << 23);
  return std::bit_cast<float>(std::bit_cast<int32_t>(result) & ~zero);
}

// Largest sanitized logit; -inf when all are -inf / NaN or the span is empty.
float max_logit(std::span<const float> logits);

// sum(exp(x - shift)) over the logits, with shift >= every sanitized logit (normally
// max_logit()). Accumulates in double; the order of additions is fixed, so the result is
// identical on every machine.
double sum_exp(std::span<const float> logits, float shift);

// Sum of the values in double, in a fixed (lane-wise) order.
double sum_floats(std::span<const float> values);

// log(sum(exp(logits))), stable; -inf when every logit is -inf (or the span is empty).
double log_sum_exp(std::span<const float> logits);

}  // namespace inferscope
