// Embeddings as unit vectors: the cache compares prompts by cosine similarity, which for vectors
// of L2 norm 1 is their dot product (kernels/cpu/similarity.h).
#pragma once

#include <span>
#include <vector>

#include "engine/core/status.h"

namespace inferscope::semantic {

// `embedding` scaled to L2 norm 1. An error when it is empty, holds NaN or infinity, or is all
// zeros (no direction to compare).
Result<std::vector<float>> to_unit_vector(std::span<const float> embedding);

}  // namespace inferscope::semantic
