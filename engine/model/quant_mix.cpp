// llama.cpp's per-tensor type rules (llama-quant.cpp, llama_tensor_get_type), for the file types
// listed in quant_mix.h and llama-family tensor names. Not modelled: the IQ1/IQ2/IQ3 file types,
// the 70B-size and Falcon special cases, importance matrices (llama.cpp keeps IQ4_NL/IQ4_XS in
// the first eighth's ffn_down when it has one; we always give those Q5_K) and user type overrides. MXFP4_MOE
// (gpt-oss's release format) is its expert rule.
#include "engine/model/quant_mix.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "engine/gguf/gguf_file.h"

namespace inferscope {
namespace {

using kernels::GgmlType;

// llama_ftype values (llama.h).
enum FileType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ8_0 = 7, kQ5_0 = 8, kQ5_1 = 9, kQ2_K = 10,
  kQ3_K_S = 11, kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_S = 14, kQ4_K_M = 15, kQ5_K_S = 16, kQ5_K_M = 17,
  kQ6_K = 18, kIQ4_NL = 25, kIQ4_XS = 30, kBF16 = 32, kTQ1_0 = 36, kTQ2_0 = 37, kMxfp4Moe = 38,
  // Ours, outside llama_ftype's range: INT8 per output channel (I8 + a per-row scale tensor).
  kInt8PerChannel = 1024,
  // Ours: the blocks' linear layers in 2:4 sparse F16 (F16_2OF4), the rest F16.
  kF16TwoOfFour = 1025,
};

struct MixName {
  const char* name;
  FileType file_type;
  GgmlType base;
};

constexpr std::array<MixName, 24> kMixes = {{
    {"f32", kF32, GgmlType::F32},          {"f16", kF16, GgmlType::F16},
    {"bf16", kBF16, GgmlType::BF16},       {"q8_0", kQ8_0, GgmlType::Q8_0},
    {"q4_0", kQ4_0, GgmlType::Q4_0},       {"q4_1", kQ4_1, GgmlType::Q4_1},
    {"q5_0", kQ5_0, GgmlType::Q5_0},       {"q5_1", kQ5_1, GgmlType::Q5_1},
    {"iq4_nl", kIQ4_NL, GgmlType::IQ4_NL}, {"tq1_0", kTQ1_0, GgmlType::TQ1_0},
    {"tq2_0", kTQ2_0, GgmlType::TQ2_0},    {"q2_k", kQ2_K, GgmlType::Q2_K},
    {"q3_k_s", kQ3_K_S, GgmlType::Q3_K},   {"q3_k_m", kQ3_K_M, GgmlType::Q3_K},
    {"q3_k_l", kQ3_K_L, GgmlType::Q3_K},   {"q4_k_s", kQ4_K_S, GgmlType::Q4_K},
    {"q4_k_m", kQ4_K_M, GgmlType::Q4_K},   {"q5_k_s", kQ5_K_S, GgmlType::Q5_K},
    {"q5_k_m", kQ5_K_M, GgmlType::Q5_K},   {"q6_k", kQ6_K, GgmlType::Q6_K},
    {"int8", kInt8PerChannel, GgmlType::I8},  {"f16_2of4", kF16TwoOfFour, GgmlType::F16_2OF4},
    {"mxfp4_moe", kMxfp4Moe, GgmlType::MXFP4}, {"iq4_xs", kIQ4_XS, GgmlType::IQ4_XS},
}};

// llama-quantize's aliases.
constexpr std::array<std::pair<const char*, const char*>, 3> kAliases = {{
    {"q3_k", "q3_k_m"}, {"q4_k", "q4_k_m"}, {"q5_k", "q5_k_m"}}};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// "blk.N." -> N; -1 for tensors outside the blocks.
int64_t layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  int64_t layer = -1;
  const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), layer);
  return ec == std::errc() && end < name.data() + name.size() && *end == '.' ? layer : -1;
}

// llama.cpp's "use more bits" layers: the first and last eighth, and every third in between.
bool use_more_bits(int64_t i_layer, int64_t n_layer) {
  return i_layer < n_layer / 8 || i_layer >= 7 * n_layer / 8 || (i_layer - n_layer / 8) % 3 == 2;
}

// File types whose attn_output gets Q5_K in an 8-expert model.
bool bumps_moe_attn_output(FileType f) {
  return f == kQ2_K || f == kQ3_K_S || f == kQ3_K_M || f == kIQ4_NL || f == kIQ4_XS || f == kQ4_K_S || f == kQ4_K_M;
}

GgmlType output_type(const QuantMix& mix, int64_t row_length) {
  const int64_t block = kernels::type_info(mix.base).block_size;
  if (row_length % block != 0) return GgmlType::Q8_0;
  return mix.base == GgmlType::Q8_0 ? GgmlType::Q8_0 : GgmlType::Q6_K;
}

GgmlType attn_v_type(const QuantMix& mix, const QuantModelInfo& m, int64_t i_layer) {
  const auto f = static_cast<FileType>(mix.file_type);
  const int64_t n_gqa = m.n_head_kv > 0 ? m.n_head / m.n_head_kv : 1;
  GgmlType t = mix.base;
  if (f == kQ2_K) t = n_gqa >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
  else if (f == kQ3_K_M) t = i_layer < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
  else if (f == kQ3_K_L) t = GgmlType::Q5_K;
  else if ((f == kIQ4_NL || f == kIQ4_XS) && n_gqa >= 4) t = GgmlType::Q5_K;
  else if ((f == kQ4_K_M || f == kQ5_K_M) && use_more_bits(i_layer, m.n_attention_wv)) t = GgmlType::Q6_K;
  else if (f == kQ4_K_S && i_layer < 4) t = GgmlType::Q5_K;
  if (m.n_expert == 8) t = GgmlType::Q8_0;
  return t;
}

GgmlType ffn_down_type(const QuantMix& mix, const QuantModelInfo& m, int64_t i_layer) {
  const auto f = static_cast<FileType>(mix.file_type);
  const int64_t n = m.n_layer;
  if (f == kQ2_K) return GgmlType::Q3_K;
  if (f == kQ3_K_M) return i_layer < n / 16 ? GgmlType::Q5_K : GgmlType::Q4_K;
  if (f == kQ3_K_L) return GgmlType::Q5_K;
  if (f == kQ4_K_M) return use_more_bits(i_layer, n) ? GgmlType::Q6_K : mix.base;
  if (i_layer < n / 8 && (f == kIQ4_NL || f == kIQ4_XS)) return GgmlType::Q5_K;
  if (f == kQ5_K_M && use_more_bits(i_layer, n)) return GgmlType::Q6_K;
  if (f == kQ4_K_S && i_layer < n / 8) return GgmlType::Q5_K;
  return mix.base;
}

GgmlType attn_output_type(const QuantMix& mix, const QuantModelInfo& m) {
  const auto f = static_cast<FileType>(mix.file_type);
  if (m.n_expert == 8) {
    return bumps_moe_attn_output(f) ? GgmlType::Q5_K : mix.base;
  }
  if (f == kQ2_K) return GgmlType::Q3_K;
  if (f == kQ3_K_M) return GgmlType::Q4_K;
  if (f == kQ3_K_L) return GgmlType::Q5_K;
  return mix.base;
}

GgmlType attn_qkv_type(const QuantMix& mix) {
  const auto f = static_cast<FileType>(mix.file_type);
  if (f == kQ3_K_M || f == kQ3_K_L) return GgmlType::Q4_K;
  if (f == kQ4_K_M) return GgmlType::Q5_K;
  if (f == kQ5_K_M) return GgmlType::Q6_K;
  return mix.base;
}

// llama_tensor_get_type's name rules, before the row-length fallback.
GgmlType rule_type(const QuantMix& mix, const QuantModelInfo& m, std::string_view name, int64_t row_length) {
  // MXFP4_MOE: the expert stacks MXFP4, every other matrix (the output head too) Q8_0.
  if (mix.file_type == kMxfp4Moe) return contains(name, "_exps.") ? GgmlType::MXFP4 : GgmlType::Q8_0;
  const int64_t layer = std::max<int64_t>(0, layer_of(name));
  if (name == "output.weight" || (!m.has_output && name == "token_embd.weight")) return output_type(mix, row_length);
  if (name == "token_embd.weight") {
    return mix.base == GgmlType::TQ1_0 || mix.base == GgmlType::TQ2_0 ? GgmlType::Q4_K : mix.base;
  }
  if (contains(name, "attn_v.weight")) return attn_v_type(mix, m, layer);
  if (contains(name, "attn_k.weight")) return m.n_expert == 8 ? GgmlType::Q8_0 : mix.base;
  if (contains(name, "ffn_down")) return ffn_down_type(mix, m, layer);
  if (contains(name, "attn_output.weight")) return attn_output_type(mix, m);
  if (contains(name, "attn_qkv.weight")) return attn_qkv_type(mix);
  return mix.base;
}

// llama.cpp's replacement when the row length is not a multiple of the type's block.
std::optional<GgmlType> fallback_type(GgmlType t) {
  switch (t) {
    case GgmlType::TQ1_0:
    case GgmlType::TQ2_0: return GgmlType::Q4_0;
    case GgmlType::Q2_K:
    case GgmlType::Q3_K: return GgmlType::IQ4_NL;
    case GgmlType::Q4_K: return GgmlType::Q5_0;
    case GgmlType::Q5_K: return GgmlType::Q5_1;
    case GgmlType::Q6_K: return GgmlType::Q8_0;
    case GgmlType::IQ4_XS: return GgmlType::IQ4_NL;
    default: return std::nullopt;
  }
}

// I8 rows are multiplied as Q8_0 blocks in memory (model_weights.h), so they need whole blocks.
bool fits(GgmlType t, int64_t row_length) {
  return row_length % (t == GgmlType::I8 ? 32 : kernels::type_info(t).block_size) == 0;
}

}  // namespace

std::optional<QuantMix> quant_mix_from_name(std::string_view name, bool pure) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& [alias, target] : kAliases) {
    if (lower == alias) lower = target;
  }
  for (const MixName& m : kMixes) {
    if (lower == m.name) return QuantMix{m.name, m.file_type, m.base, pure};
  }
  return std::nullopt;
}

std::string quant_mix_names() {
  std::string out;
  for (const MixName& m : kMixes) out += std::string(out.empty() ? "" : ", ") + m.name;
  return out;
}

QuantModelInfo QuantModelInfo::from_gguf(const gguf::File& file) {
  QuantModelInfo info;
  info.has_output = false;
  for (const auto& t : file.tensors()) {
    if (contains(t.name, "attn_v.weight") || contains(t.name, "attn_qkv.weight")) ++info.n_attention_wv;
    if (t.name == "output.weight") info.has_output = true;
    info.n_layer = std::max(info.n_layer, layer_of(t.name) + 1);
  }
  auto arch_key = file.get_string_or("general.architecture", "");
  const std::string arch = arch_key.is_ok() ? arch_key.value() : "";
  auto int_key = [&](const std::string& key, int64_t fallback) {
    auto v = file.get_int_or(arch + "." + key, fallback);
    return v.is_ok() ? v.value() : fallback;
  };
  info.n_layer = int_key("block_count", info.n_layer);
  info.n_head = int_key("attention.head_count", 1);
  info.n_head_kv = int_key("attention.head_count_kv", info.n_head);
  info.n_expert = int_key("expert_count", 0);
  return info;
}

bool is_quantizable_tensor(std::string_view name, int n_dims) {
  const std::string_view suffix = "weight";
  if (n_dims < 2 || name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return false;
  // As llama.cpp: nor a DeltaNet's (or Mamba's) few convolution taps per channel.
  return !contains(name, "_norm") && !contains(name, "ffn_gate_inp.weight") && !contains(name, "pos_embd") &&
         !contains(name, "token_types") && !contains(name, "ssm_conv1d");
}

kernels::GgmlType choose_tensor_type(const QuantMix& mix, const QuantModelInfo& model, std::string_view name,
                                     int n_dims, int64_t row_length, GgmlType current) {
  if (!is_quantizable_tensor(name, n_dims)) return current;
  // 2:4 sparsity is for the blocks' linear layers (the pruning methods' tensors), not the
  // embeddings or the output head.
  if (mix.base == GgmlType::F16_2OF4 && (layer_of(name) < 0 || contains(name, "ffn_gate_inp"))) return GgmlType::F16;
  const bool quantized_base = kernels::type_info(mix.base).block_size > 1;
  const GgmlType t = mix.pure || !quantized_base ? mix.base : rule_type(mix, model, name, row_length);
  if (fits(t, row_length)) return t;
  const GgmlType fallback = fallback_type(t).value_or(GgmlType::F16);
  return fits(fallback, row_length) ? fallback : GgmlType::F16;
}

}  // namespace inferscope
