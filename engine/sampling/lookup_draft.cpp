#include "engine/sampling/lookup_draft.h"

#include <algorithm>

namespace inferscope {

std::vector<int32_t> lookup_draft(std::span<const int32_t> context, int max_ngram, int max_tokens) {
  const std::size_t size = context.size();
  for (std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(max_ngram), size - (size > 0)); n >= 1; --n) {
    const std::span<const int32_t> tail = context.subspan(size - n);
    // The latest start < size - n whose n tokens equal the tail (it has a continuation).
    for (std::size_t start = size - n; start-- > 0;) {
      if (!std::equal(tail.begin(), tail.end(), context.begin() + static_cast<std::ptrdiff_t>(start))) continue;
      const std::size_t from = start + n;
      const std::size_t count = std::min(static_cast<std::size_t>(max_tokens), size - from);
      return {context.begin() + static_cast<std::ptrdiff_t>(from),
              context.begin() + static_cast<std::ptrdiff_t>(from + count)};
    }
  }
  return {};
}

}  // namespace inferscope
