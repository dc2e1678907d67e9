#include "tests/support/verification_check.h"

#include <cstring>
#include <vector>

namespace inferscope::testing {
namespace {

bool same_bits(const float* a, const float* b, int64_t n) {
  return std::memcmp(a, b, static_cast<size_t>(n) * sizeof(float)) == 0;
}

}  // namespace

VerificationCheck check_verification(ForwardExecutor& executor, std::span<const int32_t> prompt,
                                     std::span<const int32_t> drafted, int32_t next) {
  VerificationCheck check;
  const int64_t width = executor.output_width();
  const auto n = static_cast<int64_t>(drafted.size());
  std::vector<float> decoded(static_cast<size_t>(n * width)), verified(decoded.size());
  std::vector<float> after_decoding(static_cast<size_t>(width)), after_verifying(after_decoding.size());
  auto run = [&check](const Status& s) {
    if (!s.is_ok() && check.error.empty()) check.error = s.message();
    return s.is_ok();
  };
  executor.clear();
  std::vector<float> prompt_logits(static_cast<size_t>(width));
  if (!run(executor.forward(0, prompt, false, prompt_logits.data()))) return check;
  const int64_t kept = executor.kv_length(0);
  for (int64_t i = 0; i < n; ++i) {
    if (!run(executor.forward(0, drafted.subspan(static_cast<size_t>(i), 1), false, decoded.data() + i * width))) {
      return check;
    }
  }
  if (!run(executor.forward(0, std::span(&next, 1), false, after_decoding.data()))) return check;
  executor.truncate(0, kept);
  if (!run(executor.verify(0, drafted, verified.data()))) return check;
  if (!run(executor.forward(0, std::span(&next, 1), false, after_verifying.data()))) return check;
  for (int64_t i = 0; i < n && check.first_different < 0; ++i) {
    if (!same_bits(decoded.data() + i * width, verified.data() + i * width, width)) check.first_different = i;
  }
  check.kv_rows_identical = same_bits(after_decoding.data(), after_verifying.data(), width);
  return check;
}

}  // namespace inferscope::testing
