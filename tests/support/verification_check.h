// ForwardExecutor::verify against decoding the same tokens one forward call at a time, on any
// backend: the speculative verification must give plain decoding's logits to the last bit.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/graph/forward_executor.h"

namespace inferscope::testing {

struct VerificationCheck {
  std::string error;               // a failed forward call; empty when all ran
  int64_t first_different = -1;    // the first drafted position whose logits differ; -1: none
  bool kv_rows_identical = false;  // the next token's logits after verify() equal those after decoding
};

// In slot 0 (emptied first): evaluates `prompt`, then `drafted` one token per call, then
// `next`; truncates back to the prompt, verifies `drafted` in one call and evaluates `next`
// again, and compares the logits bit for bit.
VerificationCheck check_verification(ForwardExecutor& executor, std::span<const int32_t> prompt,
                                     std::span<const int32_t> drafted, int32_t next);

}  // namespace inferscope::testing
