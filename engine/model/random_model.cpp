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

uint32_t file_type_of(kernels::GgmlType t) {
  switch (t) {
    case kernels::GgmlType::F32: return 0;
    case kernels::GgmlType::F16: return 1;
    case kernels::GgmlType::Q4_0: return 2;
    case kernels::GgmlType::Q8_0: return 7;
    case kernels::GgmlType::BF16: return 32;
    default: return 0;
  }
}

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

std::vector<uint8_t> ones(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n), 1.0f);
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

}  // namespace

bool random_model_preset(const std::string& name, RandomModelShape* shape) {
  if (name == "tinyllama-1.1b") {
    *shape = RandomModelShape{2048, 22, 32, 4, 5632, 0, 0, 2048, false};
    return true;
  }
  if (name == "llama-7b") {
    *shape = RandomModelShape{4096, 32, 32, 32, 11008, 0, 0, 4096, false};
    return true;
  }
  if (name == "mixtral-tiny") {
    *shape = RandomModelShape{512, 4, 8, 4, 1024, 4, 2, 2048, false};
    return true;
  }
  return false;
}

Status write_random_model(const RandomModelSpec& spec, const std::string& output_path) {
  const RandomModelShape& s = spec.shape;
  if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_head_kv <= 0 || s.n_ff <= 0 || s.n_ctx <= 0) {
    return Status::error("every dimension of the model shape must be positive");
  }
  if (s.n_embd % s.n_head != 0 || s.n_head % s.n_head_kv != 0) {
    return Status::error("embedding size must be a multiple of the heads, heads a multiple of the KV heads");
  }
  if (s.n_expert < 0 || s.n_expert_used < 0 || s.n_expert_used > s.n_expert || (s.n_expert > 0) != (s.n_expert_used > 0)) {
    return Status::error("experts used must be between 1 and the expert count (or both 0)");
  }
  const int64_t block = kernels::type_info(spec.type).block_size;
  if (s.n_embd % block != 0 || s.n_ff % block != 0) {
    return Status::error("embedding and feed-forward sizes must be multiples of the " +
                         std::string(kernels::type_name(spec.type)) + " block size " + std::to_string(block));
  }
  auto vocab = gguf::File::open(spec.vocab_path);
  if (!vocab) return vocab.status();
  auto tokens = (*vocab)->get_string_array("tokenizer.ggml.tokens");
  if (!tokens) return tokens.status();
  const int64_t n_vocab = static_cast<int64_t>((*tokens)->size());
  const int64_t head_dim = s.n_embd / s.n_head;

  gguf::Writer w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", spec.name);
  w.add_u32("general.file_type", file_type_of(spec.type));
  w.add_u32("llama.context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32("llama.embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32("llama.block_count", static_cast<uint32_t>(s.n_layer));
  w.add_u32("llama.feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32("llama.attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32("llama.attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_f32("llama.rope.freq_base", 10000.0f);
  w.add_u32("llama.rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.add_u32("llama.vocab_size", static_cast<uint32_t>(n_vocab));
  if (s.n_expert > 0) {
    w.add_u32("llama.expert_count", static_cast<uint32_t>(s.n_expert));
    w.add_u32("llama.expert_used_count", static_cast<uint32_t>(s.n_expert_used));
  }
  w.copy_metadata(**vocab, "tokenizer.");

  uint64_t seed = spec.seed;
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, int64_t mats = 1) {
    std::vector<int64_t> ne = {cols, rows};
    if (mats > 1) ne.push_back(mats);
    w.add_tensor_source(name, ne, spec.type, random_matrix(spec.type, cols, rows * mats, seed++ * 0x9E37 + 17));
  };
  auto norm = [&](const std::string& name) { w.add_tensor(name, {s.n_embd}, kernels::GgmlType::F32, ones(s.n_embd)); };

  matrix("token_embd.weight", s.n_embd, n_vocab);
  norm("output_norm.weight");
  if (!s.tied_output) matrix("output.weight", s.n_embd, n_vocab);
  for (int64_t i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    norm(p + "attn_norm.weight");
    matrix(p + "attn_q.weight", s.n_embd, s.n_embd);
    matrix(p + "attn_k.weight", s.n_embd, head_dim * s.n_head_kv);
    matrix(p + "attn_v.weight", s.n_embd, head_dim * s.n_head_kv);
    matrix(p + "attn_output.weight", s.n_embd, s.n_embd);
    norm(p + "ffn_norm.weight");
    if (s.n_expert > 0) {
      w.add_tensor_source(p + "ffn_gate_inp.weight", {s.n_embd, s.n_expert}, kernels::GgmlType::F32,
                          random_matrix(kernels::GgmlType::F32, s.n_embd, s.n_expert, seed++));
      matrix(p + "ffn_gate_exps.weight", s.n_embd, s.n_ff, s.n_expert);
      matrix(p + "ffn_up_exps.weight", s.n_embd, s.n_ff, s.n_expert);
      matrix(p + "ffn_down_exps.weight", s.n_ff, s.n_embd, s.n_expert);
    } else {
      matrix(p + "ffn_gate.weight", s.n_embd, s.n_ff);
      matrix(p + "ffn_up.weight", s.n_embd, s.n_ff);
      matrix(p + "ffn_down.weight", s.n_ff, s.n_embd);
    }
  }
  return w.write(output_path);
}

}  // namespace inferscope
