// Loading a model costs what the memory estimate promised: the peak RSS of `generate` on the
// CPU backend (weights copied to huge-page memory, the default) stays within 5% of the
// estimate. Before the copy gave the file mapping's pages back, the weights were resident
// twice while they were copied (1,267 MiB peak for a 607 MiB model).
//
// A process also holds its code, libraries and tokenizer, the same for any model: that base is
// the peak of the same run on a tiny model with the same vocabulary, and is subtracted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_file.h"
#include "engine/model/memory_estimate.h"
#include "engine/model/model_config.h"
#include "engine/model/random_model.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"

namespace inferscope {
namespace {

using testing::CliRun;
using testing::quoted;
using testing::run_cli;

constexpr int64_t kContext = 64;
constexpr int kThreads = 2;

// ~200 MB of F32 matrices, with stories260K's vocabulary.
std::string write_large_model() {
  RandomModelSpec spec;
  spec.shape.n_embd = 1024;
  spec.shape.n_layer = 4;
  spec.shape.n_head = 16;
  spec.shape.n_head_kv = 16;
  spec.shape.n_ff = 2816;
  spec.shape.n_ctx = kContext;
  spec.mix = *quant_mix_from_name("f32", true);
  spec.vocab_path = testing::testdata("stories260K.gguf");
  const std::string path = (testing::scratch_dir("load-memory") / "large-f32.gguf").string();
  const Status written = write_random_model(spec, path);
  EXPECT_TRUE(written) << written.message();
  return path;
}

struct Measured {
  double peak_rss = 0;  // bytes
  double estimate = 0;  // bytes
  double weights = 0;   // bytes
};

Measured measure(const std::string& model) {
  Measured m;
  auto file = gguf::File::open(model);
  EXPECT_TRUE(file) << file.message();
  if (!file) return m;
  auto config = ModelConfig::from_gguf(**file);
  EXPECT_TRUE(config) << config.message();
  if (!config) return m;
  const MemoryEstimate e = estimate_memory(**file, *config, kContext, kThreads);
  m.estimate = static_cast<double>(e.total_bytes());
  m.weights = static_cast<double>(e.weights_bytes);
  const CliRun r = run_cli("generate --model " + quoted(model) + " --prompt 'Once upon a time' --max-tokens 4" +
                           " --temperature 0 --json --context " + std::to_string(kContext) +
                           " --threads " + std::to_string(kThreads));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return m;
  m.peak_rss = nlohmann::json::parse(r.out)["memory"]["peak_rss_bytes"].get<double>();
  return m;
}

TEST(CliLoadMemory, PeakRssStaysWithinFivePercentOfTheEstimate) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under AddressSanitizer the RSS also holds shadow memory and the allocator's quarantine";
#endif
  const Measured base = measure(testing::testdata("stories260K.gguf"));
  const Measured large = measure(write_large_model());
  ASSERT_GT(base.peak_rss, 0);
  ASSERT_GT(large.peak_rss, 0);
  const double used = large.peak_rss - base.peak_rss;
  const double promised = large.estimate - base.estimate;
  std::printf("[ load memory ] weights %.1f MiB, estimate %.1f MiB, peak RSS %.1f MiB above a %.1f MiB base "
              "(%.3f of the estimate)\n",
              large.weights / (1 << 20), promised / (1 << 20), used / (1 << 20), base.peak_rss / (1 << 20),
              used / promised);
  EXPECT_LE(used, 1.05 * promised);
  EXPECT_GE(used, 0.95 * large.weights) << "the weights were not all resident: was the copy skipped?";
}

}  // namespace
}  // namespace inferscope
