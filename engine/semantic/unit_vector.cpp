#include "engine/semantic/unit_vector.h"

#include <cmath>
#include <string>

namespace inferscope::semantic {

Result<std::vector<float>> to_unit_vector(std::span<const float> embedding) {
  if (embedding.empty()) return Status::error("embedding is empty");
  double squared_norm = 0.0;
  for (size_t i = 0; i < embedding.size(); ++i) {
    if (!std::isfinite(embedding[i])) {
      return Status::error("embedding value " + std::to_string(i) + " is not a finite number");
    }
    squared_norm += static_cast<double>(embedding[i]) * embedding[i];
  }
  if (squared_norm == 0.0) return Status::error("embedding is all zeros");
  const double scale = 1.0 / std::sqrt(squared_norm);
  std::vector<float> unit(embedding.size());
  for (size_t i = 0; i < embedding.size(); ++i) unit[i] = static_cast<float>(embedding[i] * scale);
  return unit;
}

}  // namespace inferscope::semantic
