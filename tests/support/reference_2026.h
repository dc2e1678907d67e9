// The 2026 reference (llama.cpp d32676d7, tests/data/llama.cpp-2026/README.md) on tiny random
// models of the architectures added since 2025: each JSON names the make-model preset, file type
// and seed its model was written with, that file's SHA-256, and llama.cpp's greedy steps with the
// top-5 log-probabilities of each. The model is written again here (the generator is
// deterministic) and its hash checked, so a changed generator fails loudly instead of comparing
// a different model with an old reference.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "engine/graph/forward_executor.h"
#include "engine/model/model.h"

namespace inferscope::testing {

// Every reference of tests/data/llama.cpp-2026, for the backends' parametrized tests.
inline const char* const kReferences2026[] = {"qwen3-tiny-f32",    "qwen3moe-tiny-f32",  "gemma3-tiny-f32",
                                             "smollm3-tiny-f32",  "qwen3-tiny-q8_0",    "qwen3moe-tiny-q8_0",
                                             "qwen3-tiny-q4_k_m", "qwen3moe-tiny-q4_k_m", "gpt-oss-tiny-f32",
                                             "gpt-oss-tiny-f32-seed7", "gpt-oss-tiny-mxfp4", "ministral3-tiny-f32",
                                             "olmo2-tiny-f32",    "olmo3-tiny-f32",    "gemma3-tiny-q8_0",
                                             "gemma3-tiny-q4_k_m", "smollm3-tiny-q8_0", "smollm3-tiny-q4_k_m",
                                             "ministral3-tiny-q8_0", "ministral3-tiny-q4_k_m", "olmo2-tiny-q8_0",
                                             "olmo2-tiny-q4_k_m", "olmo3-tiny-q8_0",   "olmo3-tiny-q4_k_m",
                                             "qwen35-tiny-f32",   "qwen35moe-tiny-f32", "qwen3next-tiny-f32",
                                             "qwen35-tiny-q8_0",  "gemma4-tiny-f32",    "gemma4-tiny-q8_0",
                                             // the reference's quantizer's files, a type each
                                             "llama-256-tiny-iq1_s", "llama-256-tiny-iq1_m", "llama-256-tiny-iq2_xxs",
                                             "llama-256-tiny-iq2_xs", "llama-256-tiny-iq2_s", "llama-256-tiny-iq3_xxs",
                                             "llama-256-tiny-iq3_s", "llama-256-tiny-iq4_xs", "llama-256-tiny-q1_0",
                                             "llama-256-tiny-q2_0", "llama-256-tiny-nvfp4"};
// The ones the GPU backends are held to: all but the 2026 weight types' files (llama-256-tiny-*:
// Vulkan and CUDA do not multiply those types yet), qwen3moe's quantized files and gpt-oss seed 1. There
// the GPUs' int8 activations (quantized per 32 values in every product, where llama.cpp's CPU and
// ours share one scheme and agree to 1e-6), or their F32 attention weights (the CPU rounds the
// normalized weights to F16, as llama.cpp does), move the random router's logits by ~1e-3,
// enough to swap a near-tied expert choice: an invisible near-tie (measured: log-probabilities
// off by 0.2-1.1 after a swap; gpt-oss seed 1 has a margin of 0.0012 between its 2nd and 3rd
// expert at position 34 of layer 1, seed 7 none below 0.08 over its 37 positions).
// Their MoE products are held to the CPU's on F16/F32 files (VulkanArchitecture,
// CudaArchitecture), their quantized products on the dense files here and VulkanWeightType /
// CudaWeightType.
inline const char* const kGpuReferences2026[] = {"qwen3-tiny-f32",   "qwen3moe-tiny-f32", "gemma3-tiny-f32",
                                                "smollm3-tiny-f32", "qwen3-tiny-q8_0",   "qwen3-tiny-q4_k_m",
                                                "gpt-oss-tiny-f32-seed7", "gpt-oss-tiny-mxfp4", "ministral3-tiny-f32",
                                                "olmo2-tiny-f32",   "olmo3-tiny-f32",    "qwen35-tiny-f32",
                                                "qwen35moe-tiny-f32", "qwen3next-tiny-f32", "gemma4-tiny-f32"};
// qwen35-tiny-q8_0 and gemma4-tiny-q8_0 are held to the reference where the products multiply
// int8 activations as llama.cpp's do: Vulkan's in every chunk, CUDA's decode kernels (chunks of
// up to 8 rows; CudaHybrid, CudaGemma4: gemma4's max difference 0.10 there, 0.148 of the 0.15
// allowed through the BF16 prefill, measured on the emulator). CUDA's prefill products multiply BF16 activations instead (dequantized weight
// tiles and cuBLAS), which moves this hybrid's log-probabilities by up to 0.4 from the int8
// paths' (KL 0.25 against the CPU backend over 24 rows, where qwen3-tiny-q8_0 moves by 3e-4),
// though each of its products is right to BF16 precision (NMSE ~5e-6 against a double-precision
// product of the Q8_0 rows), and its BF16 and F16 files match the CPU (KL 3e-4, 3e-5).

struct Reference2026 {
  std::string name;
  // The written model, in the test's scratch space; or a file the reference made (its
  // quantizer), kept in tests/data/llama.cpp-2026 ("file" in the JSON).
  std::string model_path;
  // Such a file's tensors dequantized by the reference: SHA-256 of their F32 bytes by name.
  std::map<std::string, std::string> dequantized_sha256;
  std::vector<int32_t> prompt_ids;
  std::vector<int32_t> steps;                                 // llama.cpp's greedy ids
  std::vector<std::vector<std::pair<int32_t, double>>> top5;  // per step: (id, log-probability)
  // How close the log-probabilities must be, and the gap between a step's top two below which it
  // is a near-tie either engine's rounding may break (its id is not compared). F32 weights: the
  // engines differ by ~1e-4 (F16 K and V in both caches, other summation orders): 1e-2 and 5e-3.
  // Quantized weights: llama.cpp's own flash-attention and plain paths differ by up to 0.05 on
  // these files (int8 activations, the rounding of their scales): 0.15 and 0.1.
  double tolerance = 1e-2;
  double near_tie = 5e-3;
  // Steps before the first near-tie: the free-running greedy ids must be equal up to there.
  size_t trusted = 0;
  size_t decisive = 0;  // steps that are no near-tie
};

// tests/data/llama.cpp-2026/<name>.json and its model; ASSERT-style failures inside.
Result<Reference2026> load_reference_2026(const std::string& name);

// fp (cleared first) against the reference. Teacher-forced (the prompt and the reference's ids
// in one chunk): every step's top-5 log-probabilities within ref.tolerance, and the same argmax
// at every decisive step. Free-running (the prompt in one chunk, then one token at a time): the
// same greedy ids for the trusted steps.
void expect_matches_reference_2026(ForwardExecutor& fp, const Reference2026& ref);

}  // namespace inferscope::testing
