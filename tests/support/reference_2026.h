// The 2026 reference (llama.cpp d32676d7, tests/data/llama.cpp-2026/README.md) on tiny random
// models of the architectures added since 2025: each JSON names the make-model preset, file type
// and seed its model was written with, that file's SHA-256, and llama.cpp's greedy steps with the
// top-5 log-probabilities of each. The model is written again here (the generator is
// deterministic) and its hash checked, so a changed generator fails loudly instead of comparing
// a different model with an old reference.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/graph/forward_executor.h"
#include "engine/model/model.h"

namespace inferscope::testing {

// F32 weights: the two engines' log-probabilities differ by ~1e-4 (F16 K and V in both caches,
// other summation orders), so a gap of 5e-3 is decided the same way by both.
constexpr double kNearTie = 5e-3;

// Every reference of tests/data/llama.cpp-2026, for the backends' parametrized tests.
inline const char* const kReferences2026[] = {"qwen3-tiny-f32", "qwen3moe-tiny-f32", "gemma3-tiny-f32",
                                             "smollm3-tiny-f32"};

struct Reference2026 {
  std::string name;
  std::string model_path;  // the written model, in the test's scratch space
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> steps;                                 // llama.cpp's greedy ids
  std::vector<std::vector<std::pair<int32_t, double>>> top5;  // per step: (id, log-probability)
  // Steps before the first whose top two log-probabilities are closer than kNearTie (a near-tie
  // the two engines' rounding may break either way); later greedy ids are not compared.
  size_t trusted = 0;
};

// tests/data/llama.cpp-2026/<name>.json and its model; ASSERT-style failures inside.
Result<Reference2026> load_reference_2026(const std::string& name);

// fp (cleared first) against the reference: the top-5 log-probabilities of every step
// (teacher-forced: the prompt and the reference's ids in one chunk) within `tolerance`, and the
// greedy continuation (the prompt in one chunk, then one token at a time) equal for the trusted
// steps.
void expect_matches_reference_2026(ForwardExecutor& fp, const Reference2026& ref, double tolerance = 1e-2);

}  // namespace inferscope::testing
