// The token ids `bench` feeds the model: a fixed spread over the vocabulary, so runs compare.
#pragma once

#include <cstdint>
#include <vector>

namespace inferscope::cli {

// n ids in [0, n_vocab); `variant` gives another sequence of the same length.
inline std::vector<int32_t> bench_tokens(int64_t n, int64_t n_vocab, int64_t variant = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    t[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919 + 13 + variant * 104729) % n_vocab);
  }
  return t;
}

}  // namespace inferscope::cli
