// Range checks for SamplingParams, so bad user settings surface as messages, not odd samples.
#include "engine/sampling/sampling_params.h"

#include <cmath>
#include <sstream>
#include <string>

namespace inferscope {
namespace {

Status out_of_range(const char* field, double value, const char* expected) {
  std::ostringstream message;  // default formatting: "40", "0.95", "nan"
  message << "sampling parameter " << field << " = " << value << ": expected " << expected;
  return Status::error(message.str());
}

}  // namespace

Status SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    return out_of_range("temperature", temperature, "a finite value >= 0 (0 = greedy)");
  if (top_k < 0) return out_of_range("top_k", top_k, "an integer >= 0 (0 = disabled)");
  if (!(top_p > 0.0f && top_p <= 1.0f))  // also rejects NaN
    return out_of_range("top_p", top_p, "a value in (0, 1] (1 = disabled)");
  if (!(min_p >= 0.0f && min_p <= 1.0f))
    return out_of_range("min_p", min_p, "a value in [0, 1] (0 = disabled)");
  if (!std::isfinite(repeat_penalty) || repeat_penalty <= 0.0f)
    return out_of_range("repeat_penalty", repeat_penalty, "a finite value > 0 (1 = disabled)");
  if (repeat_last_n < -1)
    return out_of_range("repeat_last_n", repeat_last_n,
                        "an integer >= -1 (0 = disabled, -1 = all accepted tokens)");
  if (!std::isfinite(frequency_penalty))
    return out_of_range("frequency_penalty", frequency_penalty, "a finite value (0 = disabled)");
  if (!std::isfinite(presence_penalty))
    return out_of_range("presence_penalty", presence_penalty, "a finite value (0 = disabled)");
  return Status::ok();
}

}  // namespace inferscope
