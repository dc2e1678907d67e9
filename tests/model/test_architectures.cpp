// phi3, gemma, gemma2, qwen2, qwen2moe and mistral end to end: a tiny random model of each (the
// make-model writer), prefill plus decode steps through the engine, against a naive double-precision
// forward pass written here from each architecture's definition (reading the tensors by their
// GGUF names, not through the engine's weight binding).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/cpu_forward_pass.h"
#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/model/random_model.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize.h"
#include "kernels/formats/fp16.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]
using Vec = std::vector<double>;

constexpr int64_t kPrefill = 44;  // longer than the tiny presets' window of 24
constexpr int64_t kDecode = 4;

// Matrix `index` of tensor `name` (of a stack of expert matrices: [cols][rows][n_expert]).
Matrix load_matrix(const gguf::File& f, const std::string& name, int64_t index = 0) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  Matrix m(static_cast<size_t>(t->ne[1]), Vec(static_cast<size_t>(t->ne[0])));
  std::vector<float> row(static_cast<size_t>(t->ne[0]));
  for (int64_t r = 0; r < t->ne[1]; ++r) {
    const uint8_t* data = t->data + (index * t->ne[1] + r) * t->row_bytes;
    EXPECT_TRUE(kernels::dequantize_row(t->type, data, row.data(), t->ne[0]));
    std::copy(row.begin(), row.end(), m[static_cast<size_t>(r)].begin());
  }
  return m;
}

Vec load_vector(const gguf::File& f, const std::string& name) { return load_matrix(f, name).at(0); }

Vec matvec(const Matrix& w, const Vec& x, size_t first_row = 0, size_t rows = 0) {
  if (rows == 0) rows = w.size();
  Vec y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < x.size(); ++c) y[r] += w[first_row + r][c] * x[c];
  }
  return y;
}

Vec rms_norm(const Vec& x, const Vec& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * w[i];
  return y;
}

// RMSNorm of each head (w.size() values) of x: qwen3's q/k norms.
void head_norm(Vec& x, const Vec& w, double eps) {
  for (size_t h = 0; h < x.size(); h += w.size()) {
    const Vec head(x.begin() + h, x.begin() + h + w.size());
    const Vec normed = rms_norm(head, w, eps);
    std::copy(normed.begin(), normed.end(), x.begin() + h);
  }
}

void add_to(Vec& y, const Vec& x) {
  for (size_t i = 0; i < y.size(); ++i) y[i] += x[i];
}

// RoPE frequency scaling from its definitions (not the engine's RopeParams):
//   theta_i = pos base^(-2i/hd) / factor_i   (Llama 3.1 rope_freqs, Phi-3 LongRoPE factors)
//   linear: theta_i *= scale; YaRN (Hugging Face's _compute_yarn_parameters): the inverse
//   frequency blends interpolation (/ factor) and extrapolation with a linear ramp over pairs
//   [low, high], and cos/sin are multiplied by attn (LongRoPE's and YaRN's attention factor).
struct RopeRef {
  double base = 10000.0;
  double scale = 1.0;  // linear: 1 / factor
  Vec factors;         // empty: all 1
  double attn = 1.0;
  double yarn_factor = 0.0;  // > 0: YaRN with this factor and the ramp below
  double yarn_low = 0.0, yarn_high = 0.0;
};

// RoPE on every head: NEOX pairs (i, i + hd/2), otherwise (2i, 2i+1).
void rope(Vec& x, int64_t n_heads, int64_t hd, int64_t pos, const RopeRef& r, bool neox) {
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < hd / 2; ++i) {
      double inv_freq = std::pow(r.base, -2.0 * static_cast<double>(i) / hd);
      if (!r.factors.empty()) inv_freq /= r.factors[static_cast<size_t>(i)];
      if (r.yarn_factor > 0) {
        const double width = r.yarn_high == r.yarn_low ? 0.001 : r.yarn_high - r.yarn_low;
        const double ramp = std::clamp((static_cast<double>(i) - r.yarn_low) / width, 0.0, 1.0);
        const double extrapolation = 1.0 - ramp;
        inv_freq = inv_freq / r.yarn_factor * (1.0 - extrapolation) + inv_freq * extrapolation;
      } else {
        inv_freq *= r.scale;
      }
      const double theta = static_cast<double>(pos) * inv_freq;
      const size_t a = static_cast<size_t>(h * hd + (neox ? i : 2 * i));
      const size_t b = static_cast<size_t>(h * hd + (neox ? i + hd / 2 : 2 * i + 1));
      const double xa = x[a], xb = x[b];
      x[a] = r.attn * (xa * std::cos(theta) - xb * std::sin(theta));
      x[b] = r.attn * (xa * std::sin(theta) + xb * std::cos(theta));
    }
  }
}

double round_f16(double v) { return kernels::round_to_fp16(static_cast<float>(v)); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1.0 + std::exp(-x)); }

// down(silu(gate h) * up h).
Vec swiglu_ffn(const Matrix& gate, const Matrix& up, const Matrix& down, const Vec& h) {
  const Vec g = matvec(gate, h), u = matvec(up, h);
  Vec a(g.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = silu(g[i]) * u[i];
  return matvec(down, a);
}

// A mixture of SwiGLU experts on h: softmax over the router's logits, the k most probable
// experts (Mixtral: their probabilities renormalized over the k), their outputs summed by those
// weights; qwen2moe adds its shared expert times sigmoid(ffn_gate_inp_shexp . h).
Vec reference_moe(const gguf::File& f, const RandomModelShape& s, const std::string& p, const Vec& h) {
  const Vec logits = matvec(load_matrix(f, p + "ffn_gate_inp.weight"), h);
  const double max = *std::max_element(logits.begin(), logits.end());
  Vec prob(logits.size());
  double sum = 0;
  for (size_t e = 0; e < prob.size(); ++e) sum += (prob[e] = std::exp(logits[e] - max));
  for (double& v : prob) v /= sum;
  std::vector<size_t> order(prob.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prob[a] > prob[b]; });
  order.resize(static_cast<size_t>(s.n_expert_used));
  double chosen = 0;
  for (size_t e : order) chosen += prob[e];
  const bool renormalize = s.arch != "qwen2moe";
  Vec out(h.size(), 0.0);
  for (size_t e : order) {
    const auto ie = static_cast<int64_t>(e);
    const Vec y = swiglu_ffn(load_matrix(f, p + "ffn_gate_exps.weight", ie), load_matrix(f, p + "ffn_up_exps.weight", ie),
                             load_matrix(f, p + "ffn_down_exps.weight", ie), h);
    const double weight = renormalize ? prob[e] / chosen : prob[e];
    for (size_t i = 0; i < out.size(); ++i) out[i] += weight * y[i];
  }
  if (s.n_ff_shared == 0) return out;
  const Vec shared = swiglu_ffn(load_matrix(f, p + "ffn_gate_shexp.weight"), load_matrix(f, p + "ffn_up_shexp.weight"),
                                load_matrix(f, p + "ffn_down_shexp.weight"), h);
  const Vec gate_inp = load_vector(f, p + "ffn_gate_inp_shexp.weight");
  double dot = 0;
  for (size_t i = 0; i < h.size(); ++i) dot += gate_inp[i] * h[i];
  const double gate = 1.0 / (1.0 + std::exp(-dot));
  for (size_t i = 0; i < out.size(); ++i) out[i] += gate * shared[i];
  return out;
}

constexpr int64_t kContext = 64;  // the engine's session context in these tests

struct ReferenceOptions {
  bool sliding_window = true;  // false: ignore the window (to show that it matters)
  bool rope_scaling = true;    // false: plain RoPE (to show that the scaling matters)
  // false: every layer rotates with the file's RoPE (gemma3's window layers' own base and
  // smollm3's layers without RoPE ignored, to show that they matter)
  bool layer_ropes = true;
  int64_t n_ctx = kContext;    // session context: picks LongRoPE's long or short factors
};

// The shape's RoPE scaling, from the tensors by name and the definitions in RandomModelShape.
RopeRef reference_rope(const gguf::File& f, const RandomModelShape& s, int64_t hd, const ReferenceOptions& o) {
  RopeRef r;
  r.base = s.rope_freq_base;
  if (!o.rope_scaling) return r;
  if (s.rope_scaling == "llama3") r.factors = load_vector(f, "rope_freqs.weight");
  if (s.rope_scaling == "longrope") {
    r.factors = load_vector(f, o.n_ctx > s.rope_orig_ctx ? "rope_factors_long.weight" : "rope_factors_short.weight");
    const double scale = static_cast<double>(s.n_ctx) / static_cast<double>(s.rope_orig_ctx);
    r.attn = std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(s.rope_orig_ctx)));
  }
  if (s.rope_scaling == "linear") r.scale = 1.0 / s.rope_scaling_factor;
  if (s.rope_scaling == "yarn") {
    r.yarn_factor = s.rope_scaling_factor;
    // Hugging Face's YaRN mscale, divided by the same with mscale_all_dim when there is one.
    r.attn = (0.1 * std::log(s.rope_scaling_factor) + 1.0) /
             (0.1 * s.rope_yarn_log_mul * std::log(s.rope_scaling_factor) + 1.0);
    auto dim = [&](double rotations) {
      return hd * std::log(static_cast<double>(s.rope_orig_ctx) / (rotations * 2.0 * M_PI)) / (2.0 * std::log(r.base));
    };
    r.yarn_low = std::max(0.0, std::floor(dim(32.0)));
    r.yarn_high = std::min(static_cast<double>(hd - 1), std::ceil(dim(1.0)));
  }
  return r;
}

// Logits of every position of `tokens`, from the definitions:
//   llama/mistral: NORM RoPE, SwiGLU.      qwen2: + q/k/v biases, NEOX RoPE.
//   qwen3, qwen3moe: no biases, RMSNorm of each Q and K head before NEOX RoPE.
//   mixtral, qwen2moe: a mixture of SwiGLU experts (reference_moe) instead of the FFN.
//   phi3: fused attn_qkv and ffn_up (gate rows first), NEOX, sliding window on all layers.
//   gemma: embeddings * sqrt(n_embd), GeGLU (tanh gelu), NEOX, head size from key_length.
//   gemma2: gemma + post-attention/post-FFN norms, tanh soft-capping of scores and logits,
//           sliding window on layers 0, 2, 4, ...
//   gemma3: gemma2 without soft-capping, + q/k head norms; the window on layers il % 6 < 5,
//           whose RoPE has base 10000 and no scaling (the others: the file's base and scaling).
//   smollm3: llama without RoPE on layers 3, 7, 11, ...
//   mistral3: llama; YaRN's magnitude divided by mscale_all_dim's, queries times the attention
//             temperature 1 + beta ln(floor(pos / original context) + 1).
// K and V are rounded to F16 as the engine's cache stores them (a storage format, not an
// approximation of the math).
std::vector<Vec> reference_logits(const gguf::File& f, const RandomModelShape& s, const std::vector<int32_t>& tokens,
                                  ReferenceOptions options = {}) {
  const std::string& arch = s.arch;
  const bool gemma3 = arch == "gemma3", gemma = arch == "gemma" || arch == "gemma2" || gemma3;
  const bool gemma2 = arch == "gemma2", post_norms = gemma2 || gemma3, phi3 = arch == "phi3";
  const int64_t hd = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
  const int64_t nq = hd * s.n_head, nkv = hd * s.n_head_kv, T = static_cast<int64_t>(tokens.size());
  const bool neox = arch != "llama" && arch != "smollm3" && arch != "mistral3";
  const Matrix embd = load_matrix(f, "token_embd.weight");
  const RopeRef rope_ref = reference_rope(f, s, hd, options);

  std::vector<Vec> x(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    x[t] = embd[static_cast<size_t>(tokens[t])];
    if (gemma) {
      for (double& v : x[t]) v *= std::sqrt(static_cast<double>(s.n_embd));
    }
  }
  for (int64_t il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const bool local = gemma3 ? il % 6 < 5 : (phi3 || il % 2 == 0);
    const bool windowed = options.sliding_window && s.n_swa > 0 && local;
    const bool rotated = !(options.layer_ropes && arch == "smollm3" && (il + 1) % 4 == 0);
    const RopeRef layer_rope = options.layer_ropes && gemma3 && local ? RopeRef{.base = 10000.0} : rope_ref;
    Matrix wq, wk, wv;
    if (phi3) {
      wq = load_matrix(f, p + "attn_qkv.weight");  // rows: Q, then K, then V
    } else {
      wq = load_matrix(f, p + "attn_q.weight");
      wk = load_matrix(f, p + "attn_k.weight");
      wv = load_matrix(f, p + "attn_v.weight");
    }
    const Matrix wo = load_matrix(f, p + "attn_output.weight");
    std::vector<Vec> q(static_cast<size_t>(T)), k(static_cast<size_t>(T)), v(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
      const Vec h = rms_norm(x[t], load_vector(f, p + "attn_norm.weight"), s.rms_eps);
      q[t] = matvec(wq, h, 0, static_cast<size_t>(nq));
      k[t] = phi3 ? matvec(wq, h, static_cast<size_t>(nq), static_cast<size_t>(nkv)) : matvec(wk, h);
      v[t] = phi3 ? matvec(wq, h, static_cast<size_t>(nq + nkv), static_cast<size_t>(nkv)) : matvec(wv, h);
      if (arch == "qwen2" || arch == "qwen2moe") {
        add_to(q[t], load_vector(f, p + "attn_q.bias"));
        add_to(k[t], load_vector(f, p + "attn_k.bias"));
        add_to(v[t], load_vector(f, p + "attn_v.bias"));
      }
      if (arch == "qwen3" || arch == "qwen3moe" || gemma3) {
        head_norm(q[t], load_vector(f, p + "attn_q_norm.weight"), s.rms_eps);
        head_norm(k[t], load_vector(f, p + "attn_k_norm.weight"), s.rms_eps);
      }
      if (rotated) {
        rope(q[t], s.n_head, hd, t, layer_rope, neox);
        rope(k[t], s.n_head_kv, hd, t, layer_rope, neox);
      }
      if (s.attn_temp_scale > 0 && options.rope_scaling) {
        // Ministral 3's attention temperature over the original context's positions.
        const double temperature = 1.0 + s.attn_temp_scale * std::log(std::floor(double(t) / s.rope_orig_ctx) + 1.0);
        for (double& e : q[t]) e *= temperature;
      }
      for (double& e : k[t]) e = round_f16(e);
      for (double& e : v[t]) e = round_f16(e);
    }
    for (int64_t t = 0; t < T; ++t) {
      Vec attn(static_cast<size_t>(nq), 0.0);
      const int64_t first = windowed ? std::max<int64_t>(0, t - s.n_swa + 1) : 0;
      for (int64_t h = 0; h < s.n_head; ++h) {
        const int64_t kvh = h / (s.n_head / s.n_head_kv);
        Vec score(static_cast<size_t>(t + 1), -INFINITY);
        for (int64_t j = first; j <= t; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < hd; ++d) dot += q[t][h * hd + d] * k[j][kvh * hd + d];
          score[j] = dot / std::sqrt(static_cast<double>(hd));
          if (gemma2) score[j] = s.attn_softcap * std::tanh(score[j] / s.attn_softcap);
        }
        const double max = *std::max_element(score.begin() + first, score.end());
        double sum = 0;
        for (int64_t j = first; j <= t; ++j) sum += (score[j] = std::exp(score[j] - max));
        for (int64_t j = first; j <= t; ++j) {
          for (int64_t d = 0; d < hd; ++d) attn[h * hd + d] += score[j] / sum * v[j][kvh * hd + d];
        }
      }
      Vec o = matvec(wo, attn);
      if (post_norms) o = rms_norm(o, load_vector(f, p + "post_attention_norm.weight"), s.rms_eps);
      add_to(x[t], o);
    }
    if (s.n_expert > 0) {
      for (int64_t t = 0; t < T; ++t) {
        add_to(x[t], reference_moe(f, s, p, rms_norm(x[t], load_vector(f, p + "ffn_norm.weight"), s.rms_eps)));
      }
      continue;
    }
    const Matrix up = load_matrix(f, p + "ffn_up.weight");
    const Matrix gate = phi3 ? Matrix{} : load_matrix(f, p + "ffn_gate.weight");
    const Matrix down = load_matrix(f, p + "ffn_down.weight");
    for (int64_t t = 0; t < T; ++t) {
      const Vec h = rms_norm(x[t], load_vector(f, p + "ffn_norm.weight"), s.rms_eps);
      const Vec g = phi3 ? matvec(up, h, 0, static_cast<size_t>(s.n_ff)) : matvec(gate, h);
      const Vec u = phi3 ? matvec(up, h, static_cast<size_t>(s.n_ff), static_cast<size_t>(s.n_ff)) : matvec(up, h);
      Vec a(g.size());
      for (size_t i = 0; i < a.size(); ++i) a[i] = (gemma ? gelu_tanh(g[i]) : silu(g[i])) * u[i];
      Vec o = matvec(down, a);
      if (post_norms) o = rms_norm(o, load_vector(f, p + "post_ffw_norm.weight"), s.rms_eps);
      add_to(x[t], o);
    }
  }
  const Matrix out = f.find_tensor("output.weight") ? load_matrix(f, "output.weight") : embd;
  std::vector<Vec> logits(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    logits[t] = matvec(out, rms_norm(x[t], load_vector(f, "output_norm.weight"), s.rms_eps));
    if (gemma2) {
      for (double& l : logits[t]) l = s.final_softcap * std::tanh(l / s.final_softcap);
    }
  }
  return logits;
}

std::vector<int32_t> test_tokens(int64_t n) {
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 37 + 11) % 500 + 1);
  return tokens;
}

// The engine's logits for every position: one prefill batch of kPrefill tokens, then kDecode
// single-token steps.
std::vector<std::vector<float>> engine_logits(const std::string& path, const std::vector<int32_t>& tokens,
                                              int64_t n_ctx = kContext) {
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.message();
  if (!model) return {};
  const int64_t n_vocab = (*model)->config().n_vocab;
  ThreadPool pool(2);
  ForwardOptions options;
  options.n_ctx = n_ctx;
  auto fp = cpu_forward_pass(*model, pool, options);
  EXPECT_TRUE(fp) << fp.message();
  if (!fp) return {};
  std::vector<std::vector<float>> logits;
  std::vector<float> buffer(static_cast<size_t>(kPrefill * n_vocab));
  std::span<const int32_t> all(tokens);
  EXPECT_TRUE((*fp)->forward(0, all.first(kPrefill), true, buffer.data()));
  for (int64_t t = 0; t < kPrefill; ++t) {
    logits.emplace_back(buffer.begin() + t * n_vocab, buffer.begin() + (t + 1) * n_vocab);
  }
  for (int64_t t = kPrefill; t < static_cast<int64_t>(tokens.size()); ++t) {
    EXPECT_TRUE((*fp)->forward(0, all.subspan(static_cast<size_t>(t), 1), false, buffer.data()));
    logits.emplace_back(buffer.begin(), buffer.begin() + n_vocab);
  }
  return logits;
}

template <class A, class B>
double max_abs_diff(const std::vector<A>& a, const std::vector<B>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

struct Case {
  const char* name;
  const char* preset;
  int64_t n_ctx = kContext;         // session context (LongRoPE: > 64 picks the long factors)
  const char* rope_scaling = "";    // overrides the preset's: "yarn" or "linear" (factor 4, original context 32)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Architectures : public ::testing::TestWithParam<Case> {
 protected:
  // Writes the preset's tiny model (stories260K's 512-token vocabulary) into a scratch dir.
  std::string write_model(RandomModelShape* shape) {
    EXPECT_TRUE(random_model_preset(GetParam().preset, shape));
    // Caps low enough to bite on random weights (scores and logits are O(1) here).
    shape->attn_softcap = 2.0f;
    shape->final_softcap = 1.5f;
    if (*GetParam().rope_scaling != 0) {
      shape->rope_scaling = GetParam().rope_scaling;
      shape->rope_scaling_factor = 4.0f;
      shape->rope_orig_ctx = 32;
    }
    RandomModelSpec spec;
    spec.shape = *shape;
    spec.vocab_path = testing::testdata("stories260K.gguf");
    spec.name = GetParam().preset;
    const std::string path = (testing::scratch_dir(std::string("arch-") + GetParam().name) / "model.gguf").string();
    Status st = write_random_model(spec, path);
    EXPECT_TRUE(st) << st.message();
    return path;
  }
};

TEST_P(Architectures, PrefillAndDecodeMatchNaiveReference) {
  RandomModelShape shape;
  const std::string path = write_model(&shape);
  const auto tokens = test_tokens(kPrefill + kDecode);
  const auto got = engine_logits(path, tokens, GetParam().n_ctx);
  ASSERT_EQ(got.size(), tokens.size());
  auto file = gguf::File::open(path);
  ASSERT_TRUE(file) << file.message();
  const auto expected = reference_logits(**file, shape, tokens, {.n_ctx = GetParam().n_ctx});
  // Logits reach 4-10; the engine rounds q and the softmax weights to F16 (relative 5e-4
  // each) and multiplies in F32: measured differences are up to 2.5e-3.
  constexpr double kTolerance = 1e-2;
  for (size_t t = 0; t < tokens.size(); ++t) {
    EXPECT_LT(max_abs_diff(got[t], expected[t]), kTolerance) << GetParam().name << " position " << t;
  }
  if (shape.n_swa > 0) {
    // The window must change the late positions by far more than the tolerance.
    const auto unwindowed =
        reference_logits(**file, shape, tokens, {.sliding_window = false, .n_ctx = GetParam().n_ctx});
    EXPECT_GT(max_abs_diff(unwindowed.back(), expected.back()), 10 * kTolerance) << GetParam().name;
  }
  if (!shape.rope_scaling.empty()) {
    // So is the RoPE scaling (factors, attention factor, YaRN ramp): without it the test fails.
    const auto plain = reference_logits(**file, shape, tokens, {.rope_scaling = false, .n_ctx = GetParam().n_ctx});
    EXPECT_GT(max_abs_diff(plain.back(), expected.back()), 10 * kTolerance) << GetParam().name;
  }
  if (shape.arch == "gemma3" || shape.arch == "smollm3") {
    const auto uniform = reference_logits(**file, shape, tokens, {.layer_ropes = false, .n_ctx = GetParam().n_ctx});
    EXPECT_GT(max_abs_diff(uniform.back(), expected.back()), 10 * kTolerance) << GetParam().name;
  }
  if (shape.rope_scaling == "longrope") {
    // And LongRoPE's choice: the other context's factors give other logits.
    const int64_t other = GetParam().n_ctx > shape.rope_orig_ctx ? shape.rope_orig_ctx : 2 * shape.rope_orig_ctx;
    const auto swapped = reference_logits(**file, shape, tokens, {.n_ctx = other});
    EXPECT_GT(max_abs_diff(swapped.back(), expected.back()), 10 * kTolerance) << GetParam().name;
  }
}

TEST_P(Architectures, ScalarAndSimdKernelsAgree) {
  if (kernels::detected_simd_level() == kernels::SimdLevel::Scalar) GTEST_SKIP() << "no SIMD on this CPU";
  RandomModelShape shape;
  const std::string path = write_model(&shape);
  const auto tokens = test_tokens(kPrefill + kDecode);
  const auto simd = engine_logits(path, tokens, GetParam().n_ctx);
  kernels::set_simd_level(kernels::SimdLevel::Scalar);
  const auto scalar = engine_logits(path, tokens, GetParam().n_ctx);
  kernels::set_simd_level(kernels::detected_simd_level());
  ASSERT_EQ(simd.size(), scalar.size());
  // Both paths round q and the softmax weights to F16; different F32 summation orders flip
  // some of those roundings, which moves logits by up to ~2e-3 (measured).
  for (size_t t = 0; t < simd.size(); ++t) {
    EXPECT_LT(max_abs_diff(simd[t], scalar[t]), 5e-3) << GetParam().name << " position " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiny, Architectures,
                         ::testing::Values(Case{"phi3_tiny", "phi3-tiny"}, Case{"gemma_tiny", "gemma-tiny"},
                                           Case{"gemma2_tiny", "gemma2-tiny"}, Case{"qwen2_tiny", "qwen2-tiny"},
                                           Case{"mistral_tiny", "mistral-tiny"},
                                           // Heads of 48 (not n_embd / n_head), q/k norms.
                                           Case{"qwen3_tiny", "qwen3-tiny"}, Case{"qwen3moe_tiny", "qwen3moe-tiny"},
                                           // Five windowed layers with their own RoPE, one global.
                                           Case{"gemma3_tiny", "gemma3-tiny"},
                                           // Layer 3 without RoPE.
                                           Case{"smollm3_tiny", "smollm3-tiny"},
                                           // YaRN with mscale_all_dim and the attention temperature.
                                           Case{"ministral3_tiny", "ministral3-tiny"},
                                           // Experts and a shared expert wider than n_ff.
                                           Case{"qwen2moe_tiny", "qwen2moe-tiny"},
                                           // Llama 3.1's rope_freqs.weight on every layer.
                                           Case{"llama3_tiny", "llama3-tiny"},
                                           // LongRoPE: context 64 = the original one (short
                                           // factors), 128 above it (long factors).
                                           Case{"phi3_5_tiny_short", "phi3.5-tiny", 64},
                                           Case{"phi3_5_tiny_long", "phi3.5-tiny", 128},
                                           Case{"qwen2_tiny_yarn", "qwen2-tiny", kContext, "yarn"},
                                           Case{"mistral_tiny_linear", "mistral-tiny", kContext, "linear"}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(ArchitectureSupport, UnknownArchitectureIsRefusedWithTheSupportedList) {
  gguf::Writer w;
  w.add_string("general.architecture", "mamba");
  const std::string path = (testing::scratch_dir("arch-unknown") / "mamba.gguf").string();
  ASSERT_TRUE(w.write(path));
  auto model = Model::load(path);
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("unsupported architecture 'mamba'"), std::string::npos) << model.message();
  EXPECT_NE(model.message().find("llama, qwen2, qwen2moe, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, smollm3"),
            std::string::npos)
      << model.message();
}

TEST(ArchitectureSupport, LongRopeNeedsBothFactorTensors) {
  RandomModelSpec spec;
  ASSERT_TRUE(random_model_preset("phi3-tiny", &spec.shape));
  spec.vocab_path = testing::testdata("stories260K.gguf");
  const auto dir = testing::scratch_dir("arch-longrope");
  ASSERT_TRUE(write_random_model(spec, (dir / "plain.gguf").string()));
  auto plain = gguf::File::open((dir / "plain.gguf").string());
  ASSERT_TRUE(plain) << plain.message();
  gguf::Writer w;
  w.copy_metadata(**plain, "");
  for (const gguf::TensorInfo& t : (*plain)->tensors()) w.add_tensor_copy(*plain, t);
  const int64_t half_rot = 16;  // head size 32
  const std::vector<float> ones(half_rot, 1.0f);
  std::vector<uint8_t> bytes(half_rot * sizeof(float));
  std::memcpy(bytes.data(), ones.data(), bytes.size());
  w.add_tensor("rope_factors_long.weight", {half_rot}, kernels::GgmlType::F32, bytes);
  ASSERT_TRUE(w.write((dir / "longrope.gguf").string()));
  auto model = Model::load((dir / "longrope.gguf").string());
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("rope_factors_short.weight"), std::string::npos) << model.message();
}

// llama.cpp (b4747) scales gemma2's queries by 1/sqrt(head size), except for the 27B model
// (46 layers), whose Hugging Face config sets query_pre_attn_scalar = n_embd / n_head.
TEST(ArchitectureSupport, Gemma2QueryScaleFollowsLlamaCpp) {
  for (int64_t layers : {3, 46}) {
    RandomModelSpec spec;
    ASSERT_TRUE(random_model_preset("gemma2-tiny", &spec.shape));
    spec.shape.n_layer = layers;
    spec.vocab_path = testing::testdata("stories260K.gguf");
    const auto path = (testing::scratch_dir("arch-gemma2-scale") / "m.gguf").string();
    ASSERT_TRUE(write_random_model(spec, path));
    auto file = gguf::File::open(path);
    ASSERT_TRUE(file) << file.message();
    auto config = ModelConfig::from_gguf(**file);
    ASSERT_TRUE(config) << config.message();
    const double expected = layers == 46 ? 1.0 / std::sqrt(128.0 / 4) : 1.0 / std::sqrt(64.0);
    EXPECT_NEAR(config->attn_scale, expected, 1e-7) << layers << " layers";
    EXPECT_EQ(config->head_dim, 64);
  }
}

// Realistic presets against the published Hugging Face configs of those models.
TEST(ArchitectureSupport, RealisticPresetsMatchPublishedConfigs) {
  RandomModelShape s;
  ASSERT_TRUE(random_model_preset("gemma2-2b", &s));  // google/gemma-2-2b
  EXPECT_EQ(s.arch, "gemma2");
  EXPECT_EQ(s.n_embd, 2304);
  EXPECT_EQ(s.n_layer, 26);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.n_head_kv, 4);
  EXPECT_EQ(s.n_ff, 9216);
  EXPECT_EQ(s.n_swa, 4096);
  ASSERT_TRUE(random_model_preset("gemma-2b", &s));  // google/gemma-2b: multi-query attention
  EXPECT_EQ(s.arch, "gemma");
  EXPECT_EQ(s.n_head_kv, 1);
  EXPECT_EQ(s.n_ff, 16384);
  ASSERT_TRUE(random_model_preset("phi3-mini", &s));  // microsoft/Phi-3-mini-4k-instruct
  EXPECT_EQ(s.arch, "phi3");
  EXPECT_EQ(s.n_embd, 3072);
  EXPECT_EQ(s.n_ff, 8192);
  EXPECT_EQ(s.n_swa, 2047);
  ASSERT_TRUE(random_model_preset("qwen2-0.5b", &s));  // Qwen/Qwen2-0.5B
  EXPECT_EQ(s.arch, "qwen2");
  EXPECT_EQ(s.n_embd, 896);
  EXPECT_EQ(s.n_head, 14);
  EXPECT_EQ(s.n_head_kv, 2);
  EXPECT_TRUE(s.tied_output);
  ASSERT_TRUE(random_model_preset("qwen3-0.6b", &s));  // Qwen/Qwen3-0.6B: heads of 128 > n_embd / n_head
  EXPECT_EQ(s.arch, "qwen3");
  EXPECT_EQ(s.n_embd, 1024);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.n_ff, 3072);
  ASSERT_TRUE(random_model_preset("qwen3-30b-a3b", &s));  // Qwen/Qwen3-30B-A3B
  EXPECT_EQ(s.n_expert, 128);
  EXPECT_EQ(s.n_expert_used, 8);
  EXPECT_EQ(s.n_ff_expert, 768);
  ASSERT_TRUE(random_model_preset("gemma3-1b", &s));  // google/gemma-3-1b-pt
  EXPECT_EQ(s.arch, "gemma3");
  EXPECT_EQ(s.n_embd, 1152);
  EXPECT_EQ(s.n_layer, 26);
  EXPECT_EQ(s.n_head_kv, 1);
  EXPECT_EQ(s.n_swa, 512);
  ASSERT_TRUE(random_model_preset("gpt-oss-20b", &s));  // openai/gpt-oss-20b
  EXPECT_EQ(s.arch, "gpt-oss");
  EXPECT_EQ(s.n_embd, 2880);
  EXPECT_EQ(s.n_head, 64);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.n_expert, 32);
  EXPECT_EQ(s.n_expert_used, 4);
  EXPECT_EQ(s.n_swa, 128);
  ASSERT_TRUE(random_model_preset("smollm3-3b", &s));  // HuggingFaceTB/SmolLM3-3B
  EXPECT_EQ(s.arch, "smollm3");
  EXPECT_EQ(s.n_layer, 36);
  EXPECT_EQ(s.n_ff, 11008);
  ASSERT_TRUE(random_model_preset("mistral-small-3", &s));  // mistralai/Mistral-Small-3.2-24B-Instruct-2506
  EXPECT_EQ(s.arch, "mistral3");
  EXPECT_EQ(s.n_embd, 5120);
  EXPECT_EQ(s.n_layer, 40);
  EXPECT_EQ(s.n_ff, 32768);
  ASSERT_TRUE(random_model_preset("mistral-7b", &s));  // mistralai/Mistral-7B-v0.3 (llama in GGUF)
  EXPECT_EQ(s.arch, "llama");
  EXPECT_EQ(s.n_head_kv, 8);
  EXPECT_EQ(s.n_ff, 14336);
}

}  // namespace
}  // namespace inferscope
