// What sampled generations (BatchGeneration) and beam search (Session) share: when a token ends
// a reply and why, and the timing figures of a finished generation.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "engine/runtime/generate_request.h"
#include "engine/tokenizer/tokenizer.h"

namespace inferscope {

using GenerationClock = std::chrono::steady_clock;

inline double ms_since(GenerationClock::time_point t0, GenerationClock::time_point t1 = GenerationClock::now()) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// An end-of-generation token of the model, or one the request names.
inline bool is_stop_token(const Tokenizer& tok, const GenerateRequest& request, int32_t id) {
  return tok.is_end_of_generation(id) ||
         std::find(request.stop_token_ids.begin(), request.stop_token_ids.end(), id) != request.stop_token_ids.end();
}

inline const char* stop_reason_for(const Tokenizer& tok, int32_t id) {
  return id == tok.eos_id() ? "eos" : "end_of_turn";
}

// The rates from the measured times (prefill over the tokens prefilled, not the reused ones).
inline void finish_timings(GenerateTimings& t, size_t prefilled_tokens, size_t decoded_tokens) {
  t.prefill_tokens_per_s = t.prefill_ms > 0 ? 1000.0 * static_cast<double>(prefilled_tokens) / t.prefill_ms : 0;
  t.decode_tokens_per_s = t.decode_ms > 0 ? 1000.0 * static_cast<double>(decoded_tokens) / t.decode_ms : 0;
}

}  // namespace inferscope
