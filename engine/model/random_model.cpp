#include "engine/model/random_model.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {

namespace {

// splitmix64: fast, seedable, good enough for random weights.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float symmetric() { return static_cast<float>(static_cast<int64_t>(next() >> 11) * 0x1.0p-52 - 1.0); }

 private:
  uint64_t state_;
};

// A matrix of `rows` x `cols` uniform values with standard deviation ~1/sqrt(cols), so
// activations keep a sane scale through the layers. Generated and quantized one row at a time.
gguf::TensorSource random_matrix(kernels::GgmlType type, int64_t cols, int64_t rows, uint64_t seed) {
  return [=](gguf::ByteSink& out) -> Status {
    Rng rng(seed);
    const float amplitude = std::sqrt(3.0f / static_cast<float>(cols));
    std::vector<float> row(static_cast<size_t>(cols));
    std::vector<uint8_t> packed(static_cast<size_t>(kernels::row_bytes(type, cols)));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& v : row) v = amplitude * rng.symmetric();
      if (!kernels::quantize_row(type, row.data(), packed.data(), cols)) {
        return Status::error(std::string("cannot quantize to ") + kernels::type_name(type));
      }
      INFERSCOPE_RETURN_IF_ERROR(out.write(packed.data(), packed.size()));
    }
    return Status::ok();
  };
}

std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

std::vector<uint8_t> ones(int64_t n) { return float_bytes(std::vector<float>(static_cast<size_t>(n), 1.0f)); }

// Norm weights in [0.5, 1.5): a test then sees which weight scales which element.
std::vector<uint8_t> near_ones(int64_t n, uint64_t seed, float scale = 1.0f) {
  Rng rng(seed * 0x2545F491 + 7);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = scale * (1.0f + 0.5f * rng.symmetric());
  return float_bytes(v);
}

struct Preset {
  const char* name;
  RandomModelShape shape;
};

// Realistic shapes from the models' published configs; "-tiny" ones are for tests (head sizes
// that differ from n_embd / n_head and windows shorter than a test's context, on purpose).
const Preset kPresets[] = {
    // ~125M parameters with a 32000-token vocabulary: the Vulkan-on-lavapipe benchmark shape.
    {"llama-125m", {.n_embd = 768, .n_layer = 12, .n_head = 12, .n_head_kv = 12, .n_ff = 1792}},
    {"tinyllama-1.1b", {.n_embd = 2048, .n_layer = 22, .n_head = 32, .n_head_kv = 4, .n_ff = 5632}},
    {"llama-7b", {.n_embd = 4096, .n_layer = 32, .n_head = 32, .n_head_kv = 32, .n_ff = 11008, .n_ctx = 4096}},
    {"mixtral-tiny",
     {.n_embd = 512, .n_layer = 4, .n_head = 8, .n_head_kv = 4, .n_ff = 1024, .n_expert = 4, .n_expert_used = 2}},
    {"mistral-7b",
     {.n_embd = 4096, .n_layer = 32, .n_head = 32, .n_head_kv = 8, .n_ff = 14336, .n_ctx = 32768,
      .rope_freq_base = 1e6f}},
    // Every matrix row a multiple of 256 values, as the super-block types need (the files of
    // tests/data/llama.cpp-2026/llama-256-tiny-*).
    {"llama-256-tiny", {.n_embd = 256, .n_layer = 1, .n_head = 2, .n_head_kv = 1, .n_ff = 256, .n_ctx = 512}},
    {"mistral-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .rope_freq_base = 1e6f}},
    {"qwen2-0.5b",
     {.n_embd = 896, .n_layer = 24, .n_head = 14, .n_head_kv = 2, .n_ff = 4864, .n_ctx = 32768, .tied_output = true,
      .arch = "qwen2", .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    // Every FFN width different, and the experts' and the shared expert's wider than n_ff (which
    // qwen2moe's layers do not use): buffers sized by the wrong width show.
    {"qwen2moe-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 64, .n_expert = 4, .n_expert_used = 2,
      .n_ff_expert = 96, .n_ff_shared = 192, .n_ctx = 512, .arch = "qwen2moe", .rope_freq_base = 1e6f,
      .rms_eps = 1e-6f}},
    {"qwen2-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .tied_output = true,
      .arch = "qwen2", .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    {"phi3-mini",
     {.n_embd = 3072, .n_layer = 32, .n_head = 32, .n_head_kv = 32, .n_ff = 8192, .n_ctx = 4096, .arch = "phi3",
      .n_swa = 2047}},
    {"phi3-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 4, .n_ff = 256, .n_ctx = 512, .arch = "phi3",
      .n_swa = 24}},
    {"llama3.1-8b",
     {.n_embd = 4096, .n_layer = 32, .n_head = 32, .n_head_kv = 8, .n_ff = 14336, .n_ctx = 131072,
      .rope_freq_base = 500000.0f, .rope_scaling = "llama3"}},
    // Original context 64 instead of 8192, so the factors bite within a test's 48 tokens.
    {"llama3-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512,
      .rope_freq_base = 500000.0f, .rope_scaling = "llama3", .rope_orig_ctx = 64}},
    {"phi3.5-mini",
     {.n_embd = 3072, .n_layer = 32, .n_head = 32, .n_head_kv = 32, .n_ff = 8192, .n_ctx = 131072, .arch = "phi3",
      .n_swa = 262144, .rope_scaling = "longrope", .rope_orig_ctx = 4096}},
    {"phi3.5-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 4, .n_ff = 256, .n_ctx = 512, .arch = "phi3",
      .n_swa = 24, .rope_scaling = "longrope", .rope_orig_ctx = 64}},
    {"gemma-2b",
     {.n_embd = 2048, .n_layer = 18, .n_head = 8, .n_head_kv = 1, .n_ff = 16384, .n_ctx = 8192, .tied_output = true,
      .arch = "gemma", .head_dim = 256, .rms_eps = 1e-6f}},
    {"gemma-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 1, .n_ff = 256, .n_ctx = 512, .tied_output = true,
      .arch = "gemma", .head_dim = 64, .rms_eps = 1e-6f}},
    {"gemma2-2b",
     {.n_embd = 2304, .n_layer = 26, .n_head = 8, .n_head_kv = 4, .n_ff = 9216, .n_ctx = 8192, .tied_output = true,
      .arch = "gemma2", .head_dim = 256, .n_swa = 4096, .rms_eps = 1e-6f}},
    {"gemma2-tiny",
     {.n_embd = 128, .n_layer = 3, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .tied_output = true,
      .arch = "gemma2", .head_dim = 64, .n_swa = 24, .rms_eps = 1e-6f}},
    // Qwen/Qwen3-0.6B and Qwen/Qwen3-1.7B: heads of 128 whatever n_embd / n_head is.
    {"qwen3-0.6b",
     {.n_embd = 1024, .n_layer = 28, .n_head = 16, .n_head_kv = 8, .n_ff = 3072, .n_ctx = 40960, .tied_output = true,
      .arch = "qwen3", .head_dim = 128, .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    {"qwen3-1.7b",
     {.n_embd = 2048, .n_layer = 28, .n_head = 16, .n_head_kv = 8, .n_ff = 6144, .n_ctx = 40960, .tied_output = true,
      .arch = "qwen3", .head_dim = 128, .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    {"qwen3-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "qwen3",
      .head_dim = 48, .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    // Qwen/Qwen3-30B-A3B: 128 experts of width 768, 8 used, normalized top-k weights.
    {"qwen3-30b-a3b",
     {.n_embd = 2048, .n_layer = 48, .n_head = 32, .n_head_kv = 4, .n_ff = 6144, .n_expert = 128,
      .n_expert_used = 8, .n_ff_expert = 768, .n_ctx = 40960, .arch = "qwen3moe", .head_dim = 128,
      .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    // google/gemma-3-270m, -1b-pt, -4b-pt (text): windows of 512/1024 on five of six layers, the
    // global layers' RoPE base 1e6 (4B: linear scaling x8), the window layers' 10000.
    {"gemma3-270m",
     {.n_embd = 640, .n_layer = 18, .n_head = 4, .n_head_kv = 1, .n_ff = 2048, .n_ctx = 32768, .tied_output = true,
      .arch = "gemma3", .head_dim = 256, .n_swa = 512, .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    {"gemma3-1b",
     {.n_embd = 1152, .n_layer = 26, .n_head = 4, .n_head_kv = 1, .n_ff = 6912, .n_ctx = 32768, .tied_output = true,
      .arch = "gemma3", .head_dim = 256, .n_swa = 512, .rope_freq_base = 1e6f, .rms_eps = 1e-6f}},
    {"gemma3-4b",
     {.n_embd = 2560, .n_layer = 34, .n_head = 8, .n_head_kv = 4, .n_ff = 10240, .n_ctx = 131072, .tied_output = true,
      .arch = "gemma3", .head_dim = 256, .n_swa = 1024, .rope_freq_base = 1e6f, .rms_eps = 1e-6f,
      .rope_scaling = "linear", .rope_scaling_factor = 8.0f}},
    // Six layers: five windowed (16 positions, RoPE base 10000) and one global (base 1e6, linear x8).
    {"gemma3-tiny",
     {.n_embd = 128, .n_layer = 6, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .tied_output = true,
      .arch = "gemma3", .head_dim = 64, .n_swa = 16, .rope_freq_base = 1e6f, .rms_eps = 1e-6f,
      .rope_scaling = "linear", .rope_scaling_factor = 8.0f}},
    // HuggingFaceTB/SmolLM3-3B: no RoPE on layers 3, 7, 11, ...
    {"smollm3-3b",
     {.n_embd = 2048, .n_layer = 36, .n_head = 16, .n_head_kv = 4, .n_ff = 11008, .n_ctx = 65536, .tied_output = true,
      .arch = "smollm3", .rope_freq_base = 5e6f, .rms_eps = 1e-6f}},
    {"smollm3-tiny",
     {.n_embd = 128, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "smollm3",
      .rope_freq_base = 5e6f, .rms_eps = 1e-6f}},
    // openai/gpt-oss-20b: 32 experts of 2880 (4 used), windows of 128 on the even layers, YaRN x32.
    {"gpt-oss-20b",
     {.n_embd = 2880, .n_layer = 24, .n_head = 64, .n_head_kv = 8, .n_ff = 2880, .n_expert = 32, .n_expert_used = 4,
      .n_ff_expert = 2880, .n_ctx = 131072, .arch = "gpt-oss", .head_dim = 64, .n_swa = 128,
      .rope_freq_base = 150000.0f, .rope_scaling = "yarn", .rope_scaling_factor = 32.0f, .rope_orig_ctx = 4096}},
    {"gpt-oss-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 96, .n_expert = 4, .n_expert_used = 2,
      .n_ff_expert = 96, .n_ctx = 512, .arch = "gpt-oss", .head_dim = 48, .n_swa = 16, .rope_freq_base = 150000.0f,
      .rope_scaling = "yarn", .rope_scaling_factor = 4.0f, .rope_orig_ctx = 32}},
    // allenai/OLMo-2-0425-1B: norms after attention and FFN, q/k norms over all heads.
    {"olmo2-1b",
     {.n_embd = 2048, .n_layer = 16, .n_head = 16, .n_head_kv = 16, .n_ff = 8192, .n_ctx = 4096, .arch = "olmo2",
      .rope_freq_base = 500000.0f, .rms_eps = 1e-6f}},
    {"olmo2-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "olmo2",
      .rope_freq_base = 500000.0f, .rms_eps = 1e-6f}},
    // OLMo 3's shape of olmo2: a window on three of every four layers (pattern 4 by default).
    {"olmo3-tiny",
     {.n_embd = 128, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "olmo2",
      .n_swa = 16, .rope_freq_base = 500000.0f, .rms_eps = 1e-6f}},
    // mistralai/Mistral-Small-3.2-24B-Instruct-2506 (text model): RoPE base 1e9, heads of 128.
    {"mistral-small-3",
     {.n_embd = 5120, .n_layer = 40, .n_head = 32, .n_head_kv = 8, .n_ff = 32768, .n_ctx = 131072,
      .arch = "mistral3", .head_dim = 128, .rope_freq_base = 1e9f}},
    // Ministral 3's YaRN (mscale_all_dim 1) and attention temperature over an original context
    // of 8 positions, so both bite within a test.
    {"ministral3-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "mistral3",
      .rope_freq_base = 1e6f, .rope_scaling = "yarn", .rope_scaling_factor = 16.0f, .rope_orig_ctx = 8,
      .rope_yarn_log_mul = 1.0f, .attn_temp_scale = 0.1f}},
    // Qwen/Qwen3.5-0.8B: three Gated DeltaNet layers (16 heads of 128) to one gated attention
    // layer (8 heads of 256, 2 KV heads, a quarter of each head rotated), RoPE base 1e7; an MTP block.
    {"qwen3.5-0.8b",
     {.n_embd = 1024, .n_layer = 24, .n_head = 8, .n_head_kv = 2, .n_ff = 3584, .n_ctx = 262144, .tied_output = true,
      .arch = "qwen35", .head_dim = 256, .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 64, .ssm_k_heads = 16,
      .ssm_v_heads = 16, .ssm_head_dim = 128, .mtp = true}},
    // Eight layers (6 DeltaNet, 2 attention), more value heads than key heads, a partial RoPE.
    {"qwen3.5-tiny",
     {.n_embd = 128, .n_layer = 8, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "qwen35",
      .head_dim = 64, .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 16, .ssm_k_heads = 2, .ssm_v_heads = 4,
      .ssm_head_dim = 32}},
    // qwen3.5-tiny with a multi-token-prediction block (drafting for itself).
    {"qwen3.5-mtp-tiny",
     {.n_embd = 128, .n_layer = 8, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_ctx = 512, .arch = "qwen35",
      .head_dim = 64, .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 16, .ssm_k_heads = 2, .ssm_v_heads = 4,
      .ssm_head_dim = 32, .mtp = true}},
    // Qwen/Qwen3.5-35B-A3B: 40 layers (30 DeltaNet with 16 key and 32 value heads of 128), 256
    // experts of 512 (8 used) and a gated shared expert of 512.
    {"qwen3.5-35b-a3b",
     {.n_embd = 2048, .n_layer = 40, .n_head = 16, .n_head_kv = 2, .n_ff = 512, .n_expert = 256, .n_expert_used = 8,
      .n_ff_expert = 512, .n_ff_shared = 512, .n_ctx = 262144, .arch = "qwen35moe", .head_dim = 256,
      .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 64, .ssm_k_heads = 16, .ssm_v_heads = 32,
      .ssm_head_dim = 128}},
    {"qwen3.5moe-tiny",
     {.n_embd = 128, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_expert = 8, .n_expert_used = 3,
      .n_ff_expert = 64, .n_ff_shared = 96, .n_ctx = 512, .arch = "qwen35moe", .head_dim = 64,
      .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 16, .ssm_k_heads = 2, .ssm_v_heads = 4, .ssm_head_dim = 32}},
    // Qwen/Qwen3-Next-80B-A3B: 48 layers (36 DeltaNet with 16 key and 32 value heads of 128), 512
    // experts of 512 (10 used) and a gated shared expert of 512.
    {"qwen3-next-80b-a3b",
     {.n_embd = 2048, .n_layer = 48, .n_head = 16, .n_head_kv = 2, .n_ff = 5120, .n_expert = 512,
      .n_expert_used = 10, .n_ff_expert = 512, .n_ff_shared = 512, .n_ctx = 262144, .arch = "qwen3next",
      .head_dim = 256, .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 64, .ssm_k_heads = 16, .ssm_v_heads = 32,
      .ssm_head_dim = 128}},
    // Qwen/Qwen3.5-4B: 32 layers (24 DeltaNet with 16 key and 32 value heads of 128), gated
    // attention of 16 heads of 256 (4 KV heads, a quarter rotated), RoPE base 1e7.
    {"qwen3.5-4b",
     {.n_embd = 2560, .n_layer = 32, .n_head = 16, .n_head_kv = 4, .n_ff = 9216, .n_ctx = 262144, .tied_output = true,
      .arch = "qwen35", .head_dim = 256, .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 64, .ssm_k_heads = 16,
      .ssm_v_heads = 32, .ssm_head_dim = 128}},
    // google/gemma-4-E2B (text): 35 layers, four windowed (512 positions, heads of 256, RoPE base
    // 10000) to one full (heads of 512, a quarter rotated at base 1e6), one KV head; the last 20
    // layers read layers 13's and 14's KV and have FFNs of 12288; per-layer inputs of 256.
    {"gemma4-e2b",
     {.n_embd = 1536, .n_layer = 35, .n_head = 8, .n_head_kv = 1, .n_ff = 6144, .n_ctx = 131072, .tied_output = true,
      .arch = "gemma4", .head_dim = 512, .n_swa = 512, .swa_period = 5, .rope_freq_base_swa = 10000.0f,
      .rope_freq_base = 1e6f, .rms_eps = 1e-6f, .final_softcap = 30.0f, .head_dim_swa = 256, .n_kv_shared = 20,
      .n_embd_per_layer = 256}},
    // Ten layers (8 windowed of 16 positions with heads of 32, 2 full with heads of 64), the last
    // five reading layers 3's and 4's KV; layer 4 has no attn_v.
    {"gemma4-tiny",
     {.n_embd = 128, .n_layer = 10, .n_head = 4, .n_head_kv = 2, .n_ff = 192, .n_ctx = 512, .tied_output = true,
      .arch = "gemma4", .head_dim = 64, .n_swa = 16, .swa_period = 5, .rope_freq_base_swa = 10000.0f,
      .rope_freq_base = 1e6f, .rms_eps = 1e-6f, .final_softcap = 30.0f, .head_dim_swa = 32, .n_kv_shared = 5,
      .n_embd_per_layer = 16, .k_eq_v = true}},
    // gemma4-tiny with gemma-4-E2B's head sizes: full layers' heads of 512 (two parts a tile in
    // CUDA's attention) and window layers' of 256, 8 query heads on one KV head.
    {"gemma4-tiny-wide",
     {.n_embd = 128, .n_layer = 10, .n_head = 8, .n_head_kv = 1, .n_ff = 192, .n_ctx = 512, .tied_output = true,
      .arch = "gemma4", .head_dim = 512, .n_swa = 16, .swa_period = 5, .rope_freq_base_swa = 10000.0f,
      .rope_freq_base = 1e6f, .rms_eps = 1e-6f, .final_softcap = 30.0f, .head_dim_swa = 256, .n_kv_shared = 5,
      .n_embd_per_layer = 16, .k_eq_v = true}},
    {"qwen3next-tiny",
     {.n_embd = 128, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_expert = 8, .n_expert_used = 3,
      .n_ff_expert = 64, .n_ff_shared = 96, .n_ctx = 512, .arch = "qwen3next", .head_dim = 64,
      .rope_freq_base = 1e7f, .rms_eps = 1e-6f, .n_rot = 16, .ssm_k_heads = 2, .ssm_v_heads = 4, .ssm_head_dim = 32}},
    {"qwen3moe-tiny",
     {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_expert = 8, .n_expert_used = 3,
      .n_ff_expert = 64, .n_ctx = 512, .arch = "qwen3moe", .head_dim = 48, .rope_freq_base = 1e6f,
      .rms_eps = 1e-6f}},
};

}  // namespace

std::vector<float> llama3_rope_factors(int64_t n_rot, float freq_base, float factor, float low_freq_factor,
                                       float high_freq_factor, int64_t orig_ctx) {
  const double low_freq_wavelen = static_cast<double>(orig_ctx) / low_freq_factor;
  const double high_freq_wavelen = static_cast<double>(orig_ctx) / high_freq_factor;
  std::vector<float> factors;
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double freq = std::pow(static_cast<double>(freq_base), -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
    const double wavelen = 2.0 * M_PI / freq;
    if (wavelen < high_freq_wavelen) {
      factors.push_back(1.0f);
    } else if (wavelen > low_freq_wavelen) {
      factors.push_back(factor);
    } else {
      const double smooth = (static_cast<double>(orig_ctx) / wavelen - low_freq_factor) /
                            (high_freq_factor - low_freq_factor);
      factors.push_back(static_cast<float>(1.0 / ((1.0 - smooth) / factor + smooth)));
    }
  }
  return factors;
}

bool random_model_preset(const std::string& name, RandomModelShape* shape) {
  for (const Preset& p : kPresets) {
    if (name == p.name) {
      *shape = p.shape;
      return true;
    }
  }
  return false;
}

std::string random_model_preset_names() {
  std::string names;
  for (const Preset& p : kPresets) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

namespace {

Status check_shape(const RandomModelShape& s) {
  if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_head_kv <= 0 || s.n_ff <= 0 || s.n_ctx <= 0 ||
      s.head_dim < 0 || s.n_swa < 0) {
    return Status::error("every dimension of the model shape must be positive");
  }
  if ((s.head_dim == 0 && s.n_embd % s.n_head != 0) || s.n_head % s.n_head_kv != 0) {
    return Status::error("embedding size must be a multiple of the heads, heads a multiple of the KV heads");
  }
  if (s.n_expert < 0 || s.n_expert_used < 0 || s.n_expert_used > s.n_expert || (s.n_expert > 0) != (s.n_expert_used > 0)) {
    return Status::error("experts used must be between 1 and the expert count (or both 0)");
  }
  const bool moe_arch = s.arch == "qwen2moe" || s.arch == "qwen3moe" || s.arch == "gpt-oss" || s.arch == "qwen35moe" ||
                        s.arch == "qwen3next";
  if (s.n_expert > 0 && s.arch != "llama" && !moe_arch) {
    return Status::error("experts are only written for the llama, qwen2moe and qwen3moe layouts");
  }
  if (moe_arch && s.n_expert == 0) return Status::error(s.arch + " needs experts (n_expert)");
  const bool shared_arch = s.arch == "qwen2moe" || s.arch == "qwen35moe" || s.arch == "qwen3next";
  if (shared_arch != (s.n_expert > 0 && s.n_ff_shared > 0)) {
    return Status::error("qwen2moe and qwen35moe have routed experts and a shared expert (n_expert and n_ff_shared), "
                         "nothing else does");
  }
  if (s.n_ff_expert < 0 || (s.n_ff_expert > 0 && !moe_arch)) {
    return Status::error("an expert FFN width of its own is written for qwen2moe and qwen3moe only");
  }
  const std::string& r = s.rope_scaling;
  if (!(r.empty() || r == "llama3" || r == "longrope" || r == "yarn" || r == "linear")) {
    return Status::error("unknown RoPE scaling '" + r + "' (supported: llama3, longrope, yarn, linear)");
  }
  if (!r.empty() && (!(s.rope_scaling_factor > 0.0f) || s.rope_orig_ctx <= 0 ||
                     !(s.rope_high_freq_factor > s.rope_low_freq_factor && s.rope_low_freq_factor > 0.0f))) {
    return Status::error("RoPE scaling needs a positive factor and original context, and high > low freq factor > 0");
  }
  const bool known = s.arch == "llama" || s.arch == "qwen2" || s.arch == "qwen2moe" || s.arch == "qwen3" ||
                     s.arch == "qwen3moe" || s.arch == "phi3" || s.arch == "gemma" || s.arch == "gemma2" ||
                     s.arch == "gemma3" || s.arch == "smollm3" || s.arch == "gpt-oss" || s.arch == "mistral3" ||
                     s.arch == "olmo2" || s.arch == "qwen35" || s.arch == "qwen35moe" || s.arch == "qwen3next" ||
                     s.arch == "gemma4";
  if (!known) {
    return Status::error("cannot write architecture '" + s.arch +
                         "' (supported: llama, qwen2, qwen2moe, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, smollm3, "
                         "gpt-oss, mistral3, olmo2, qwen35, qwen35moe, qwen3next, gemma4)");
  }
  const bool hybrid = s.arch == "qwen35" || s.arch == "qwen35moe" || s.arch == "qwen3next";
  if (hybrid != (s.ssm_head_dim > 0) ||
      (s.ssm_head_dim > 0 && (s.ssm_k_heads <= 0 || s.ssm_v_heads % s.ssm_k_heads != 0 || s.ssm_conv_kernel < 2 ||
                              s.full_attn_interval < 1))) {
    return Status::error("qwen35 needs DeltaNet heads (ssm_k_heads dividing ssm_v_heads, ssm_head_dim) and nothing else has them");
  }
  if (s.n_rot < 0 || s.n_rot % 2 != 0) return Status::error("the rotated dimensions must be even");
  if (s.arch == "gemma4") {
    const int64_t first_shared = s.n_layer - s.n_kv_shared;
    const auto full = [&](int64_t l) { return l % s.swa_period == s.swa_period - 1; };
    if (s.head_dim <= 0 || s.head_dim_swa <= 0 || s.swa_period < 2 || s.n_swa <= 0 || s.n_expert > 0 ||
        s.n_kv_shared < 0 || first_shared < 2 || (s.n_kv_shared > 0 && (!full(first_shared - 1) || full(first_shared - 2)))) {
      return Status::error("gemma4 needs head_dim, head_dim_swa, a window with swa_period >= 2, no experts, and its "
                           "last unshared layers a window layer then a full one");
    }
  }
  return Status::ok();
}

// gemma4's keys (llama.cpp's converter): the window pattern as a per-layer array, the head
// sizes and rotated dims of both kinds of layer, the shared-KV layers, the per-layer inputs'
// width, FFN widths per layer (twice as wide on shared-KV layers) and the logits' soft cap.
void add_gemma4_keys(const RandomModelShape& s, gguf::Writer& w) {
  const std::string a = s.arch + ".";
  std::vector<int64_t> window, ff;
  for (int64_t l = 0; l < s.n_layer; ++l) {
    window.push_back(l % s.swa_period != s.swa_period - 1 ? 1 : 0);
    ff.push_back(l >= s.n_layer - s.n_kv_shared ? 2 * s.n_ff : s.n_ff);
  }
  w.add(a + "attention.sliding_window_pattern", gguf::make_array(gguf::ValueType::BOOL, window));
  w.add(a + "feed_forward_length", gguf::make_array(gguf::ValueType::INT32, ff));
  w.add_u32(a + "attention.key_length_swa", static_cast<uint32_t>(s.head_dim_swa));
  w.add_u32(a + "attention.value_length_swa", static_cast<uint32_t>(s.head_dim_swa));
  w.add_u32(a + "rope.dimension_count_swa", static_cast<uint32_t>(s.head_dim_swa));
  w.add_u32(a + "attention.shared_kv_layers", static_cast<uint32_t>(s.n_kv_shared));
  w.add_u32(a + "embedding_length_per_layer_input", static_cast<uint32_t>(s.n_embd_per_layer));
  w.add_f32(a + "final_logit_softcapping", s.final_softcap);
}

}  // namespace

Status write_random_model(const RandomModelSpec& spec, const std::string& output_path) {
  const RandomModelShape& s = spec.shape;
  INFERSCOPE_RETURN_IF_ERROR(check_shape(s));
  auto vocab = gguf::File::open(spec.vocab_path);
  if (!vocab) return vocab.status();
  auto tokens = (*vocab)->get_string_array("tokenizer.ggml.tokens");
  if (!tokens) return tokens.status();
  const int64_t n_vocab = static_cast<int64_t>((*tokens)->size());
  const int64_t head_dim = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
  const int64_t n_q = head_dim * s.n_head, n_kv = head_dim * s.n_head_kv;
  const int64_t n_rot = s.n_rot > 0 ? s.n_rot : head_dim;

  gguf::Writer w;
  const std::string a = s.arch + ".";
  w.add_string("general.architecture", s.arch);
  w.add_string("general.name", spec.name);
  w.add_u32("general.file_type", spec.mix.file_type);
  w.add_u32(a + "context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32(a + "block_count", static_cast<uint32_t>(s.n_layer + (s.mtp ? 1 : 0)));
  if (s.mtp) w.add_u32(a + "nextn_predict_layers", 1);
  if (s.arch != "gemma4") w.add_u32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  if (s.head_dim > 0) {
    w.add_u32(a + "attention.key_length", static_cast<uint32_t>(head_dim));
    w.add_u32(a + "attention.value_length", static_cast<uint32_t>(head_dim));
  }
  w.add_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  w.add_f32(a + "rope.freq_base", s.rope_freq_base);
  w.add_u32(a + "rope.dimension_count", static_cast<uint32_t>(n_rot));
  w.add_u32(a + "vocab_size", static_cast<uint32_t>(n_vocab));
  if (s.n_swa > 0) w.add_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.n_swa));
  if (s.attn_temp_scale > 0.0f) w.add_f32(a + "attention.temperature_scale", s.attn_temp_scale);
  const bool gemma4 = s.arch == "gemma4";
  if (s.swa_period > 0 && !gemma4) {
    w.add_u32(a + "attention.sliding_window_pattern", static_cast<uint32_t>(s.swa_period));
  }
  if (gemma4) add_gemma4_keys(s, w);
  if (s.rope_freq_base_swa > 0.0f) w.add_f32(a + "rope.freq_base_swa", s.rope_freq_base_swa);
  if (s.arch == "gemma2") {
    w.add_f32(a + "attn_logit_softcapping", s.attn_softcap);
    w.add_f32(a + "final_logit_softcapping", s.final_softcap);
  }
  const int64_t n_ff_expert = s.n_ff_expert > 0 ? s.n_ff_expert : s.n_ff;
  if (s.n_expert > 0) {
    w.add_u32(a + "expert_count", static_cast<uint32_t>(s.n_expert));
    w.add_u32(a + "expert_used_count", static_cast<uint32_t>(s.n_expert_used));
  }
  if (s.arch == "qwen2moe" || s.arch == "qwen3moe" || s.arch == "gpt-oss" || s.arch == "qwen35moe" ||
      s.arch == "qwen3next") {
    w.add_u32(a + "expert_feed_forward_length", static_cast<uint32_t>(n_ff_expert));
  }
  if (s.arch == "qwen2moe" || s.arch == "qwen35moe" || s.arch == "qwen3next") {
    w.add_u32(a + "expert_shared_feed_forward_length", static_cast<uint32_t>(s.n_ff_shared));
  }
  if (s.rope_scaling == "linear" || s.rope_scaling == "yarn") {
    w.add_string(a + "rope.scaling.type", s.rope_scaling);
    w.add_f32(a + "rope.scaling.factor", s.rope_scaling_factor);
    if (s.rope_scaling == "yarn") w.add_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(s.rope_orig_ctx));
    if (s.rope_scaling == "yarn" && s.rope_yarn_log_mul > 0.0f) {
      w.add_f32(a + "rope.scaling.yarn_log_multiplier", s.rope_yarn_log_mul);
    }
  }
  if (s.rope_scaling == "longrope") {
    // As llama.cpp's Phi-3 converter: attn_factor = sqrt(1 + ln(scale) / ln(original context)).
    const double scale = static_cast<double>(s.n_ctx) / static_cast<double>(s.rope_orig_ctx);
    const double attn = scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(s.rope_orig_ctx))) : 1.0;
    w.add_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(s.rope_orig_ctx));
    w.add_f32(a + "rope.scaling.attn_factor", static_cast<float>(attn));
  }
  const int64_t ssm_key = s.ssm_k_heads * s.ssm_head_dim, ssm_value = s.ssm_v_heads * s.ssm_head_dim;
  const int64_t ssm_channels = 2 * ssm_key + ssm_value;
  const bool hybrid = s.arch == "qwen35" || s.arch == "qwen35moe" || s.arch == "qwen3next";
  if (hybrid && s.arch != "qwen3next") {
    // Text positions only: the sections split n_rot / 2 pairs as Qwen3.5's 11/11/10 of 32 do.
    const int32_t pairs = static_cast<int32_t>(n_rot / 2), first = (pairs * 11 + 31) / 32;
    w.add_i32_array(a + "rope.dimension_sections", {first, first, pairs - 2 * first, 0});
  }
  if (hybrid) {
    w.add_u32(a + "ssm.conv_kernel", static_cast<uint32_t>(s.ssm_conv_kernel));
    w.add_u32(a + "ssm.inner_size", static_cast<uint32_t>(ssm_value));
    w.add_u32(a + "ssm.state_size", static_cast<uint32_t>(s.ssm_head_dim));
    w.add_u32(a + "ssm.time_step_rank", static_cast<uint32_t>(s.ssm_v_heads));
    w.add_u32(a + "ssm.group_count", static_cast<uint32_t>(s.ssm_k_heads));
    w.add_u32(a + "full_attention_interval", static_cast<uint32_t>(s.full_attn_interval));
  }
  w.copy_metadata(**vocab, "tokenizer.");

  uint64_t seed = spec.seed;
  const QuantModelInfo mix_info{s.n_layer, s.n_layer, s.n_head, s.n_head_kv, s.n_expert, !s.tied_output};
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, int64_t mats = 1) {
    std::vector<int64_t> ne = {cols, rows};
    if (mats > 1) ne.push_back(mats);
    const auto type = choose_tensor_type(spec.mix, mix_info, name, static_cast<int>(ne.size()), cols, kernels::GgmlType::F32);
    w.add_tensor_source(name, ne, type, random_matrix(type, cols, rows * mats, seed++ * 0x9E37 + 17));
  };
  auto norm = [&](const std::string& name) { w.add_tensor(name, {s.n_embd}, kernels::GgmlType::F32, ones(s.n_embd)); };
  auto bias = [&](const std::string& name, int64_t n) {
    w.add_tensor_source(name, {n}, kernels::GgmlType::F32, random_matrix(kernels::GgmlType::F32, n, 1, seed++));
  };
  // gpt-oss's per-expert biases: F32 [n_expert] rows of `width` (never quantized).
  auto expert_bias = [&](const std::string& name, int64_t width) {
    w.add_tensor_source(name, {width, s.n_expert}, kernels::GgmlType::F32,
                        random_matrix(kernels::GgmlType::F32, width, s.n_expert, seed++));
  };
  const bool gpt_oss = s.arch == "gpt-oss";
  const bool olmo2 = s.arch == "olmo2";  // post-norms only, q/k norms over all heads
  const bool fused = s.arch == "phi3";  // attn_qkv, and ffn_up holding gate then up
  // qwen35's per-head vectors: norms near one, the decay's rate a = -exp(A_log) in [-2, -0.1)
  // and its bias small, so every head forgets at a rate of its own.
  auto head_values = [&](const std::string& name, int64_t n, float lo, float hi) {
    Rng rng(seed++ * 0x3C6EF372 + 11);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = lo + (hi - lo) * 0.5f * (rng.symmetric() + 1.0f);
    w.add_tensor(name, {n}, kernels::GgmlType::F32, float_bytes(v));
  };

  // A hybrid model's layer: a Gated DeltaNet or a gated full attention, then its FFN.
  auto hybrid_layer = [&](const std::string& p, bool full_attention) {
    norm(p + "attn_norm.weight");
    if (!full_attention) {
      matrix(p + "attn_qkv.weight", s.n_embd, ssm_channels);
      matrix(p + "attn_gate.weight", s.n_embd, ssm_value);
      if (s.arch == "qwen3next") {
        matrix(p + "ssm_ba.weight", s.n_embd, 2 * s.ssm_v_heads);  // per key head: betas, alphas
      } else {
        matrix(p + "ssm_alpha.weight", s.n_embd, s.ssm_v_heads);
        matrix(p + "ssm_beta.weight", s.n_embd, s.ssm_v_heads);
      }
      w.add_tensor_source(p + "ssm_conv1d.weight", {s.ssm_conv_kernel, ssm_channels}, kernels::GgmlType::F32,
                          random_matrix(kernels::GgmlType::F32, s.ssm_conv_kernel, ssm_channels, seed++));
      head_values(p + "ssm_dt.bias", s.ssm_v_heads, -0.5f, 0.5f);
      head_values(p + "ssm_a", s.ssm_v_heads, -2.0f, -0.1f);
      w.add_tensor(p + "ssm_norm.weight", {s.ssm_head_dim}, kernels::GgmlType::F32, near_ones(s.ssm_head_dim, seed++));
      matrix(p + "ssm_out.weight", ssm_value, s.n_embd);
    } else {
      matrix(p + "attn_q.weight", s.n_embd, 2 * n_q);  // each head's query rows, then its gate rows
      matrix(p + "attn_k.weight", s.n_embd, n_kv);
      matrix(p + "attn_v.weight", s.n_embd, n_kv);
      w.add_tensor(p + "attn_q_norm.weight", {head_dim}, kernels::GgmlType::F32, near_ones(head_dim, seed++));
      w.add_tensor(p + "attn_k_norm.weight", {head_dim}, kernels::GgmlType::F32, near_ones(head_dim, seed++));
      matrix(p + "attn_output.weight", n_q, s.n_embd);
    }
    norm(p + "post_attention_norm.weight");
    if (s.n_expert > 0) {
      w.add_tensor_source(p + "ffn_gate_inp.weight", {s.n_embd, s.n_expert}, kernels::GgmlType::F32,
                          random_matrix(kernels::GgmlType::F32, s.n_embd, s.n_expert, seed++));
      matrix(p + "ffn_gate_exps.weight", s.n_embd, n_ff_expert, s.n_expert);
      matrix(p + "ffn_up_exps.weight", s.n_embd, n_ff_expert, s.n_expert);
      matrix(p + "ffn_down_exps.weight", n_ff_expert, s.n_embd, s.n_expert);
      bias(p + "ffn_gate_inp_shexp.weight", s.n_embd);
      matrix(p + "ffn_gate_shexp.weight", s.n_embd, s.n_ff_shared);
      matrix(p + "ffn_up_shexp.weight", s.n_embd, s.n_ff_shared);
      matrix(p + "ffn_down_shexp.weight", s.n_ff_shared, s.n_embd);
      return;
    }
    matrix(p + "ffn_gate.weight", s.n_embd, s.n_ff);
    matrix(p + "ffn_up.weight", s.n_embd, s.n_ff);
    matrix(p + "ffn_down.weight", s.n_ff, s.n_embd);
  };

  matrix("token_embd.weight", s.n_embd, n_vocab);
  norm("output_norm.weight");
  const int64_t half_rot = head_dim / 2;
  if (s.rope_scaling == "llama3") {
    w.add_tensor("rope_freqs.weight", {half_rot}, kernels::GgmlType::F32,
                 float_bytes(llama3_rope_factors(head_dim, s.rope_freq_base, s.rope_scaling_factor,
                                                 s.rope_low_freq_factor, s.rope_high_freq_factor, s.rope_orig_ctx)));
  }
  if (s.rope_scaling == "longrope") {
    Rng rng(seed++ * 0x51ED + 3);
    for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
      std::vector<float> factors(static_cast<size_t>(half_rot));
      for (float& f : factors) f = 2.5f + 1.5f * rng.symmetric();  // [1, 4)
      w.add_tensor(name, {half_rot}, kernels::GgmlType::F32, float_bytes(factors));
    }
  }
  if (!s.tied_output) matrix("output.weight", s.n_embd, n_vocab);
  if (gemma4) {
    const int64_t half_full = s.head_dim / 2, rotated = static_cast<int64_t>(static_cast<float>(s.head_dim) * s.rope_partial_full / 2);
    std::vector<float> factors(static_cast<size_t>(half_full), 1e30f);
    std::fill_n(factors.begin(), rotated, 1.0f);
    w.add_tensor("rope_freqs.weight", {half_full}, kernels::GgmlType::F32, float_bytes(factors));
    matrix("per_layer_token_embd.weight", s.n_layer * s.n_embd_per_layer, n_vocab);
    matrix("per_layer_model_proj.weight", s.n_embd, s.n_layer * s.n_embd_per_layer);
    w.add_tensor("per_layer_proj_norm.weight", {s.n_embd_per_layer}, kernels::GgmlType::F32,
                 near_ones(s.n_embd_per_layer, seed++));
  }
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    if (gemma4) {
      const bool full = i % s.swa_period == s.swa_period - 1, shared = i >= s.n_layer - s.n_kv_shared;
      const int64_t hd = full ? s.head_dim : s.head_dim_swa, ff = shared ? 2 * s.n_ff : s.n_ff;
      norm(p + "attn_norm.weight");
      matrix(p + "attn_q.weight", s.n_embd, hd * s.n_head);
      // Unscaled scores (attention scale 1): q/k norms of hd^-1/4 keep them near unit size, as
      // a trained model's are, rather than a random model's sqrt(hd) (whose softmax then turns
      // on the F16 rounding of K).
      const float qk_scale = 1.0f / std::sqrt(std::sqrt(static_cast<float>(hd)));
      w.add_tensor(p + "attn_q_norm.weight", {hd}, kernels::GgmlType::F32, near_ones(hd, seed++, qk_scale));
      if (!shared) {
        matrix(p + "attn_k.weight", s.n_embd, hd * s.n_head_kv);
        if (!(full && s.k_eq_v)) matrix(p + "attn_v.weight", s.n_embd, hd * s.n_head_kv);
        w.add_tensor(p + "attn_k_norm.weight", {hd}, kernels::GgmlType::F32, near_ones(hd, seed++, qk_scale));
      }
      matrix(p + "attn_output.weight", hd * s.n_head, s.n_embd);
      w.add_tensor(p + "post_attention_norm.weight", {s.n_embd}, kernels::GgmlType::F32, near_ones(s.n_embd, seed++));
      norm(p + "ffn_norm.weight");
      matrix(p + "ffn_gate.weight", s.n_embd, ff);
      matrix(p + "ffn_up.weight", s.n_embd, ff);
      matrix(p + "ffn_down.weight", ff, s.n_embd);
      w.add_tensor(p + "post_ffw_norm.weight", {s.n_embd}, kernels::GgmlType::F32, near_ones(s.n_embd, seed++));
      head_values(p + "layer_output_scale.weight", 1, 0.5f, 1.5f);
      matrix(p + "inp_gate.weight", s.n_embd, s.n_embd_per_layer);
      matrix(p + "proj.weight", s.n_embd_per_layer, s.n_embd);
      w.add_tensor(p + "post_norm.weight", {s.n_embd}, kernels::GgmlType::F32, near_ones(s.n_embd, seed++));
      continue;
    }
    if (hybrid) {
      hybrid_layer(p, (i + 1) % s.full_attn_interval == 0);
      continue;
    }
    if (!olmo2) norm(p + "attn_norm.weight");
    if (fused) {
      matrix(p + "attn_qkv.weight", s.n_embd, n_q + 2 * n_kv);
    } else {
      matrix(p + "attn_q.weight", s.n_embd, n_q);
      matrix(p + "attn_k.weight", s.n_embd, n_kv);
      matrix(p + "attn_v.weight", s.n_embd, n_kv);
    }
    if (s.arch == "qwen2" || s.arch == "qwen2moe" || gpt_oss) {
      bias(p + "attn_q.bias", n_q);
      bias(p + "attn_k.bias", n_kv);
      bias(p + "attn_v.bias", n_kv);
    }
    if (s.arch == "qwen3" || s.arch == "qwen3moe" || s.arch == "gemma3") {
      w.add_tensor(p + "attn_q_norm.weight", {head_dim}, kernels::GgmlType::F32, near_ones(head_dim, seed++));
      w.add_tensor(p + "attn_k_norm.weight", {head_dim}, kernels::GgmlType::F32, near_ones(head_dim, seed++));
    }
    if (olmo2) {
      w.add_tensor(p + "attn_q_norm.weight", {n_q}, kernels::GgmlType::F32, near_ones(n_q, seed++));
      w.add_tensor(p + "attn_k_norm.weight", {n_kv}, kernels::GgmlType::F32, near_ones(n_kv, seed++));
    }
    matrix(p + "attn_output.weight", n_q, s.n_embd);
    if (gpt_oss) {
      bias(p + "attn_output.bias", s.n_embd);
      // Sink logits in [-1, 3): they take a visible share of each head's softmax.
      Rng rng(seed++ * 0x6A09E667 + 5);
      std::vector<float> sinks(static_cast<size_t>(s.n_head));
      for (float& x : sinks) x = 1.0f + 2.0f * rng.symmetric();
      w.add_tensor(p + "attn_sinks.weight", {s.n_head}, kernels::GgmlType::F32, float_bytes(sinks));
      norm(p + "post_attention_norm.weight");
    } else if (!olmo2) {
      norm(p + "ffn_norm.weight");
    }
    if (s.arch == "gemma2" || s.arch == "gemma3" || olmo2) {
      norm(p + "post_attention_norm.weight");
      norm(p + "post_ffw_norm.weight");
    }
    if (fused) {
      matrix(p + "ffn_up.weight", s.n_embd, 2 * s.n_ff);
      matrix(p + "ffn_down.weight", s.n_ff, s.n_embd);
    } else if (s.n_expert > 0) {
      w.add_tensor_source(p + "ffn_gate_inp.weight", {s.n_embd, s.n_expert}, kernels::GgmlType::F32,
                          random_matrix(kernels::GgmlType::F32, s.n_embd, s.n_expert, seed++));
      matrix(p + "ffn_gate_exps.weight", s.n_embd, n_ff_expert, s.n_expert);
      matrix(p + "ffn_up_exps.weight", s.n_embd, n_ff_expert, s.n_expert);
      matrix(p + "ffn_down_exps.weight", n_ff_expert, s.n_embd, s.n_expert);
      if (gpt_oss) {
        bias(p + "ffn_gate_inp.bias", s.n_expert);
        expert_bias(p + "ffn_gate_exps.bias", n_ff_expert);
        expert_bias(p + "ffn_up_exps.bias", n_ff_expert);
        expert_bias(p + "ffn_down_exps.bias", s.n_embd);
      }
      if (s.n_ff_shared > 0) {
        bias(p + "ffn_gate_inp_shexp.weight", s.n_embd);
        matrix(p + "ffn_gate_shexp.weight", s.n_embd, s.n_ff_shared);
        matrix(p + "ffn_up_shexp.weight", s.n_embd, s.n_ff_shared);
        matrix(p + "ffn_down_shexp.weight", s.n_ff_shared, s.n_embd);
      }
    } else {
      matrix(p + "ffn_gate.weight", s.n_embd, s.n_ff);
      matrix(p + "ffn_up.weight", s.n_embd, s.n_ff);
      matrix(p + "ffn_down.weight", s.n_ff, s.n_embd);
    }
  }
  if (s.mtp) {
    const std::string p = "blk." + std::to_string(s.n_layer) + ".";
    hybrid_layer(p, true);
    matrix(p + "nextn.eh_proj.weight", 2 * s.n_embd, s.n_embd);
    w.add_tensor(p + "nextn.enorm.weight", {s.n_embd}, kernels::GgmlType::F32, near_ones(s.n_embd, seed++));
    w.add_tensor(p + "nextn.hnorm.weight", {s.n_embd}, kernels::GgmlType::F32, near_ones(s.n_embd, seed++));
    w.add_tensor(p + "nextn.shared_head_norm.weight", {s.n_embd}, kernels::GgmlType::F32, near_ones(s.n_embd, seed++));
  }
  return w.write(output_path);
}

}  // namespace inferscope
