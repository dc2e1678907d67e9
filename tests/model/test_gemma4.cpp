// Gemma 4's memory kinds on gemma4-tiny (ten layers: eight windowed with heads of 32, two full
// with heads of 64; the last five read layers 3's and 4's KV): what each layer stores, the
// estimate against what a pass allocates, and files whose parts do not fit refused by name.
// Its outputs are held to llama.cpp's in test_reference_2026.cpp (gemma4-tiny-f32, -q8_0).
#include <gtest/gtest.h>

#include <functional>

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/graph/forward_pass.h"
#include "engine/model/memory_estimate.h"
#include "tests/support/cpu_forward_pass.h"
#include "tests/support/edited_models.h"
#include "tests/support/reference_2026.h"

namespace inferscope {
namespace {

std::shared_ptr<const Model> load_tiny() {
  auto ref = testing::load_reference_2026("gemma4-tiny-f32");
  EXPECT_TRUE(ref) << ref.message();
  if (!ref) return nullptr;
  auto model = Model::load(ref->model_path);
  EXPECT_TRUE(model) << model.message();
  return model ? *model : nullptr;
}

TEST(Gemma4Memory, SharedKvLayersStoreNoRowsAndReadTheirSourceKind) {
  auto model = load_tiny();
  ASSERT_TRUE(model);
  const ModelConfig& c = model->config();
  ASSERT_EQ(c.n_kv_shared, 5);
  for (int64_t l = 0; l < 5; ++l) EXPECT_EQ(c.kv_layer(l), l);
  for (int64_t l = 5; l < 10; ++l) {
    EXPECT_EQ(c.kv_layer(l), c.uses_sliding_window(l) ? 3 : 4) << l;
    EXPECT_EQ(c.layer_head_dim(l), c.uses_sliding_window(l) ? 32 : 64) << l;
  }
  const KvLayout kv = KvLayout::for_model(c.kv_rows(), 256, 1, {}, kDefaultKvBlockSize, 16, true);
  for (int64_t l = 5; l < 10; ++l) EXPECT_EQ(kv.pool_of(l), KvPool::None) << l;
  EXPECT_EQ(kv.layers_in(KvPool::Main) + kv.layers_in(KvPool::Window), 5);
  EXPECT_EQ(kv.n_embd_kv, 2 * 64) << "rows as wide as the full layers' heads";
}

// The estimate (inspect, the app's model info) counts KV and shared layers apart, as a pass
// allocates them.
TEST(Gemma4Memory, TheEstimateCountsEachKindAsAllocated) {
  auto model = load_tiny();
  ASSERT_TRUE(model);
  ThreadPool threads(2);
  ForwardOptions options;
  options.n_ctx = 256;
  options.max_batch = 16;
  auto fp = cpu_forward_pass(model, threads, options);
  ASSERT_TRUE(fp) << fp.message();
  const MemoryEstimate e = estimate_memory(model->file(), model->config(), 256, 2, 16);
  const ExecutorMemory measured = (*fp)->memory();
  EXPECT_EQ(e.kv_layers, 5);
  EXPECT_EQ(e.shared_kv_layers, 5);
  EXPECT_EQ(e.recurrent_layers, 0);
  EXPECT_EQ(e.kv_cache_bytes, measured.kv_cache_bytes);
  const double total =
      static_cast<double>(model->weights().total_bytes + measured.kv_cache_bytes + measured.scratch_bytes);
  EXPECT_NEAR(static_cast<double>(e.total_bytes()) / total, 1.0, 0.05);
}

Result<std::shared_ptr<const Model>> load_edited(const std::function<void(gguf::Writer&)>& edit,
                                                 const std::string& drop_tensor = "") {
  return testing::try_load_reference_edited("gemma4-tiny-f32", edit, drop_tensor);
}

TEST(Gemma4Models, InconsistentOrMissingPartsAreRefusedByName) {
  // Six shared layers: the full layer 9 would read layer 3, a window layer.
  auto kinds = load_edited([](gguf::Writer& w) { w.add_u32("gemma4.attention.shared_kv_layers", 6); });
  ASSERT_FALSE(kinds);
  EXPECT_NE(kinds.message().find("of the other kind"), std::string::npos) << kinds.message();
  auto heads = load_edited([](gguf::Writer& w) { w.add_u32("gemma4.attention.value_length_swa", 48); });
  ASSERT_FALSE(heads);
  EXPECT_NE(heads.message().find("key_length_swa"), std::string::npos) << heads.message();
  auto table = load_edited([](gguf::Writer&) {}, "per_layer_token_embd.weight");
  ASSERT_FALSE(table);
  EXPECT_NE(table.message().find("per_layer_token_embd.weight"), std::string::npos) << table.message();
  auto moe = load_edited([](gguf::Writer& w) {
    w.add_u32("gemma4.expert_count", 4);
    w.add_u32("gemma4.expert_used_count", 2);
  });
  ASSERT_FALSE(moe);
  EXPECT_NE(moe.message().find("mixture-of-experts"), std::string::npos) << moe.message();
}

}  // namespace
}  // namespace inferscope
