// Configurations as users write them: key=value lists and JSON objects, canonical text, errors.
#include <gtest/gtest.h>

#include "engine/compare/compare_config.h"

namespace inferscope {
namespace {

TEST(CompareConfig, ParsesKeyValueLists) {
  auto c = parse_compare_config(
      " model=/m/a.gguf, weights=Q4_K_M ,cache-type-k=q8_0,cache-type-v=q4_0,kv-block-size=32,cache-budget=64,"
      "prefix-cache=off,kv-window=512,kv-sinks=8,context-shift=on,threads=2,context=1024,label=small");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->model_path, "/m/a.gguf");
  EXPECT_EQ(c->weights, "q4_k_m");
  EXPECT_EQ(c->kv_types.k, KvType::Q8_0);
  EXPECT_EQ(c->kv_types.v, KvType::Q4_0);
  EXPECT_EQ(c->cache.kv_block_size, 32);
  EXPECT_EQ(c->cache.kv_cache_budget_bytes, uint64_t(64) << 20);
  EXPECT_FALSE(c->cache.prefix_cache);
  EXPECT_EQ(c->cache.kv_window, 512);
  EXPECT_EQ(c->cache.kv_sinks, 8);
  EXPECT_TRUE(c->cache.context_shift);
  EXPECT_EQ(c->n_threads, 2);
  EXPECT_EQ(c->n_ctx, 1024);
  EXPECT_EQ(c->label, "small");
}

TEST(CompareConfig, ParsesJsonObjects) {
  auto c = parse_compare_config(R"({"weights": "q8_0", "cache-type-k": "q4_0", "prefix-cache": false, "threads": 3})");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->weights, "q8_0");
  EXPECT_EQ(c->kv_types.k, KvType::Q4_0);
  EXPECT_FALSE(c->cache.prefix_cache);
  EXPECT_EQ(c->n_threads, 3);
}

TEST(CompareConfig, BackendWithDevice) {
  auto c = parse_compare_config("backend=cpu");
  ASSERT_TRUE(c) << c.message();
  EXPECT_TRUE(c->backend.on_cpu());
  EXPECT_FALSE(parse_compare_config("backend=quantum"));
}

TEST(CompareConfig, CanonicalTextRoundTrips) {
  EXPECT_EQ(compare_config_text(CompareConfig{}), "defaults");
  auto c = parse_compare_config("cache-type-v=nf4,weights=q2_k,context=256,label=x");
  ASSERT_TRUE(c);
  const std::string text = compare_config_text(*c);
  EXPECT_EQ(text, "weights=q2_k,cache-type-v=nf4,context=256");
  auto again = parse_compare_config(text);
  ASSERT_TRUE(again);
  again->label = c->label;
  EXPECT_EQ(*again, *c);
}

TEST(CompareConfig, WeightLabRecipes) {
  auto c = parse_compare_config("weights=Q4_0+GPTQ,label=g");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->weights, "q4_0+gptq");
  EXPECT_EQ(compare_config_text(*c), "weights=q4_0+gptq");
  EXPECT_EQ(parse_compare_config("weights=f16+2:4")->weights, "f16+2:4");
  auto bad = parse_compare_config("weights=q6_k+gptq");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("GPTQ places weights"), std::string::npos) << bad.message();
}

TEST(CompareConfig, ErrorsNameTheKeyAndWhatItAccepts) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {{"weights=q9_9", "unknown weight format"},
               {"cache-type-k=q3", "cache-type-k"},
               {"kv-block-size=17", "kv-block-size"},
               {"threads=-1", "threads=-1"},
               {"prefix-cache=maybe", "expected on or off"},
               {"colour=blue", "unknown configuration key 'colour'"},
               {"weights", "not key=value"},
               {"{\"threads\": [1]}", "must be a string"},
               {"{not json", "not a JSON object"}};
  for (const Case& c : cases) {
    auto parsed = parse_compare_config(c.text);
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_NE(parsed.message().find(c.expected), std::string::npos) << c.text << ": " << parsed.message();
  }
}

}  // namespace
}  // namespace inferscope
