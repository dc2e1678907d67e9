// Top-k selection: a bounded heap for small k (one streaming pass, O(n log k) worst case, nearly
// O(n) in practice) and nth_element for k close to the vocabulary size.
#include "engine/sampling/top_k.h"

#include <algorithm>
#include <limits>

namespace inferscope {
namespace {

// Branch-free over a fixed-size block (integer masks, then an OR), which GCC and Clang turn into
// a handful of SIMD compares; ~8x faster than testing elements one by one.
template <size_t N>
bool any_greater(const float* values, float threshold) {
  int32_t masks[N];
  for (size_t j = 0; j < N; ++j) masks[j] = -static_cast<int32_t>(values[j] > threshold);
  int32_t any = 0;
  for (size_t j = 0; j < N; ++j) any |= masks[j];
  return any != 0;
}

template <size_t N>
bool any_at_least(const float* values, float threshold) {
  int32_t masks[N];
  for (size_t j = 0; j < N; ++j) masks[j] = -static_cast<int32_t>(values[j] >= threshold);
  int32_t any = 0;
  for (size_t j = 0; j < N; ++j) any |= masks[j];
  return any != 0;
}

constexpr size_t kBlock = 64;

}  // namespace

void select_top_k(std::span<const float> logits, int32_t k, std::vector<TokenLogit>& out) {
  out.clear();
  const size_t n = logits.size();
  const size_t keep = k <= 0 ? 0 : std::min(n, static_cast<size_t>(k));
  if (keep == 0) return;

  if (keep * 16 <= n) {
    // Heap ordered by ranks_before keeps the worst kept token at front(). Tokens arrive in
    // increasing id order, so a newcomer that ties front() ranks after it and is skipped.
    for (size_t i = 0; i < keep; ++i)
      out.push_back({static_cast<int32_t>(i), sanitize_logit(logits[i])});
    std::make_heap(out.begin(), out.end(), ranks_before);
    float worst = out.front().logit;
    // Most blocks hold nothing better than the current k-th token; the branch-free test over a
    // block vectorises, so only the rare hits pay for the heap. NaN never compares greater.
    size_t i = keep;
    while (i < n) {
      const size_t end = std::min(n, i + kBlock);
      if (end - i == kBlock) {
        if (!any_greater<kBlock>(logits.data() + i, worst)) {
          i = end;
          continue;
        }
      }
      for (; i < end; ++i) {
        if (!(logits[i] > worst)) continue;
        std::pop_heap(out.begin(), out.end(), ranks_before);
        out.back() = {static_cast<int32_t>(i), sanitize_logit(logits[i])};
        std::push_heap(out.begin(), out.end(), ranks_before);
        worst = out.front().logit;
      }
    }
    std::sort_heap(out.begin(), out.end(), ranks_before);
    return;
  }

  out.resize(n);
  for (size_t i = 0; i < n; ++i) out[i] = {static_cast<int32_t>(i), sanitize_logit(logits[i])};
  if (keep < n) {
    std::nth_element(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                     ranks_before);
    out.resize(keep);
  }
  std::sort(out.begin(), out.end(), ranks_before);
}

void select_at_least(std::span<const float> logits, float threshold, std::vector<TokenLogit>& out) {
  const size_t n = logits.size();
  out.resize(n);
  size_t kept = 0;
  size_t i = 0;
  while (i < n) {
    const size_t end = std::min(n, i + kBlock);
    if (end - i == kBlock && !any_at_least<kBlock>(logits.data() + i, threshold)) {
      i = end;
      continue;
    }
    for (; i < end; ++i) {  // branch-free: write every token, advance past the kept ones
      const float v = sanitize_logit(logits[i]);
      out[kept] = {static_cast<int32_t>(i), v};
      kept += v >= threshold ? 1 : 0;
    }
  }
  out.resize(kept);
}

int32_t argmax_logit(std::span<const float> logits) {
  const float max = max_logit(logits);
  if (max == -std::numeric_limits<float>::infinity()) return 0;  // all masked
  // First occurrence, so ties go to the lowest id. max_logit() maps +inf to the largest float.
  for (size_t i = 0; i < logits.size(); ++i)
    if (sanitize_logit(logits[i]) == max) return static_cast<int32_t>(i);
  return 0;  // unreachable: max came from logits
}

}  // namespace inferscope
