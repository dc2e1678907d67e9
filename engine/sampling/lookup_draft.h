// Prompt-lookup drafting for speculative decoding (no second model): the tokens that followed
// the most recent earlier occurrence of the context's last n tokens, for the longest n from
// max_ngram down to 1 that occurs earlier. Text that repeats (code, quotes, lists, a story
// retelling its own phrases) is drafted right; elsewhere the draft is usually empty or wrong,
// and the target model's verification throws it away.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace inferscope {

// Up to max_tokens drafted tokens (none when the last tokens never occurred before).
// Preconditions: max_ngram >= 1, max_tokens >= 0.
std::vector<int32_t> lookup_draft(std::span<const int32_t> context, int max_ngram, int max_tokens);

}  // namespace inferscope
