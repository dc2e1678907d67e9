// The architectures of 2025-2026 on the CPU backend against the 2026 reference (llama.cpp
// d32676d7): tiny random models of each, 32 greedy tokens and every step's top-5
// log-probabilities (tests/support/reference_2026.h, tests/data/llama.cpp-2026).
#include <gtest/gtest.h>

#include "engine/backend/backend_registry.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"
#include "tests/support/logit_comparison.h"
#include "tests/support/reference_2026.h"

namespace inferscope {
namespace {

class CpuReference2026 : public ::testing::TestWithParam<const char*> {};

TEST_P(CpuReference2026, GreedyTokensAndLogProbsMatchLlamaCpp) {
  auto ref = testing::load_reference_2026(GetParam());
  ASSERT_TRUE(ref) << ref.message();
  auto model = Model::load(ref->model_path);
  ASSERT_TRUE(model) << model.message();
  ThreadPool pool(2);
  ForwardOptions options;
  options.n_ctx = 256;
  options.host_threads = &pool;
  auto fp = ForwardPass::open(*model, BackendChoice{}, options);
  ASSERT_TRUE(fp) << fp.message();
  testing::expect_matches_reference_2026(**fp, *ref);
}

INSTANTIATE_TEST_SUITE_P(LlamaCpp2026, CpuReference2026, ::testing::ValuesIn(testing::kReferences2026),
                         [](const ::testing::TestParamInfo<const char*>& info) { return testing::case_name(info.param); });

}  // namespace
}  // namespace inferscope
