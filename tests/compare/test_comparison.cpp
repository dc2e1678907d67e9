// The comparison engine on real models: a configuration against itself, Q8_0 against F32 next to
// the quantization-quality test's own figure, refusals, cancelling, the alternating order of the
// timing rounds, prefix reuse, vocabularies that do not compare, and the database round trip.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "engine/compare/comparison.h"
#include "engine/compare/comparison_json.h"
#include "engine/compare/comparison_record.h"
#include "engine/model/quantize_model.h"
#include "engine/runtime/session.h"
#include "tests/support/chat_models.h"
#include "tests/support/distributions.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

CompareConfig config(const std::string& text) {
  auto c = parse_compare_config(text);
  EXPECT_TRUE(c) << c.message();
  return c ? *c : CompareConfig{};
}

ComparisonOptions stories_options(std::vector<std::string> configs) {
  ComparisonOptions o;
  o.default_model = testing::testdata("stories260K.gguf");
  for (const std::string& c : configs) o.configs.push_back(config(c));
  o.prompts = {"Once upon a time", "The little dog"};
  o.reps = 1;
  o.max_tokens = 24;
  return o;
}

ComparisonResult run(const ComparisonOptions& o, const ComparisonCallbacks& callbacks = {}) {
  auto r = run_comparison(o, callbacks);
  EXPECT_TRUE(r) << r.message();
  return r ? *r : ComparisonResult{};
}

TEST(Comparison, AConfigurationAgainstItselfHasZeroKlAndFullAgreement) {
  const ComparisonResult r = run(stories_options({"threads=2", "threads=2,label=again"}));
  ASSERT_EQ(r.configs.size(), 2u);
  for (const ConfigResult& c : r.configs) {
    ASSERT_TRUE(c.ran) << c.refusal;
    ASSERT_TRUE(c.quality_comparable) << c.quality_note;
    EXPECT_EQ(c.quality.mean_kl, 0.0) << c.config.label;
    EXPECT_EQ(c.quality.max_kl, 0.0) << c.config.label;
    EXPECT_EQ(c.quality.top1_agreement, 1.0) << c.config.label;
    EXPECT_GT(c.quality.positions, 0);
    EXPECT_GT(c.decode_tokens_per_s.median, 0);
    EXPECT_GT(c.prefill_tokens_per_s.median, 0);
    EXPECT_GT(c.memory.weights_bytes, 0u);
  }
  EXPECT_EQ(r.configs[1].config.label, "again");
  EXPECT_EQ(r.configs[0].replies, r.configs[1].replies);
  EXPECT_EQ(r.configs[0].quality.perplexity, r.configs[1].quality.perplexity);
  EXPECT_GT(r.configs[0].quality.perplexity, 1.0);
}

std::vector<float> evaluate(const std::string& path, const std::vector<int32_t>& tokens) {
  auto model = Model::load(path);
  EXPECT_TRUE(model) << model.message();
  SessionOptions so;
  so.n_threads = 2;
  auto session = Session::create(*model, so);
  EXPECT_TRUE(session) << session.message();
  std::vector<float> logits;
  EXPECT_TRUE((*session)->evaluate(tokens, logits));
  return logits;
}

TEST(Comparison, Q8ZeroAgainstF32IsWithinTenPercentOfTheQualityTestsFigure) {
  const std::string master = testing::testdata("quant/base-f32.gguf");
  const std::vector<int32_t> tokens = testing::quant_reference_tokens();
  // The quantization-quality test's figure: the file quantized to Q8_0, mean KL over every position.
  const std::string q8 = (testing::scratch_dir("compare-q8") / "q8_0.gguf").string();
  ASSERT_TRUE(quantize_model(master, q8, QuantizeOptions{quant_mix_from_name("q8_0", true).value(), 2, nullptr}));
  const std::vector<float> p = evaluate(master, tokens);
  const std::vector<float> q = evaluate(q8, tokens);
  const int64_t n_vocab = static_cast<int64_t>(p.size() / tokens.size());
  double expected = 0;
  for (size_t t = 0; t < tokens.size(); ++t) {
    expected += testing::kl_divergence(p.data() + t * n_vocab, q.data() + t * n_vocab, n_vocab);
  }
  expected /= static_cast<double>(tokens.size());

  // The same prompt through the workbench: F32 as stored against Q8_0 requantized on load, the
  // baseline's greedy reply (llama.cpp's, as the reference tests check) teacher-forced.
  ComparisonOptions o;
  o.default_model = master;
  o.configs = {config("threads=2"), config("threads=2,weights=q8_0")};
  o.prompts = {"Once upon a time"};
  o.reps = 1;
  o.max_tokens = 16;
  const ComparisonResult r = run(o);
  ASSERT_TRUE(r.configs[1].quality_comparable) << r.configs[1].quality_note;
  EXPECT_EQ(r.configs[1].quality.positions, static_cast<int64_t>(tokens.size()));
  std::printf("mean KL(F32 || Q8_0): quality test %.6g, workbench %.6g\n", expected, r.configs[1].quality.mean_kl);
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(r.configs[1].quality.mean_kl, expected, 0.1 * expected);
  EXPECT_GT(r.configs[1].quality.top1_agreement, 0.9);
  EXPECT_EQ(r.configs[1].model_name, master + " as Q8_0");
  EXPECT_LT(r.configs[1].memory.weights_bytes, r.configs[0].memory.weights_bytes);
}

TEST(Comparison, ARefusedConfigurationSaysWhyAndTheRestStillRuns) {
  const ComparisonResult r =
      run(stories_options({"threads=2", "threads=2,model=/nonexistent/model.gguf", "threads=2,weights=q8_0"}));
  ASSERT_EQ(r.configs.size(), 3u);
  EXPECT_FALSE(r.configs[1].ran);
  EXPECT_NE(r.configs[1].refusal.find("/nonexistent/model.gguf"), std::string::npos) << r.configs[1].refusal;
  EXPECT_TRUE(r.configs[2].ran) << r.configs[2].refusal;
  EXPECT_TRUE(r.configs[2].quality_comparable);
  EXPECT_GT(r.configs[2].quality.mean_kl, 0.0);
  EXPECT_EQ(r.configs[2].replies.size(), 2u);
}

TEST(Comparison, ADifferentVocabularyRunsButHasNoQualityFigure) {
  const ComparisonResult r = run(stories_options(
      {"threads=2", "threads=2,model=" + testing::testdata("llama-2-tiny-random.gguf")}));
  ASSERT_TRUE(r.configs[1].ran) << r.configs[1].refusal;
  EXPECT_FALSE(r.configs[1].quality_comparable);
  EXPECT_NE(r.configs[1].quality_note.find("vocabulary"), std::string::npos);
  EXPECT_GT(r.configs[1].decode_tokens_per_s.median, 0);
}

TEST(Comparison, TimingRoundsAlternateTheConfigurations) {
  ComparisonOptions o = stories_options({"threads=2", "threads=2,weights=q8_0"});
  o.reps = 2;
  o.prompts = {"Once upon a time"};
  std::vector<std::string> stages;
  ComparisonCallbacks callbacks;
  callbacks.on_progress = [&](const ComparisonProgress& p) {
    if (p.stage.rfind("round", 0) == 0 && (stages.empty() || stages.back() != p.stage)) stages.push_back(p.stage);
  };
  const ComparisonResult r = run(o, callbacks);
  const std::vector<std::string> expected = {"round 1/2: baseline, prompt 1/1", "round 1/2: candidate 1, prompt 1/1",
                                             "round 2/2: baseline, prompt 1/1", "round 2/2: candidate 1, prompt 1/1"};
  EXPECT_EQ(stages, expected);
  EXPECT_EQ(r.configs[0].decode_tokens_per_s.samples.size(), 2u);
}

TEST(Comparison, CancelStopsTheRunAndSaysSo) {
  ComparisonOptions o = stories_options({"threads=2", "threads=2,weights=q8_0"});
  o.reps = 50;
  std::atomic<bool> cancel{false};
  ComparisonCallbacks callbacks;
  callbacks.cancel = &cancel;
  int last_done = 0, total = 0;
  callbacks.on_progress = [&](const ComparisonProgress& p) {
    last_done = p.done;
    total = p.total;
    if (p.done >= 6) cancel.store(true);
  };
  const ComparisonResult r = run(o, callbacks);
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(last_done, total / 4);
}

TEST(Comparison, PromptsSharingAPrefixReuseItOnlyWithThePrefixCache) {
  const std::string shared = "Once upon a time there was a little girl named Lily. She loved to play in the park with "
                             "her friends and her dog every day.";
  ComparisonOptions o = stories_options({"threads=2", "threads=2,prefix-cache=off"});
  o.prompts = {shared + " One day", shared + " The sun"};
  o.reps = 2;
  const ComparisonResult r = run(o);
  EXPECT_GT(r.configs[0].reused_tokens, 16);
  EXPECT_EQ(r.configs[1].reused_tokens, 0);
  EXPECT_EQ(r.configs[0].replies, r.configs[1].replies);
}

TEST(Comparison, RecordedRunsReadBackWithTheirFigures) {
  const ComparisonResult r = run(stories_options({"threads=2", "threads=2,weights=q4_0,cache-type-k=q8_0"}));
  const std::string path = (testing::scratch_dir("compare-db") / "runs.sqlite").string();
  auto store = store::Store::open(path);
  ASSERT_TRUE(store) << store.message();
  auto id = record_comparison(*store, r);
  ASSERT_TRUE(id) << id.message();
  auto runs = store->benchmark_runs().list(store::kCompareRun);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().id, *id);
  auto back = comparison_from_run(runs->front());
  ASSERT_TRUE(back) << back.message();
  ASSERT_EQ(back->configs.size(), 2u);
  EXPECT_EQ(back->options.prompts, r.options.prompts);
  for (size_t i = 0; i < 2; ++i) {
    const ConfigResult& a = r.configs[i];
    const ConfigResult& b = back->configs[i];
    EXPECT_EQ(b.config, a.config);
    EXPECT_EQ(b.replies, a.replies);
    EXPECT_DOUBLE_EQ(b.decode_tokens_per_s.median, a.decode_tokens_per_s.median);
    EXPECT_EQ(b.decode_tokens_per_s.samples, a.decode_tokens_per_s.samples);
    EXPECT_DOUBLE_EQ(b.quality.mean_kl, a.quality.mean_kl);
    EXPECT_DOUBLE_EQ(b.quality.top1_agreement, a.quality.top1_agreement);
    EXPECT_EQ(b.quality.kl_per_position, a.quality.kl_per_position);
    EXPECT_EQ(b.memory.kv_cache_bytes, a.memory.kv_cache_bytes);
  }
  EXPECT_EQ(comparison_json(*back), comparison_json(r));
}

TEST(Comparison, ChatFormatWrapsEachPromptInTheModelsTemplate) {
  const std::string model = (testing::scratch_dir("compare-chat") / "chat.gguf").string();
  const std::string tmpl = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
                           "{% if add_generation_prompt %}[assistant] {% endif %}";
  ASSERT_TRUE(testing::write_with_chat_template(testing::testdata("stories260K.gguf"), tmpl, model));
  ComparisonOptions o = stories_options({"threads=2", "threads=2,weights=q8_0"});
  o.default_model = model;
  o.prompts = {"Once upon a time"};
  o.chat = true;
  const ComparisonResult chat = run(o);
  o.chat = false;
  const ComparisonResult plain = run(o);
  auto loaded = Model::load(model);
  ASSERT_TRUE(loaded);
  const auto expected = (*loaded)->tokenizer().encode("[user] Once upon a time\n[assistant] ", true, true);
  EXPECT_EQ(chat.configs[0].prompt_tokens, static_cast<int64_t>(expected.size()));
  EXPECT_EQ(plain.configs[0].prompt_tokens,
            static_cast<int64_t>((*loaded)->tokenizer().encode("Once upon a time", true, false).size()));
  EXPECT_TRUE(chat.configs[1].quality_comparable);
  EXPECT_TRUE(comparison_from_json(comparison_json(chat))->options.chat);
}

TEST(Comparison, BadOptionsAreRefusedUpFront) {
  ComparisonOptions o = stories_options({"threads=2"});
  EXPECT_FALSE(run_comparison(o));
  o = stories_options({"threads=2", "threads=1"});
  o.prompts.clear();
  EXPECT_FALSE(run_comparison(o));
}

}  // namespace
}  // namespace inferscope
