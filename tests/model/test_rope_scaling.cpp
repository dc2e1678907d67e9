// RoPE frequency scaling: the kernel's angles with per-pair factors, YaRN's ramp and an
// attention factor against double-precision formulas (both layouts), the rope.scaling.* keys
// the config reads or refuses, LongRoPE's long/short choice, and that the factor tensors change
// the engine's logits. Whole-model comparisons with a naive reference forward pass
// (llama3-tiny, phi3.5-tiny at both contexts, YaRN, linear) are in test_architectures.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tests/support/cpu_forward_pass.h"
#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/model/random_model.h"
#include "engine/model/rope_context.h"
#include "kernels/cpu/ops.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

// theta_i = pos * scale * base^(-2i/n_rot) / factor_i, cos/sin times attn.
TEST(RopeScalingKernel, FactorsDivideTheFrequencyInBothLayouts) {
  const int64_t hd = 16, n_rot = 12, half = n_rot / 2, n_heads = 3;
  const std::vector<float> factors = random_values(half, 7, 1.0f, 8.0f);
  kernels::RopeParams p;
  p.freq_base = 500000.0f;
  p.freq_scale = 0.5f;
  p.freq_factors = factors.data();
  p.attn_factor = 1.25f;
  for (int64_t pos : {0, 1, 17, 4000}) {
    std::vector<float> c(half), s(half);
    kernels::rope_angles(pos, n_rot, p, c.data(), s.data());
    std::vector<double> cd(half), sd(half);
    for (int64_t i = 0; i < half; ++i) {
      const double theta = pos * 0.5 * std::pow(500000.0, -2.0 * i / n_rot) / factors[i];
      cd[i] = 1.25 * std::cos(theta);
      sd[i] = 1.25 * std::sin(theta);
      // Angles grow with pos; F32 keeps ~1e-7 relative of theta.
      const double tol = 2e-6 * std::max(1.0, theta);
      EXPECT_NEAR(c[i], cd[i], tol) << "pos " << pos << " pair " << i;
      EXPECT_NEAR(s[i], sd[i], tol) << "pos " << pos << " pair " << i;
    }
    for (bool neox : {false, true}) {
      const std::vector<float> x = random_values(n_heads * hd, 11 + pos, -1.0f, 1.0f);
      std::vector<float> y = x;
      kernels::rope_apply(y.data(), n_heads, hd, n_rot, c.data(), s.data(), neox);
      for (int64_t h = 0; h < n_heads; ++h) {
        for (int64_t i = 0; i < half; ++i) {
          const int64_t a = h * hd + (neox ? i : 2 * i), b = h * hd + (neox ? i + half : 2 * i + 1);
          EXPECT_NEAR(y[a], x[a] * cd[i] - x[b] * sd[i], 1e-4) << neox;
          EXPECT_NEAR(y[b], x[a] * sd[i] + x[b] * cd[i], 1e-4) << neox;
        }
        for (int64_t d = n_rot; d < hd; ++d) EXPECT_EQ(y[h * hd + d], x[h * hd + d]);  // past n_rot: untouched
      }
    }
  }
}

// Without factors, YaRN or an attention factor, the angles are bit for bit the plain running
// product the engine used before (so files without scaling run exactly as they did).
TEST(RopeScalingKernel, NoScalingIsBitIdenticalToThePlainForm) {
  const int64_t n_rot = 64;
  for (float scale : {1.0f, 0.25f}) {
    for (int64_t pos : {0, 5, 1000, 100000}) {
      std::vector<float> c(n_rot / 2), s(n_rot / 2);
      kernels::RopeParams p;
      p.freq_base = 10000.0f;
      p.freq_scale = scale;
      kernels::rope_angles(pos, n_rot, p, c.data(), s.data());
      const float theta_scale = std::pow(10000.0f, -2.0f / static_cast<float>(n_rot));
      float theta = static_cast<float>(pos);
      for (int64_t i = 0; i < n_rot / 2; ++i) {
        EXPECT_EQ(c[i], std::cos(scale * theta));
        EXPECT_EQ(s[i], std::sin(scale * theta));
        theta *= theta_scale;
      }
      std::vector<float> c2(n_rot / 2), s2(n_rot / 2);
      kernels::rope_angles(pos, n_rot, 10000.0f, scale, c2.data(), s2.data());
      EXPECT_EQ(c, c2);
      EXPECT_EQ(s, s2);
    }
  }
}

// YaRN (Hugging Face's _compute_yarn_parameters): the inverse frequency blends interpolation
// (/ factor) and extrapolation with a linear ramp over pairs [low, high], where low/high are
// the pairs that turn beta_fast / beta_slow times over the original context.
TEST(RopeScalingKernel, YarnRampMatchesTheDefinition) {
  const int64_t n_rot = 64, orig = 4096;
  const double base = 1e6, factor = 4.0;
  auto corr_dim = [&](double turns) { return n_rot * std::log(orig / (turns * 2 * M_PI)) / (2 * std::log(base)); };
  const double low = std::max(0.0, std::floor(corr_dim(32))), high = std::min<double>(n_rot - 1, std::ceil(corr_dim(1)));
  kernels::RopeParams p;
  p.freq_base = static_cast<float>(base);
  p.freq_scale = static_cast<float>(1 / factor);
  p.yarn_ext_factor = 1.0f;
  kernels::rope_yarn_corr_dims(n_rot, orig, p.freq_base, 32.0f, 1.0f, &p.yarn_corr_low, &p.yarn_corr_high);
  EXPECT_EQ(p.yarn_corr_low, low);
  EXPECT_EQ(p.yarn_corr_high, high);
  ASSERT_LT(low + 2, high) << "the ramp should cover a few pairs here";
  const int64_t pos = 300;
  std::vector<float> c(n_rot / 2), s(n_rot / 2);
  kernels::rope_angles(pos, n_rot, p, c.data(), s.data());
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double inv = std::pow(base, -2.0 * i / n_rot);
    const double extrapolation = 1.0 - std::clamp((i - low) / (high - low), 0.0, 1.0);
    const double theta = pos * (inv / factor * (1 - extrapolation) + inv * extrapolation);
    EXPECT_NEAR(c[i], std::cos(theta), 2e-6 * std::max(1.0, theta)) << i;
    EXPECT_NEAR(s[i], std::sin(theta), 2e-6 * std::max(1.0, theta)) << i;
  }
}

// Llama 3.1's published rule (factor 8, low 1, high 4, original context 8192, base 500000, 128
// dims): short wavelengths keep 1, long ones get 8, the band between blends smoothly.
TEST(RopeScalingKernel, Llama3FactorsFollowTheRule) {
  const auto f = llama3_rope_factors(128, 500000.0f, 8.0f, 1.0f, 4.0f, 8192);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_EQ(f.front(), 1.0f);
  EXPECT_EQ(f.back(), 8.0f);
  for (size_t i = 1; i < f.size(); ++i) EXPECT_GE(f[i], f[i - 1]) << i;
  int blended = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const double wavelen = 2 * M_PI * std::pow(500000.0, 2.0 * static_cast<double>(i) / 128);
    if (wavelen < 8192 / 4.0) {
      EXPECT_EQ(f[i], 1.0f) << i;
    }
    if (wavelen > 8192 / 1.0) {
      EXPECT_EQ(f[i], 8.0f) << i;
    }
    if (f[i] > 1.0f && f[i] < 8.0f) ++blended;
  }
  EXPECT_GT(blended, 0);
}

class RopeScalingModel : public ::testing::Test {
 protected:
  std::string write(const std::string& preset, const std::string& file, RandomModelShape* shape_out = nullptr) {
    RandomModelSpec spec;
    EXPECT_TRUE(random_model_preset(preset, &spec.shape)) << preset;
    spec.vocab_path = testing::testdata("stories260K.gguf");
    const std::string path = (testing::scratch_dir("rope-" + preset) / file).string();
    Status st = write_random_model(spec, path);
    EXPECT_TRUE(st) << st.message();
    if (shape_out) *shape_out = spec.shape;
    return path;
  }

  // Copies `path` with its metadata changed by `edit` and the tensors named in `drop` left out.
  std::string rewrite(const std::string& path, const std::string& out_name,
                      const std::function<void(gguf::Writer&)>& edit, const std::vector<std::string>& drop = {}) {
    auto file = gguf::File::open(path);
    EXPECT_TRUE(file) << file.message();
    gguf::Writer w;
    w.copy_metadata(**file, "");
    edit(w);
    for (const gguf::TensorInfo& t : (*file)->tensors()) {
      if (std::find(drop.begin(), drop.end(), t.name) == drop.end()) w.add_tensor_copy(*file, t);
    }
    const std::string out = (std::filesystem::path(path).parent_path() / out_name).string();
    EXPECT_TRUE(w.write(out));
    return out;
  }

  static std::vector<float> last_logits(const std::string& path, int64_t n_ctx) {
    auto model = Model::load(path);
    EXPECT_TRUE(model) << model.message();
    if (!model) return {};
    ThreadPool pool(2);
    ForwardOptions options;
    options.n_ctx = n_ctx;
    auto fp = cpu_forward_pass(*model, pool, options);
    EXPECT_TRUE(fp) << fp.message();
    std::vector<int32_t> tokens(40);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 37 + 11) % 500 + 1);
    std::vector<float> logits(static_cast<size_t>((*model)->config().n_vocab));
    EXPECT_TRUE((*fp)->forward(0, tokens, false, logits.data()));
    return logits;
  }

  static double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return m;
  }
};

TEST_F(RopeScalingModel, Llama3RopeFreqsBindForEveryLayerAndChangeTheLogits) {
  RandomModelShape shape;
  const std::string path = write("llama3-tiny", "model.gguf", &shape);
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  const ModelWeights& w = (*model)->weights();
  ASSERT_TRUE(w.rope_freqs.present());
  EXPECT_EQ(w.rope_freqs.size, 16);
  const auto expected = llama3_rope_factors(32, shape.rope_freq_base, 8.0f, 1.0f, 4.0f, 64);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), w.rope_freqs.data));
  const auto rope = rope_params_for_context((*model)->config(), w, 64);
  EXPECT_EQ(rope.freq_factors, w.rope_freqs.data);
  EXPECT_EQ(rope.attn_factor, 1.0f);
  EXPECT_EQ(rope.freq_scale, 1.0f);  // llama3 files carry no scaling keys

  const std::string without = rewrite(path, "no-freqs.gguf", [](gguf::Writer&) {}, {"rope_freqs.weight"});
  EXPECT_GT(max_diff(last_logits(path, 64), last_logits(without, 64)), 0.1);
}

TEST_F(RopeScalingModel, LongRopePicksLongFactorsAboveTheOriginalContext) {
  RandomModelShape shape;
  const std::string path = write("phi3.5-tiny", "model.gguf", &shape);
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  const ModelConfig& c = (*model)->config();
  const ModelWeights& w = (*model)->weights();
  EXPECT_EQ(c.n_ctx_orig, 64);
  EXPECT_NEAR(c.rope_attn_factor, std::sqrt(1.0 + std::log(512.0 / 64) / std::log(64.0)), 1e-6);
  ASSERT_TRUE(w.rope_factors_long.present() && w.rope_factors_short.present());
  EXPECT_EQ(rope_params_for_context(c, w, 64).freq_factors, w.rope_factors_short.data);  // llama.cpp: n_ctx > orig
  EXPECT_EQ(rope_params_for_context(c, w, 65).freq_factors, w.rope_factors_long.data);
  EXPECT_EQ(rope_params_for_context(c, w, 64).attn_factor, c.rope_attn_factor);  // both contexts
  ThreadPool pool(1);
  auto fp = cpu_forward_pass(*model, pool, {.n_ctx = 128});
  ASSERT_TRUE(fp) << fp.message();
  EXPECT_EQ((*fp)->plan().rope.freq_factors, w.rope_factors_long.data);
  EXPECT_GT(max_diff(last_logits(path, 64), last_logits(path, 128)), 0.1);

  // Older files without attn_factor: computed from the context ratio, as the converter does;
  // an explicit key wins.
  const std::string no_attn =
      rewrite(path, "no-attn.gguf", [](gguf::Writer& w) { EXPECT_TRUE(w.remove("phi3.rope.scaling.attn_factor")); });
  auto m2 = Model::load(no_attn);
  ASSERT_TRUE(m2) << m2.message();
  EXPECT_NEAR((*m2)->config().rope_attn_factor, c.rope_attn_factor, 1e-6);
  const std::string explicit_attn =
      rewrite(path, "attn.gguf", [](gguf::Writer& w) { w.add_f32("phi3.rope.scaling.attn_factor", 1.5f); });
  auto m3 = Model::load(explicit_attn);
  ASSERT_TRUE(m3) << m3.message();
  EXPECT_EQ((*m3)->config().rope_attn_factor, 1.5f);
}

TEST_F(RopeScalingModel, FileWithoutScalingKeepsPlainRope) {
  const std::string path = write("mistral-tiny", "model.gguf");
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  const ModelConfig& c = (*model)->config();
  EXPECT_EQ(c.rope_scaling, RopeScaling::Linear);  // llama.cpp's default type, factor 1
  const auto rope = rope_params_for_context(c, (*model)->weights(), 64);
  EXPECT_EQ(rope.freq_factors, nullptr);
  EXPECT_EQ(rope.freq_scale, 1.0f);
  EXPECT_EQ(rope.attn_factor, 1.0f);
  EXPECT_EQ(rope.yarn_ext_factor, 0.0f);
}

TEST_F(RopeScalingModel, YarnConfigCarriesRampAndMagnitude) {
  const std::string base = write("qwen2-tiny", "model.gguf");
  const std::string path = rewrite(base, "yarn.gguf", [](gguf::Writer& w) {
    w.add_string("qwen2.rope.scaling.type", "yarn");
    w.add_f32("qwen2.rope.scaling.factor", 4.0f);
    w.add_u32("qwen2.rope.scaling.original_context_length", 128);
  });
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  const ModelConfig& c = (*model)->config();
  EXPECT_EQ(c.rope_scaling, RopeScaling::Yarn);
  EXPECT_EQ(c.n_ctx_orig, 128);
  EXPECT_FLOAT_EQ(c.rope_freq_scale, 0.25f);
  EXPECT_NEAR(c.rope_attn_factor, 1.0 + 0.1 * std::log(4.0), 1e-6);
  const auto rope = rope_params_for_context(c, (*model)->weights(), 64);
  EXPECT_EQ(rope.yarn_ext_factor, 1.0f);
  EXPECT_LT(rope.yarn_corr_low, rope.yarn_corr_high);
}

// Keys the engine cannot honour are refused at load, naming the key.
TEST_F(RopeScalingModel, UnsupportedScalingKeysAreRefusedByName) {
  const std::string base = write("qwen2-tiny", "model.gguf");
  struct Bad {
    const char* key;
    std::function<void(gguf::Writer&)> edit;
  };
  const std::vector<Bad> cases = {
      {"rope.scaling.type", [](gguf::Writer& w) { w.add_string("qwen2.rope.scaling.type", "dynamic"); }},
      {"rope.scaling.yarn_log_multiplier",
       [](gguf::Writer& w) {
         w.add_string("qwen2.rope.scaling.type", "yarn");
         w.add_f32("qwen2.rope.scaling.yarn_log_multiplier", -1.0f);  // out of range (Ministral 3 has 1)
       }},
      {"rope.scaling.yarn_ext_factor", [](gguf::Writer& w) { w.add_f32("qwen2.rope.scaling.yarn_ext_factor", 0.5f); }},
      {"rope.scaling.yarn_attn_factor", [](gguf::Writer& w) { w.add_f32("qwen2.rope.scaling.yarn_attn_factor", 1.2f); }},
  };
  int n = 0;
  for (const Bad& bad : cases) {
    const std::string path = rewrite(base, "bad" + std::to_string(n++) + ".gguf", bad.edit);
    auto model = Model::load(path);
    ASSERT_FALSE(model) << bad.key;
    EXPECT_NE(model.message().find(bad.key), std::string::npos) << model.message();
  }
}

TEST_F(RopeScalingModel, NonPositiveFactorsAreRefused) {
  const std::string base = write("llama3-tiny", "model.gguf");
  std::vector<float> zeros(16, 0.0f);
  std::vector<uint8_t> bytes(zeros.size() * sizeof(float));
  std::memcpy(bytes.data(), zeros.data(), bytes.size());
  const std::string path = rewrite(
      base, "zero.gguf",
      [&](gguf::Writer& w) { w.add_tensor("rope_freqs.weight", {16}, kernels::GgmlType::F32, bytes); },
      {"rope_freqs.weight"});
  auto model = Model::load(path);
  ASSERT_FALSE(model);
  EXPECT_NE(model.message().find("rope_freqs.weight"), std::string::npos) << model.message();
}

}  // namespace
}  // namespace inferscope
