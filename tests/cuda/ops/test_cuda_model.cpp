// Whole models on the CUDA backend, run by the CUDA emulator: llama.cpp's greedy tokens, logits
// close to the CPU backend's for every architecture, weight type and KV type, decode steps
// replayed as CUDA graphs giving the bits the same steps give op by op, and clean errors.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/model/quant_mix.h"
#include "engine/model/random_model.h"
#include "engine/weightlab/head_pruning.h"
#include "engine/weightlab/weight_method.h"
#include "engine/weightlab/weight_recipe.h"
#include "tests/cuda/ops/backend_setup.h"
#include "tests/support/hybrid_backend_check.h"
#include "tests/support/mtp_backend_check.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/reference_2026.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope::cuda_test {
namespace {

using nlohmann::json;
using testing::case_name;
using testing::compare_logits;
using testing::LogitComparison;

// Teacher-forced logits of n_prefill tokens in one chunk (cuBLAS products) and then n_decode
// more one at a time (the GEMV kernels, decode attention, CUDA graphs), against the CPU's.
void expect_logits_match_cpu(const std::shared_ptr<const Model>& model, double max_kl, double max_rel_diff,
                             ForwardOptions options = small_forward(), size_t n_prefill = 24, size_t n_decode = 10) {
  auto cpu = cpu_forward(model, options);
  auto gpu = cuda_forward(model, options);
  ASSERT_TRUE(cpu && gpu) << gpu.message();
  const int64_t n_vocab = model->config().n_vocab;
  const std::vector<int32_t> tokens = test_tokens(n_prefill + n_decode, 13, n_vocab);
  const std::span<const int32_t> all(tokens);
  const std::vector<float> a = feed(*cpu, 0, all, tokens.size(), n_vocab);
  std::vector<float> b = feed(**gpu, 0, all.first(n_prefill), n_prefill, n_vocab);
  const std::vector<float> decoded = feed(**gpu, 0, all.subspan(n_prefill), 1, n_vocab);
  b.insert(b.end(), decoded.begin(), decoded.end());
  const LogitComparison c = compare_logits(a, b, n_vocab);
  std::printf("KL(cpu||cuda) max %.3g, max |diff| / logit range %.3g, top-1 disagreements %d of %zu\n", c.max_kl,
              c.max_rel_diff, c.top1_disagreements, tokens.size());
  EXPECT_LT(c.max_kl, max_kl);
  EXPECT_LT(c.max_rel_diff, max_rel_diff);
}

struct ReferenceCase {
  const char* model;
  const char* reference;
  bool exact_greedy;
};
void PrintTo(const ReferenceCase& c, std::ostream* os) { *os << c.model; }

class CudaReferenceModel : public ::testing::TestWithParam<ReferenceCase> {};

// llama.cpp's greedy tokens (all of them where its top two logits are far apart, else up to the
// first close call), and the CPU backend's.
TEST_P(CudaReferenceModel, GreedyTokensMatchLlamaCppAndTheCpuBackend) {
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
  const auto prompt = ref["prompt_ids"].get<std::vector<int32_t>>();
  auto gpu = cuda_forward(*model);
  ASSERT_TRUE(gpu) << gpu.message();
  auto cpu = cpu_forward(*model);
  const int64_t n_vocab = model.value()->config().n_vocab;
  const auto gpu_ids = greedy(**gpu, prompt, static_cast<int>(expected.size()), n_vocab);
  const auto cpu_ids = greedy(*cpu, prompt, static_cast<int>(expected.size()), n_vocab);
  ASSERT_GE(gpu_ids.size(), trusted);
  for (size_t i = 0; i < trusted; ++i) {
    EXPECT_EQ(gpu_ids[i], expected[i]) << "step " << i << " (llama.cpp)";
    EXPECT_EQ(gpu_ids[i], cpu_ids[i]) << "step " << i << " (CPU backend)";
  }
  EXPECT_EQ((*gpu)->backend_name().rfind("cuda: ", 0), 0u) << (*gpu)->backend_name();
}

TEST_P(CudaReferenceModel, LogitsMatchTheCpuBackend) {
  auto model = Model::load(testing::testdata(GetParam().model));
  ASSERT_TRUE(model) << model.message();
  expect_logits_match_cpu(*model, 1e-4, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, CudaReferenceModel,
    ::testing::Values(
        ReferenceCase{"stories260K.gguf", "reference/stories260K.llama.cpp-b4747.json", true},
        ReferenceCase{"derived/stories260K-moe4-identical.gguf", "reference/stories260K-moe4-identical.llama.cpp-b4747.json", true},
        ReferenceCase{"derived/stories260K-moe4-distinct.gguf", "reference/stories260K-moe4-distinct.llama.cpp-b4747.json", true},
        ReferenceCase{"derived/stories260K-qwen2moe.gguf", "reference/stories260K-qwen2moe.llama.cpp-b4747.json", false},
        ReferenceCase{"llama-2-tiny-random.gguf", "reference/llama-2-tiny-random.llama.cpp-b4747.json", false}),
    [](const ::testing::TestParamInfo<ReferenceCase>& info) { return case_name(info.param.model); });

// The architectures of 2025-2026 against the 2026 reference (tests/support/reference_2026.h).
class CudaReference2026 : public ::testing::TestWithParam<const char*> {};

// The reference `name` on the emulated device with `options`; with_window_pool: its window
// layers must have their own pool.
void expect_cuda_matches_reference(const char* name, const ForwardOptions& options, bool with_window_pool) {
  auto ref = testing::load_reference_2026(name);
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  auto gpu = cuda_forward(*model, options);
  ASSERT_TRUE(gpu) << gpu.message();
  if (with_window_pool) {
    ASSERT_TRUE((*gpu)->plan().kv.has_window_pool());
  }
  testing::expect_matches_reference_2026(**gpu, *ref);
}

TEST_P(CudaReference2026, GreedyTokensAndLogProbsMatchLlamaCpp) {
  expect_cuda_matches_reference(GetParam(), small_forward(256), false);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, CudaReference2026, ::testing::ValuesIn(testing::kGpuReferences2026),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// A hybrid model's recurrent states on the device (tests/support/hybrid_backend_check.h):
// prompts in several chunks, two slots in one chunk, a reused prefix and a rolled-back
// verification (recurrent_copy), a slot started again, its decode steps replayed as CUDA graphs.
TEST(CudaHybrid, StatesGoOnAndCopyAsOnTheCpu) {
  auto ref = testing::load_reference_2026("qwen35-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  auto cpu = cpu_forward(*model, testing::hybrid_check_options());
  auto gpu = cuda_forward(*model, testing::hybrid_check_options());
  ASSERT_TRUE(cpu && gpu) << gpu.message();
  EXPECT_EQ((*gpu)->memory().recurrent_bytes, cpu->memory().recurrent_bytes);
  EXPECT_GT((*gpu)->memory().recurrent_bytes, 0u);
  testing::expect_hybrid_matches_cpu(*cpu, **gpu, (*model)->config().n_vocab, 1e-4, 1e-3);
  EXPECT_GT((*gpu)->counters().graph_launches, 0u);
}

// A model drafting with its MTP block (tests/support/mtp_backend_check.h): drafts, verifications
// rolled back within and past their row states, two slots' carried rows; drafts of either slot
// replay the same captured graphs, which find the slot's carried row on the device.
TEST(CudaHybrid, DraftsWithTheMtpBlockAsTheCpuDoes) {
  auto ref = testing::load_reference_2026("qwen35-mtp-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ForwardOptions options = testing::hybrid_check_options();
  options.mtp = true;
  auto cpu = cpu_forward(*model, options);
  auto gpu = cuda_forward(*model, options);
  ASSERT_TRUE(cpu && gpu) << gpu.message();
  EXPECT_EQ((*gpu)->memory().recurrent_bytes, cpu->memory().recurrent_bytes);
  EXPECT_EQ((*gpu)->memory().kv_cache_bytes, cpu->memory().kv_cache_bytes);
  testing::expect_mtp_matches_cpu(*cpu, **gpu, (*model)->config().n_vocab, 1e-4, 1e-3);
  EXPECT_GT((*gpu)->counters().graph_launches, 0u);
}

// A hybrid's Q8_0 file through the int8 decode kernels only (chunks of up to 8 rows), as llama.cpp
// multiplies it (kGpuReferences2026 says why not through the prefill's BF16 products).
TEST(CudaHybrid, Q8_0MatchesLlamaCppThroughTheInt8Kernels) {
  expect_cuda_matches_reference("qwen35-tiny-q8_0", small_forward(256, cuda_kernels::kMaxMatvecRows), false);
}

// The window models in chunks of 4 rows: their window layers hold only the window pool's blocks
// (the window tables with the entries they let go of), and still give the reference's steps.
class CudaWindowPool : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaWindowPool, MatchesTheReference) { expect_cuda_matches_reference(GetParam(), small_forward(256, 4), true); }

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, CudaWindowPool,
                         ::testing::Values("gemma3-tiny-f32", "gpt-oss-tiny-f32-seed7", "gemma4-tiny-f32"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// Every architecture and RoPE variant the CPU backend runs, as tiny random models with F32
// matrices: prefill multiplies them in F32 as the CPU does. (With F16 matrices prefill rounds
// the inputs of the products to F16 for the tensor cores, which moves the hidden states by
// ~1e-3 relative: enough to flip a near-tied expert choice of a random MoE router. The F16 and
// BF16 paths are CudaWeightType's.)
class CudaArchitecture : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaArchitecture, LogitsMatchTheCpuBackend) {
  RandomModelSpec spec;
  ASSERT_TRUE(random_model_preset(GetParam(), &spec.shape));
  spec.vocab_path = testing::testdata("stories260K.gguf");
  spec.name = GetParam();
  spec.mix = *quant_mix_from_name("f32");
  const std::string path = (testing::scratch_dir("cuda-arch") / (std::string(GetParam()) + ".gguf")).string();
  ASSERT_TRUE(write_random_model(spec, path));
  auto model = Model::load(path);
  ASSERT_TRUE(model) << model.message();
  expect_logits_match_cpu(*model, 1e-3, 2e-3);
}

INSTANTIATE_TEST_SUITE_P(Tiny, CudaArchitecture,
                         ::testing::Values("mistral-tiny", "mixtral-tiny", "qwen2moe-tiny", "qwen2-tiny", "qwen3-tiny",
                                           "qwen3moe-tiny", "gemma3-tiny", "smollm3-tiny", "ministral3-tiny", "phi3-tiny",
                                           "phi3.5-tiny", "llama3-tiny", "gemma-tiny", "gemma2-tiny", "qwen3.5-tiny",
                                           "qwen3.5moe-tiny", "qwen3next-tiny", "gemma4-tiny",
                                           "gemma4-tiny-wide"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// Every weight type, through llama.cpp's quantized files of one model. Decode multiplies int8
// activations for the quantized types (per 32 values, the CPU per 32 or 256) and prefill
// BF16 ones, hence the looser bounds there.
class CudaWeightType : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaWeightType, LogitsMatchTheCpuBackend) {
  auto model = Model::load(testing::testdata(std::string("quant/") + GetParam() + ".gguf"));
  ASSERT_TRUE(model) << model.message();
  const std::string type = GetParam();
  const bool exact = type == "base-f32" || type == "f16";
  expect_logits_match_cpu(*model, exact ? 1e-3 : 5e-2, exact ? 5e-3 : 5e-2, small_forward(), 12, 3);
}

INSTANTIATE_TEST_SUITE_P(Quant, CudaWeightType,
                         ::testing::Values("base-f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k",
                                           "q3_k", "q4_k", "q4_k_m", "q5_k", "q6_k", "iq4_nl", "tq1_0", "tq2_0"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// The 2026 reference's i-quant files (tests/data/llama.cpp-2026: the block matrices in the
// i-quant, the tables Q4_0 or the like): the CPU multiplies them with Q8_K activations, CUDA per
// 32 values.
class CudaWeightType2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaWeightType2026, LogitsMatchTheCpuBackend) {
  auto model = Model::load(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/data/llama.cpp-2026/llama-256-tiny-" +
                           GetParam() + ".gguf");
  ASSERT_TRUE(model) << model.message();
  expect_logits_match_cpu(*model, 5e-2, 5e-2, small_forward(), 12, 3);
}

INSTANTIATE_TEST_SUITE_P(IQuants, CudaWeightType2026,
                         ::testing::Values("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_xs"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// The weight lab's files (INT8, GPTQ, AWQ, ternary, pruned, 2:4 compressed, head-pruned) run on
// the CUDA backend like on the CPU; LLM.int8() is refused with the reason.
class CudaWeightLabFile : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaWeightLabFile, LogitsMatchTheCpuBackend) {
  const std::string source = testing::testdata("quant/base-f32.gguf");
  const std::string path = (testing::scratch_dir("cuda-lab") / "lab.gguf").string();
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
  const bool f32_products = recipe.find("f32") == 0 || recipe == "heads";
  expect_logits_match_cpu(*model, f32_products ? 1e-4 : 5e-2, f32_products ? 1e-3 : 5e-2, small_forward(), 12, 3);
}

INSTANTIATE_TEST_SUITE_P(Recipes, CudaWeightLabFile,
                         ::testing::Values("int8", "q4_0+gptq", "q4_k_m+awq", "tq2_0+ternary", "f32+wanda", "f32+2:4",
                                           "f16_2of4+2:4", "heads"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(CudaLlmInt8, IsRefusedWithTheReason) {
  const std::string path = (testing::scratch_dir("cuda-llm-int8") / "m.gguf").string();
  ASSERT_TRUE(save_model_as(testing::testdata("stories260K.gguf"), "int8+llm-int8", path, 2));
  auto model = Model::load(path);
  ASSERT_TRUE(model);
  auto fp = cuda_forward(*model);
  ASSERT_FALSE(fp);
  EXPECT_NE(fp.message().find("only the CPU backend runs"), std::string::npos) << fp.message();
}

// A captured decode step reads each row's slot and position on the device (a hybrid model's
// states; Gemma 4's per-layer inputs, a second table lookup per chunk with its own ids, window
// heads half the full layers' size, the last layers reading earlier layers' KV): replayed for
// two slots in turn (after a chunk of several rows), it gives the bits of the same steps op by op.
class CudaDecodeGraphs2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaDecodeGraphs2026, StepsReplayedAsGraphsGiveTheEagerBits) {
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  const int64_t n_vocab = (*model)->config().n_vocab;
  ForwardOptions options = small_forward();
  options.n_slots = 2;
  auto graphs = cuda_forward(*model, options);
  auto eager = cuda_forward(*model, options, {.graphs = false});
  ASSERT_TRUE(graphs && eager);
  const std::vector<int32_t> tokens = test_tokens(20, 5, n_vocab);
  const std::span<const int32_t> all(tokens);
  for (ForwardExecutor* ex : {graphs->get(), eager->get()}) {
    feed(*ex, 0, all.first(4), 4, n_vocab);
    feed(*ex, 1, all.subspan(4, 3), 3, n_vocab);
  }
  for (size_t i = 7; i < tokens.size(); ++i) {
    const int slot = static_cast<int>(i % 2);
    const auto token = all.subspan(i, 1);
    EXPECT_EQ(feed(**graphs, slot, token, 1, n_vocab), feed(**eager, slot, token, 1, n_vocab)) << "step " << i;
  }
  EXPECT_GT((*graphs)->counters().graph_launches, 5u);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, CudaDecodeGraphs2026, ::testing::Values("qwen35-tiny-f32", "gemma4-tiny-f32"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return case_name(info.param); });

// No rows for the shared-KV layers (the CPU's KV bytes), and a context shift re-rotating each
// kind of layer's keys with its own head size and RoPE, against the CPU backend.
TEST(CudaGemma4, SharedLayersKeepNoRowsAndContextShiftMatchesTheCpuBackend) {
  auto ref = testing::load_reference_2026("gemma4-tiny-f32");
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ASSERT_GT((*model)->config().n_kv_shared, 0);
  const int64_t n_vocab = (*model)->config().n_vocab;
  ForwardOptions shift = small_forward(64, 16);
  shift.kv_sinks = 4;
  const std::vector<int32_t> tokens = test_tokens(92, 13, n_vocab);
  auto cpu = cpu_forward(*model, shift);
  auto gpu = cuda_forward(*model, shift);
  ASSERT_TRUE(cpu && gpu) << gpu.message();
  EXPECT_EQ((*gpu)->memory().kv_cache_bytes, cpu->memory().kv_cache_bytes);
  std::vector<float> logits[2];
  int i = 0;
  ForwardExecutor* executors[] = {cpu.get(), gpu->get()};
  for (ForwardExecutor* ex : executors) {
    feed(*ex, 0, std::span(tokens).first(60), 16, n_vocab);
    for (int round = 0; round < 2; ++round) {
      const Status st = ex->shift_context(0);
      ASSERT_TRUE(st) << st.message();
      const std::vector<float> l = feed(*ex, 0, std::span(tokens).subspan(60 + 16 * round, 16), 4, n_vocab);
      logits[i].insert(logits[i].end(), l.begin(), l.end());
    }
    ++i;
  }
  const LogitComparison c = compare_logits(logits[0], logits[1], n_vocab);
  std::printf("context shift: KL max %.3g, max |diff| / range %.3g\n", c.max_kl, c.max_rel_diff);
  EXPECT_LT(c.max_kl, 1e-4);
  EXPECT_EQ(c.top1_disagreements, 0);
}

// The Q8_0 file through the int8 decode kernels only (chunks of up to 8 rows), as llama.cpp
// multiplies it (kGpuReferences2026 says why not through the prefill's BF16 products).
TEST(CudaGemma4, Q8_0MatchesLlamaCppThroughTheInt8Kernels) {
  expect_cuda_matches_reference("gemma4-tiny-q8_0", small_forward(256, cuda_kernels::kMaxMatvecRows), false);
}
}  // namespace
}  // namespace inferscope::cuda_test
