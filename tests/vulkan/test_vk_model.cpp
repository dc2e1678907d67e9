// Whole models on the Vulkan backend, loaded at run time as the CLI and the app load it: the
// same greedy tokens as llama.cpp's reference outputs and as the CPU backend, logits close to
// the CPU backend's for every architecture and weight type, and clean errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/backend/backend_registry.h"
#include "engine/backend/vulkan/vk_ops.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"
#include "engine/model/random_model.h"
#include "engine/runtime/session.h"
#include "engine/weightlab/head_pruning.h"
#include "engine/weightlab/weight_method.h"
#include "engine/weightlab/weight_recipe.h"
#include "tests/support/distributions.h"
#include "tests/support/hybrid_backend_check.h"
#include "tests/support/mtp_backend_check.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/reference_2026.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/test_models.h"
#include "tests/support/testdata.h"
#include "tests/support/vulkan_device.h"

namespace inferscope {
namespace {

using nlohmann::json;
using testing::case_name;
using testing::compare_logits;
using testing::LogitComparison;

// Skips the calling test when the Vulkan backend or a device is missing, saying why.
std::vector<int32_t> greedy(Session& s, const std::string& prompt, int n) {
  GenerateRequest req;
  req.prompt = prompt;
  req.sampling.temperature = 0.0f;
  req.max_tokens = n;
  auto r = s.generate(req);
  EXPECT_TRUE(r) << r.message();
  return r ? r->token_ids : std::vector<int32_t>{};
}

void expect_logits_match_cpu(const std::shared_ptr<const Model>& model, double max_kl, double max_rel_diff) {
  auto cpu = testing::open_backend_session(model, "cpu");
  auto gpu = testing::open_backend_session(model, "vulkan");
  ASSERT_TRUE(cpu && gpu);
  const int64_t n_vocab = model->config().n_vocab;
  std::vector<int32_t> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back(static_cast<int32_t>((i * 7919 + 13) % n_vocab));
  std::vector<float> a, b;
  ASSERT_TRUE(cpu->evaluate(tokens, a));
  ASSERT_TRUE(gpu->evaluate(tokens, b));
  const LogitComparison c = compare_logits(a, b, n_vocab);
  std::printf("KL(cpu||vulkan) max %.3g, max |diff| / logit range %.3g, top-1 disagreements %d of %zu\n", c.max_kl,
              c.max_rel_diff, c.top1_disagreements, tokens.size());
  EXPECT_LT(c.max_kl, max_kl);
  EXPECT_LT(c.max_rel_diff, max_rel_diff);
  // Decoding token by token (the matrix-vector path) gives the prefill's last logits.
  gpu->executor().clear();
  std::vector<float> last(static_cast<size_t>(n_vocab));
  for (int32_t t : tokens) ASSERT_TRUE(gpu->executor().forward(0, std::span<const int32_t>(&t, 1), false, last.data()));
  const std::vector<float> prefill_last(b.end() - n_vocab, b.end());
  const LogitComparison d = compare_logits(prefill_last, last, n_vocab);
  EXPECT_LT(d.max_kl, max_kl);
  EXPECT_LT(d.max_rel_diff, max_rel_diff);
}

struct ReferenceCase {
  const char* model;
  const char* reference;
  bool exact_greedy;
};
void PrintTo(const ReferenceCase& c, std::ostream* os) { *os << c.model; }

class VulkanReferenceModel : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(VulkanReferenceModel, GreedyTokensMatchLlamaCppAndTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  const ReferenceCase& c = GetParam();
  std::ifstream in(testing::testdata(c.reference));
  const json ref = json::parse(in);
  auto model = Model::load(testing::testdata(c.model));
  ASSERT_TRUE(model) << model.message();
  std::vector<int32_t> expected;
  size_t trusted = 0;
  bool gap_ok = true;
  for (const json& s : ref["steps"]) {
    expected.push_back(s["id"].get<int32_t>());
    gap_ok = gap_ok && s["top5"][0][1].get<double>() - s["top5"][1][1].get<double>() >= 0.05;
    if (gap_ok) ++trusted;
  }
  if (c.exact_greedy) trusted = expected.size();
  auto gpu = testing::open_backend_session(*model, "vulkan");
  auto cpu = testing::open_backend_session(*model, "cpu");
  ASSERT_TRUE(gpu && cpu);
  const std::string prompt = ref["prompt"].get<std::string>();
  const auto gpu_ids = greedy(*gpu, prompt, static_cast<int>(expected.size()));
  const auto cpu_ids = greedy(*cpu, prompt, static_cast<int>(expected.size()));
  ASSERT_GE(gpu_ids.size(), trusted);
  for (size_t i = 0; i < trusted; ++i) {
    EXPECT_EQ(gpu_ids[i], expected[i]) << "step " << i << " (llama.cpp)";
    EXPECT_EQ(gpu_ids[i], cpu_ids[i]) << "step " << i << " (CPU backend)";
  }
  EXPECT_NE(gpu->executor().backend_name().find("vulkan"), std::string::npos);
}

TEST_P(VulkanReferenceModel, LogitsMatchTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata(GetParam().model));
  ASSERT_TRUE(model) << model.message();
  expect_logits_match_cpu(*model, 1e-4, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, VulkanReferenceModel,
    ::testing::Values(
        ReferenceCase{"stories260K.gguf", "reference/stories260K.llama.cpp-b4747.json", true},
        ReferenceCase{"derived/stories260K-moe4-identical.gguf", "reference/stories260K-moe4-identical.llama.cpp-b4747.json", true},
        ReferenceCase{"derived/stories260K-moe4-distinct.gguf", "reference/stories260K-moe4-distinct.llama.cpp-b4747.json", true},
        ReferenceCase{"derived/stories260K-qwen2moe.gguf", "reference/stories260K-qwen2moe.llama.cpp-b4747.json", false},
        ReferenceCase{"llama-2-tiny-random.gguf", "reference/llama-2-tiny-random.llama.cpp-b4747.json", false}),
    [](const ::testing::TestParamInfo<ReferenceCase>& info) { return case_name(info.param.model); });

// The architectures of 2025-2026 against the 2026 reference (tests/support/reference_2026.h).
class VulkanReference2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanReference2026, GreedyTokensAndLogProbsMatchLlamaCpp) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  auto gpu = testing::open_backend_session(*model, "vulkan");
  ASSERT_TRUE(gpu);
  testing::expect_matches_reference_2026(gpu->executor(), *ref);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, VulkanReference2026, ::testing::ValuesIn(testing::kGpuReferences2026),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });
// Int8 products on the files llama.cpp multiplies in int8 too (kGpuReferences2026 says why
// CUDA's prefill is not held to them).
INSTANTIATE_TEST_SUITE_P(LlamaCpp2026Int8, VulkanReference2026, ::testing::Values("qwen35-tiny-q8_0", "gemma4-tiny-q8_0"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// The window models in chunks of 4 rows: their window layers hold only the window pool's blocks
// (the window tables with the entries they let go of), and still give the reference's steps.
class VulkanWindowPool : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanWindowPool, MatchesTheReference) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  SessionOptions so;
  so.n_ctx = 256;
  so.max_batch = 4;
  so.n_threads = 2;
  so.backend.backend = "vulkan";
  auto gpu = Session::create(*model, so);
  ASSERT_TRUE(gpu) << gpu.message();
  EXPECT_LT((*gpu)->executor().memory().kv_cache_bytes,
            KvLayout::for_model((*model)->config().kv_rows(), 256, 1, {}).bytes());
  testing::expect_matches_reference_2026((*gpu)->executor(), *ref);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, VulkanWindowPool,
                         ::testing::Values("gemma3-tiny-f32", "gpt-oss-tiny-f32-seed7", "gemma4-tiny-f32"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// Every architecture and RoPE variant the CPU backend runs, as tiny random models.
class VulkanArchitecture : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanArchitecture, LogitsMatchTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  RandomModelSpec spec;
  ASSERT_TRUE(random_model_preset(GetParam(), &spec.shape));
  spec.vocab_path = testing::testdata("stories260K.gguf");
  spec.name = GetParam();
  const std::string path = (testing::scratch_dir("vulkan-arch") / (std::string(GetParam()) + ".gguf")).string();
  ASSERT_TRUE(write_random_model(spec, path));
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  expect_logits_match_cpu(*model, 1e-3, 2e-3);
}

INSTANTIATE_TEST_SUITE_P(Tiny, VulkanArchitecture,
                         ::testing::Values("mistral-tiny", "mixtral-tiny", "qwen2moe-tiny", "qwen2-tiny", "qwen3-tiny",
                                           "qwen3moe-tiny", "gemma3-tiny", "smollm3-tiny", "ministral3-tiny", "phi3-tiny",
                                           "phi3.5-tiny", "llama3-tiny", "gemma-tiny", "gemma2-tiny", "qwen3.5-tiny",
                                           "qwen3.5moe-tiny", "qwen3next-tiny", "gemma4-tiny"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// Every weight type, through llama.cpp's own quantized files of one model. For quantized types
// both backends multiply int8 activations: the same ones for the 32-block types (KL ~0.005 from
// rounding flips and the CPU's F16 softmax weights), per 256 values on the CPU (Q8_K) and per
// 32 on Vulkan for the K-quant and ternary types (their two quantization errors add: KL up to
// ~0.025), hence the looser bound.
class VulkanWeightType : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanWeightType, LogitsMatchTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata(std::string("quant/") + GetParam() + ".gguf"));
  ASSERT_TRUE(model) << model.message();
  const bool exact_activations = std::string(GetParam()).find('f') == 0 || std::string(GetParam()) == "base-f32";
  expect_logits_match_cpu(*model, exact_activations ? 1e-4 : 5e-2, exact_activations ? 1e-3 : 5e-2);
}

INSTANTIATE_TEST_SUITE_P(Quant, VulkanWeightType,
                         ::testing::Values("base-f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k",
                                           "q3_k", "q4_k", "q4_k_m", "q5_k", "q6_k", "iq4_nl", "tq1_0", "tq2_0"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// The 2026 reference's i-quant files (tests/data/llama.cpp-2026: the block matrices in the
// i-quant, the tables Q4_0 or the like): the CPU multiplies them with Q8_K activations, Vulkan
// per 32 values.
class VulkanWeightType2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanWeightType2026, LogitsMatchTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/llama-256-tiny-" +
                           GetParam() + ".gguf");
  ASSERT_TRUE(model) << model.message();
  expect_logits_match_cpu(*model, 5e-2, 5e-2);
}

INSTANTIATE_TEST_SUITE_P(IQuants, VulkanWeightType2026,
                         ::testing::Values("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// The weight lab's files (INT8, GPTQ, AWQ, ternary, pruned, 2:4 compressed, head-pruned) load and
// run on the Vulkan backend like on the CPU.
class VulkanWeightLabFile : public ::testing::TestWithParam<const char*> {};

TEST_P(VulkanWeightLabFile, LogitsMatchTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  const std::string source = testing::testdata("quant/base-f32.gguf");
  const std::string path = (testing::scratch_dir("lab") / "lab.gguf").string();
  const std::string recipe = GetParam();
  if (recipe == "heads") {
    auto file = gguf::File::open(source);
    ASSERT_TRUE(file);
    auto model = Model::load(source);
    ASSERT_TRUE(model);
    auto calibration = collect_calibration(*model, default_calibration_text(), CalibrationOptions{256, 128, 2});
    ASSERT_TRUE(calibration) << calibration.message();
    auto pruned = prune_heads(*file, *calibration, 2);
    ASSERT_TRUE(pruned) << pruned.message();
    ASSERT_TRUE(pruned->writer.write(path));
  } else {
    const Status st = save_model_as(source, recipe, path, 2);
    ASSERT_TRUE(st) << st.message();
  }
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  const bool exact_activations = recipe.find('f') == 0 || recipe == "heads";
  expect_logits_match_cpu(*model, exact_activations ? 1e-4 : 5e-2, exact_activations ? 1e-3 : 5e-2);
}

TEST(VulkanLlmInt8, IsRefusedWithTheReason) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  const std::string path = (testing::scratch_dir("llm-int8") / "m.gguf").string();
  ASSERT_TRUE(save_model_as(testing::testdata("stories260K.gguf"), "int8+llm-int8", path, 2));
  auto model = Model::load(path);
  ASSERT_TRUE(model);
  SessionOptions so;
  so.backend.backend = "vulkan";
  auto session = Session::create(*model, so);
  ASSERT_FALSE(session);
  EXPECT_NE(session.message().find("only the CPU backend runs"), std::string::npos) << session.message();
}

// A hybrid model's recurrent states on the device: prompts in several chunks, decode steps, two
// slots in one chunk, a reused prefix and a rolled-back verification give the CPU backend's
// logits (tests/support/hybrid_backend_check.h), and the states are counted as the CPU counts
// them. F32 weights: the recurrence sums in another order than the CPU's.
TEST(VulkanHybrid, StatesGoOnAndCopyAsOnTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto ref = testing::load_reference_2026("qwen35-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ForwardOptions options = testing::hybrid_check_options();
  ThreadPool pool(2);
  options.host_threads = &pool;
  auto cpu = ForwardPass::open(*model, BackendChoice{}, options);
  ASSERT_TRUE(cpu) << cpu.message();
  auto gpu = ForwardPass::open(*model, BackendChoice{"vulkan", 0}, options);
  ASSERT_TRUE(gpu) << gpu.message();
  EXPECT_EQ((*gpu)->memory().recurrent_bytes, (*cpu)->memory().recurrent_bytes);
  EXPECT_GT((*gpu)->memory().recurrent_bytes, 0u);
  testing::expect_hybrid_matches_cpu(**cpu, **gpu, (*model)->config().n_vocab, 1e-4, 1e-3);
}

// A model drafting with its MTP block: prompts, drafts, verifications rolled back within and
// past their row states, and two slots' carried rows give the CPU backend's logits
// (tests/support/mtp_backend_check.h).
TEST(VulkanHybrid, DraftsWithTheMtpBlockAsTheCpuDoes) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto ref = testing::load_reference_2026("qwen35-mtp-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ForwardOptions options = testing::hybrid_check_options();
  options.mtp = true;
  ThreadPool pool(2);
  options.host_threads = &pool;
  auto cpu = ForwardPass::open(*model, BackendChoice{}, options);
  ASSERT_TRUE(cpu) << cpu.message();
  auto gpu = ForwardPass::open(*model, BackendChoice{"vulkan", 0}, options);
  ASSERT_TRUE(gpu) << gpu.message();
  EXPECT_EQ((*gpu)->memory().recurrent_bytes, (*cpu)->memory().recurrent_bytes);
  EXPECT_EQ((*gpu)->memory().kv_cache_bytes, (*cpu)->memory().kv_cache_bytes);
  testing::expect_mtp_matches_cpu(**cpu, **gpu, (*model)->config().n_vocab, 1e-4, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Recipes, VulkanWeightLabFile,
                         ::testing::Values("int8", "q4_0+gptq", "q4_k_m+awq", "tq2_0+ternary", "f32+wanda", "f32+2:4",
                                           "f16_2of4+2:4", "heads"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

std::unique_ptr<Session> policy_session(std::shared_ptr<const Model> model, const std::string& backend, int64_t n_ctx,
                                        const CachePolicy& policy, KvTypes types = {}) {
  SessionOptions so;
  so.n_ctx = n_ctx;
  so.n_threads = 2;
  so.kv_types = types;
  so.cache = policy;
  so.backend.backend = backend;
  auto session = Session::create(std::move(model), so);
  EXPECT_TRUE(session) << session.message();
  return session ? std::move(*session) : nullptr;
}

// StreamingLLM's window past the context: 4 sinks and a window of 40 in a context of 96, over 200
// tokens in one call (chunks of up to 96 rows), so attention masks sinks and window, and blocks
// leave the cache while the later ones move down (kv_rotate of their keys); every position's
// logits close to the CPU backend's. F16 rows: the window's 200 positions measure KL 3e-5 and a
// relative difference of 1.1e-3 on lavapipe (the CPU's F16 softmax weights), hence 2e-3 here.
// Quantized K is left to the op tests (test_vk_attention_sinks.cpp, test_vk_kv_rotate.cpp): the
// F32 keys of the two backends differ in their last bits, and one of the ~30000 values stored
// here rounding to the neighbouring q8_0 code on one side moves a key of stories260K's 8-value
// heads enough to shift later logits by ~1e-2 (measured on lavapipe, and the same with the keys
// rotated on the host by the CPU's code: not the rotation's doing).
TEST(VulkanModel, KvWindowWithSinksMatchesTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  const int64_t n_vocab = model.value()->config().n_vocab;
  CachePolicy policy;
  policy.kv_window = 40;
  policy.kv_sinks = 4;
  std::vector<int32_t> tokens;
  for (int i = 0; i < 200; ++i) tokens.push_back(static_cast<int32_t>((i * 7919 + 13) % n_vocab));
  auto cpu = policy_session(*model, "cpu", 96, policy);
  auto gpu = policy_session(*model, "vulkan", 96, policy);
  ASSERT_TRUE(cpu && gpu);
  std::vector<float> a, b;
  const Status sa = cpu->evaluate(tokens, a);
  ASSERT_TRUE(sa) << sa.message();
  const Status sb = gpu->evaluate(tokens, b);
  ASSERT_TRUE(sb) << sb.message();
  const LogitComparison c = compare_logits(a, b, n_vocab);
  std::printf("window 40 + 4 sinks: KL max %.3g, max |diff| / range %.3g, top-1 disagreements %d\n", c.max_kl,
              c.max_rel_diff, c.top1_disagreements);
  EXPECT_LT(c.max_kl, 1e-4);
  EXPECT_LT(c.max_rel_diff, 2e-3);
  EXPECT_EQ(c.top1_disagreements, 0);
}

// Context shift (ForwardExecutor::shift_context): a nearly full context drops the older half of
// its blocks after the sinks' and the later ones move down (their keys re-rotated backwards);
// twice, each followed by 16 tokens whose logits are close to the CPU backend's, with F16 and
// q8_0 rows.
void expect_context_shift_matches_cpu(const std::shared_ptr<const Model>& model) {
  const int64_t n_vocab = model->config().n_vocab;
  CachePolicy policy;
  policy.context_shift = true;
  policy.kv_sinks = 4;
  std::vector<int32_t> before, after;
  for (int i = 0; i < 60; ++i) before.push_back(static_cast<int32_t>((i * 7919 + 13) % n_vocab));
  for (int i = 0; i < 32; ++i) after.push_back(static_cast<int32_t>((i * 104729 + 5) % n_vocab));
  for (const KvTypes types : {KvTypes{}, KvTypes{kernels::KvType::Q8_0, kernels::KvType::Q8_0}}) {
    SCOPED_TRACE(kv_types_label(types));
    std::vector<float> logits[2];
    int b = 0;
    for (const char* backend : {"cpu", "vulkan"}) {
      auto s = policy_session(model, backend, 64, policy, types);
      ASSERT_TRUE(s);
      ForwardExecutor& ex = s->executor();
      std::vector<float> last(static_cast<size_t>(n_vocab));
      Status st = ex.forward(0, before, false, last.data());
      ASSERT_TRUE(st) << st.message();
      logits[b].resize(after.size() * static_cast<size_t>(n_vocab));
      for (size_t done = 0; done < after.size(); done += 16) {
        const int64_t length = ex.kv_length(0);
        st = ex.shift_context(0);
        ASSERT_TRUE(st) << st.message();
        EXPECT_LT(ex.kv_length(0), length) << backend;
        st = ex.forward(0, std::span(after).subspan(done, 16), true, logits[b].data() + done * n_vocab);
        ASSERT_TRUE(st) << st.message();
      }
      ++b;
    }
    const LogitComparison c = compare_logits(logits[0], logits[1], n_vocab);
    std::printf("context shift, %s: KL max %.3g, max |diff| / range %.3g, top-1 disagreements %d\n",
                kv_types_label(types).c_str(), c.max_kl, c.max_rel_diff, c.top1_disagreements);
    EXPECT_LT(c.max_kl, 1e-4);
    EXPECT_LT(c.max_rel_diff, 1e-3);
    EXPECT_EQ(c.top1_disagreements, 0);
  }
}

// Measured: KL 2e-6 (F16 rows) and 3e-12 (q8_0).
TEST(VulkanModel, ContextShiftMatchesTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  expect_context_shift_matches_cpu(*model);
}

// Gemma 4 (per-layer inputs, window layers with heads half the full layers' size, the last
// layers reading earlier layers' KV): no rows for the shared-KV layers (the CPU's KV bytes), and
// a context shift re-rotating each kind of layer's keys with its own head size and RoPE.
TEST(VulkanGemma4, SharedLayersKeepNoRowsAndContextShiftMatchesTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto ref = testing::load_reference_2026("gemma4-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ASSERT_GT((*model)->config().n_kv_shared, 0);
  auto cpu = testing::open_backend_session(*model, "cpu");
  auto gpu = testing::open_backend_session(*model, "vulkan");
  ASSERT_TRUE(cpu && gpu);
  EXPECT_EQ(gpu->executor().memory().kv_cache_bytes, cpu->executor().memory().kv_cache_bytes);
  expect_context_shift_matches_cpu(*model);
}

TEST(VulkanModel, BeamSearchMatchesTheCpuBackend) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  GenerateRequest req;
  req.prompt = "Once upon a time";
  req.max_tokens = 16;
  req.beam_width = 3;
  auto cpu = testing::open_backend_session(*model, "cpu");
  auto gpu = testing::open_backend_session(*model, "vulkan");
  ASSERT_TRUE(cpu && gpu);
  auto a = cpu->generate(req);
  auto b = gpu->generate(req);
  ASSERT_TRUE(a && b) << a.message() << b.message();
  EXPECT_EQ(a->token_ids, b->token_ids);
}

// The profile's per-layer op times and expert counts: the device counts the same expert choices
// as the CPU backend for the same greedy tokens (one per token, choice and layer).
TEST(VulkanModel, ProfileCountsTheExpertChoicesTheCpuCounts) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("derived/stories260K-moe4-distinct.gguf"));
  ASSERT_TRUE(model);
  auto cpu = testing::open_backend_session(*model, "cpu");
  auto gpu = testing::open_backend_session(*model, "vulkan");
  ASSERT_TRUE(cpu && gpu);
  greedy(*cpu, "Once upon a time", 12);
  greedy(*gpu, "Once upon a time", 12);
  const OpProfile& a = cpu->executor().profile();
  const OpProfile& b = gpu->executor().profile();
  const auto n_layer = static_cast<size_t>(model.value()->config().n_layer);
  ASSERT_EQ(a.expert_choices.size(), n_layer);
  EXPECT_EQ(b.expert_choices, a.expert_choices);
  EXPECT_EQ(b.layer_op_seconds.size(), n_layer);
}

TEST(VulkanModel, OneSubmissionPerDecodedToken) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  auto gpu = testing::open_backend_session(*model, "vulkan");
  ASSERT_TRUE(gpu);
  const ExecutorCounters before = gpu->executor().counters();
  greedy(*gpu, "Once upon a time", 10);
  const ExecutorCounters after = gpu->executor().counters();
  EXPECT_EQ(after.submissions - before.submissions, after.forward_calls - before.forward_calls);
  const OpProfile& profile = gpu->executor().profile();
  double total = 0;
  for (double s : profile.seconds) total += s;
  EXPECT_GT(total, 0.0) << "timestamp queries give per-op device time";
  EXPECT_EQ(profile.layer_seconds.size(), static_cast<size_t>(model.value()->config().n_layer));
}

TEST(VulkanModel, MissingDeviceIsAClearError) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  SessionOptions so;
  so.backend = {"vulkan", 99};
  auto session = Session::create(*model, so);
  ASSERT_FALSE(session);
  EXPECT_NE(session.message().find("99"), std::string::npos) << session.message();
}

}  // namespace
}  // namespace inferscope

namespace inferscope::vulkan {
namespace {

// A context of 64 in chunks of 8.
ForwardOptions small_context() {
  ForwardOptions o;
  o.n_ctx = 64;
  o.max_batch = 8;
  return o;
}

std::unique_ptr<ForwardPass> forward_on(const std::shared_ptr<const Model>& model, const DeviceOptions& options,
                                        std::string* error, const ForwardOptions& forward = small_context()) {
  auto device = Device::create(0, options);
  if (!device) {
    *error = device.message();
    return nullptr;
  }
  auto fp = ForwardPass::create(model, std::make_unique<VulkanOps>(model, std::move(*device)), forward);
  if (!fp) {
    *error = fp.message();
    return nullptr;
  }
  return std::move(*fp);
}

// Logits of every token of `tokens` fed to `slot` of fp, `chunk` tokens per forward call.
std::vector<float> feed(ForwardPass& fp, int slot, std::span<const int32_t> tokens, size_t chunk, int64_t n_vocab) {
  std::vector<float> logits(tokens.size() * static_cast<size_t>(n_vocab));
  for (size_t done = 0; done < tokens.size(); done += chunk) {
    const auto part = tokens.subspan(done, std::min(chunk, tokens.size() - done));
    const Status st = fp.forward(slot, part, true, logits.data() + done * static_cast<size_t>(n_vocab));
    EXPECT_TRUE(st) << st.message();
  }
  return logits;
}

// Bit for bit (without printing thousands of logits on failure).
bool same_logits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<int32_t> test_tokens(size_t n, int32_t salt, int64_t n_vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((static_cast<int64_t>(i) * 7919 + salt) % n_vocab);
  return t;
}

TEST(VulkanModel, AModelThatDoesNotFitIsRefusedBeforeAnyUpload) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("quant/q8_0.gguf"));
  ASSERT_TRUE(model);
  std::string error;
  auto fp = forward_on(*model, {.memory_bytes = 1 << 20}, &error);
  ASSERT_FALSE(fp);
  EXPECT_NE(error.find("needs"), std::string::npos) << error;
  EXPECT_NE(error.find("GiB"), std::string::npos) << error;
}

// Every matrix above a 64 KiB binding limit is split into row ranges (the lookup tables too,
// each part writing the rows of the ids it holds); the results must not change.
void expect_split_matches_whole(const std::shared_ptr<const Model>& model, const std::vector<int32_t>& tokens) {
  std::string error;
  auto split = forward_on(model, {.max_storage_buffer_range = 64 << 10}, &error);
  ASSERT_TRUE(split) << error;
  auto whole = forward_on(model, {}, &error);
  ASSERT_TRUE(whole) << error;
  const int64_t n_vocab = model->config().n_vocab;
  std::vector<float> a(tokens.size() * n_vocab), b(tokens.size() * n_vocab);
  Status st = split->forward(0, tokens, true, a.data());
  ASSERT_TRUE(st) << st.message();
  ASSERT_TRUE(whole->forward(0, tokens, true, b.data()));
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4f * (1.0f + std::fabs(b[i]))) << i;
}

TEST(VulkanModel, MatricesAboveTheBindingLimitAreSplit) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("quant/q4_k_m.gguf"));
  ASSERT_TRUE(model);
  expect_split_matches_whole(*model, {1, 400, 7, 500, 33, 2, 260, 130, 90, 511});  // two chunks of 8
}

// Gemma 4's two lookup tables (token embeddings and per-layer inputs) in parts.
TEST(VulkanGemma4, LookupTablesAboveTheBindingLimitAreSplit) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto ref = testing::load_reference_2026("gemma4-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  expect_split_matches_whole(*model, test_tokens(10, 3, (*model)->config().n_vocab));
}

// Two sequences fed chunk by chunk in turn share one pool (their blocks interleave, so the
// second's table is not the identity): each gets, bit for bit, the logits it gets alone. Then
// both slots fork the second (shared blocks) and decode: the first write into the shared
// partial block copies it (kv_copy), and both forks match the second sequence decoding alone.
TEST(VulkanModel, SequencesSharingAPoolGiveTheirOwnLogits) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  const int64_t n_vocab = model.value()->config().n_vocab;
  ForwardOptions two;
  two.n_ctx = 96;
  two.n_slots = 2;
  two.max_batch = 8;
  two.kv_block_size = 16;
  ForwardOptions one = two;
  one.n_slots = 1;
  std::string error;
  auto shared = forward_on(*model, {}, &error, two);
  ASSERT_TRUE(shared) << error;
  auto alone = forward_on(*model, {}, &error, one);
  ASSERT_TRUE(alone) << error;
  const std::vector<int32_t> a = test_tokens(37, 13, n_vocab), b = test_tokens(29, 101, n_vocab);
  std::vector<float> got_a, got_b;
  for (size_t done = 0; done < std::max(a.size(), b.size()); done += 8) {
    for (int slot : {0, 1}) {
      const std::vector<int32_t>& seq = slot == 0 ? a : b;
      if (done >= seq.size()) continue;
      const auto part = std::span(seq).subspan(done, std::min<size_t>(8, seq.size() - done));
      const std::vector<float> l = feed(*shared, slot, part, 8, n_vocab);
      (slot == 0 ? got_a : got_b).insert((slot == 0 ? got_a : got_b).end(), l.begin(), l.end());
    }
  }
  EXPECT_TRUE(same_logits(got_a, feed(*alone, 0, a, 8, n_vocab)));
  alone->clear();
  EXPECT_TRUE(same_logits(got_b, feed(*alone, 0, b, 8, n_vocab)));

  const std::vector<int32_t> parents = {1, 1};
  ASSERT_TRUE(shared->reorder(parents));
  const uint64_t submissions = shared->counters().submissions;
  const std::vector<int32_t> next = {7, 300};
  const std::vector<float> want = feed(*alone, 0, next, 1, n_vocab);
  for (int slot : {0, 1}) EXPECT_TRUE(same_logits(feed(*shared, slot, next, 1, n_vocab), want)) << "fork " << slot;
  EXPECT_GT(shared->counters().submissions, submissions + 4) << "no kv_copy submission";
}

// BatchedSequencesGiveTheLogitsTheyGetAlone (below) for one model file.
void batched_sequences_give_the_logits_they_get_alone(const char* file) {
  auto model = Model::load(testing::testdata(file));
  ASSERT_TRUE(model);
  const int64_t n_vocab = model.value()->config().n_vocab;
  ForwardOptions three;
  three.n_ctx = 96;
  three.n_slots = 3;
  three.max_batch = 8;
  ForwardOptions one = three;
  one.n_slots = 1;
  std::string error;
  auto alone = forward_on(*model, {}, &error, one);
  ASSERT_TRUE(alone) << error;
  // Each sequence's tokens fed in the steps of the batched run: a prompt, then decode steps.
  const std::vector<std::vector<std::vector<int32_t>>> steps = {
      {test_tokens(13, 3, n_vocab), {7}, {300}, {41}, test_tokens(5, 77, n_vocab), {9}},
      {test_tokens(5, 29, n_vocab), {12}, {450}, {2}, {88}, {17}},
      {test_tokens(20, 101, n_vocab), {400}, {6}, {222}, {31}, {5}},
  };
  // Alone: each sequence's logits after each of its steps.
  std::vector<std::vector<std::vector<float>>> want(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    alone->clear();
    for (const std::vector<int32_t>& tokens : steps[s]) {
      std::vector<float> l(static_cast<size_t>(n_vocab));
      const Status st = alone->forward(0, tokens, false, l.data());
      ASSERT_TRUE(st) << st.message();
      want[s].push_back(std::move(l));
    }
  }
  for (const bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staged block tables" : "host-visible block tables");
    auto batched = forward_on(*model, {.map_device_buffers = !staged}, &error, three);
    ASSERT_TRUE(batched) << error;
    for (const size_t n_seq : {size_t{2}, size_t{3}}) {
      batched->clear();
      for (size_t step = 0; step < steps[0].size(); ++step) {
        std::vector<std::vector<float>> got(n_seq, std::vector<float>(static_cast<size_t>(n_vocab)));
        std::vector<SequenceTokens> seqs;
        for (size_t s = 0; s < n_seq; ++s) seqs.push_back({static_cast<int>(s), steps[s][step], got[s].data()});
        const Status st = batched->forward_batch(seqs);
        ASSERT_TRUE(st) << st.message();
        for (size_t s = 0; s < n_seq; ++s) {
          const LogitComparison c = compare_logits(want[s][step], got[s], n_vocab);
          EXPECT_LT(c.max_kl, 1e-4) << n_seq << " sequences, sequence " << s << ", step " << step;
          EXPECT_LT(c.max_rel_diff, 1e-3) << n_seq << " sequences, sequence " << s << ", step " << step;
          EXPECT_EQ(c.top1_disagreements, 0) << n_seq << " sequences, sequence " << s << ", step " << step;
        }
      }
    }
  }
}

// Several sequences in one forward call (ForwardPass::forward_batch: chunks of spans of
// different slots, each finishing sequence's last row in a span of its own after its body): each
// gets the logits it gets alone, within the tolerance of the comparison with the CPU backend
// (rows are grouped differently, so the sums differ in their last bits). Prompts of different
// lengths over chunks of 8 rows, then decode steps of one token each, and a step where one
// sequence takes several tokens while the others take one; with staged block tables too. The
// F32 model and its q8_0 file, whose output projection takes attention's int8 copy (written over
// all the spans' rows at once).
TEST(VulkanModel, BatchedSequencesGiveTheLogitsTheyGetAlone) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  for (const char* file : {"stories260K.gguf", "quant/q8_0.gguf"}) {
    SCOPED_TRACE(file);
    batched_sequences_give_the_logits_they_get_alone(file);
  }
}

// Where device buffers are not host-visible (discrete GPUs), the block table reaches the
// shaders through a staging buffer copied at the start of each recording: the same logits.
TEST(VulkanModel, UnmappedDeviceBuffersGiveTheSameLogits) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(model);
  const int64_t n_vocab = model.value()->config().n_vocab;
  std::string error;
  auto staged = forward_on(*model, {.map_device_buffers = false}, &error);
  ASSERT_TRUE(staged) << error;
  auto mapped = forward_on(*model, {}, &error);
  ASSERT_TRUE(mapped) << error;
  const std::vector<int32_t> tokens = test_tokens(21, 5, n_vocab);
  EXPECT_TRUE(same_logits(feed(*staged, 0, tokens, 8, n_vocab), feed(*mapped, 0, tokens, 8, n_vocab)));
  staged->clear();
  mapped->clear();
  EXPECT_TRUE(same_logits(feed(*staged, 0, tokens, 1, n_vocab), feed(*mapped, 0, tokens, 1, n_vocab)));
}

}  // namespace
}  // namespace inferscope::vulkan

namespace inferscope {
namespace {

TEST(VulkanModel, WeightUploadReportsProgress) {
  INFERSCOPE_SKIP_WITHOUT_VULKAN_BACKEND();
  auto model = Model::load(testing::testdata("quant/q4_k_m.gguf"));
  ASSERT_TRUE(model);
  std::vector<double> fractions;
  SessionOptions so;
  so.n_ctx = 64;
  so.backend.backend = "vulkan";
  so.on_upload_progress = [&](double f) { fractions.push_back(f); };
  auto session = Session::create(*model, so);
  ASSERT_TRUE(session) << session.message();
  ASSERT_GE(fractions.size(), 10u);  // one call per tensor
  EXPECT_TRUE(std::is_sorted(fractions.begin(), fractions.end()));
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
}

}  // namespace
}  // namespace inferscope
