// Per-tensor weight types of a quantized model file: llama-quantize's file types (q4_k_m, q5_k_s,
// q2_k, q8_0...), their general.file_type values, and llama.cpp's rules for which tensors get
// more bits (llama_tensor_get_type, llama-family rules) and which type replaces a K-quant when a
// row is not a multiple of 256. Used by the quantize command and by make-model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/formats/ggml_type.h"

namespace inferscope {

namespace gguf {
class File;
}

struct QuantMix {
  std::string name = "f16";    // canonical name, e.g. "q4_k_m"
  uint32_t file_type = 1;      // general.file_type (llama_ftype)
  kernels::GgmlType base = kernels::GgmlType::F16;  // type of matrices no rule changes
  bool pure = false;           // every matrix `base` (llama-quantize --pure); fallbacks still apply
};

// Parses a file type name (case-insensitive): f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1,
// iq4_nl, iq4_xs, tq1_0, tq2_0, q2_k, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k,
// mxfp4_moe (the expert stacks MXFP4, every other matrix Q8_0: gpt-oss's release format),
// and llama-quantize's aliases q3_k, q4_k, q5_k (= the _m mixes); and our int8 (INT8 per output
// channel: every matrix I8 with a per-row scale tensor, int8_weights.h; general.file_type 1024,
// a value llama.cpp does not know, since it will not run such a file), and f16_2of4 (the blocks'
// linear layers 2:4 sparse, kernels/cpu/sparse24.h; the rest F16; file type 1025). nullopt when
// unknown.
std::optional<QuantMix> quant_mix_from_name(std::string_view name, bool pure = false);
// The accepted names, comma-separated (for help texts and errors).
std::string quant_mix_names();
// The mixes the app offers for requantize on load, best quality first.
inline constexpr const char* kRequantizeTargets[] = {"f16",  "q8_0",   "int8",  "q6_k",   "q5_k_m", "q4_k_m",
                                                     "q4_0", "q3_k_m", "q2_k", "iq4_nl", "iq4_xs", "tq2_0"};

// What the rules need to know about the whole model.
struct QuantModelInfo {
  int64_t n_layer = 0;          // blocks (the ffn_down rules)
  int64_t n_attention_wv = 0;   // attn_v / attn_qkv tensors (the attn_v rules)
  int64_t n_head = 1;
  int64_t n_head_kv = 1;
  int64_t n_expert = 0;
  bool has_output = true;       // false: token_embd doubles as the output head

  // From a model file's metadata and tensor names.
  static QuantModelInfo from_gguf(const gguf::File& file);
};

// llama.cpp's test of whether a tensor is quantized at all: a weight of 2 or more dimensions that
// is not a norm, an MoE router (ffn_gate_inp), or a position/type embedding table.
bool is_quantizable_tensor(std::string_view name, int n_dims);

// The type tensor `name` gets in `mix`. Tensors that are not quantizable keep `current`.
// row_length is ne[0]; when it does not fit the chosen type's block, llama.cpp's fallback applies
// (Q2_K/Q3_K/IQ4_XS -> IQ4_NL, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, TQ1_0/TQ2_0 -> Q4_0, then F16
// if even that does not fit). Where llama.cpp has no fallback (a 32-block type that does not fit)
// it refuses the model; we use F16 for that tensor instead.
kernels::GgmlType choose_tensor_type(const QuantMix& mix, const QuantModelInfo& model, std::string_view name,
                                     int n_dims, int64_t row_length, kernels::GgmlType current);

}  // namespace inferscope
