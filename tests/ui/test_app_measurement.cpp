// The app's figures on a model the user names, a measurement rather than a test of the default
// suite (it skips unless INFERSCOPE_MEASURE_MODEL names a GGUF): the model loads through
// MainWindow::loadModel as a double-clicked app loads it, a reply of INFERSCOPE_MEASURE_TOKENS
// tokens (default 32) runs through the chat, and it prints the time to first token and decode
// rate the reply's stats line shows, and the memory estimate the model information dialog shows
// (engine/model/memory_estimate.h, at the session's context and threads) against what the
// session allocated (weights, KV cache, scratch) and the process's peak RSS. The estimate must be
// within 5% of the allocation.
//
//   INFERSCOPE_MEASURE_MODEL=gpt-oss.gguf ctest --test-dir build -R AppMeasurement -V
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "engine/gguf/gguf_file.h"
#include "engine/model/memory_estimate.h"
#include "engine/model/model_config.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"

namespace inferscope::ui {
namespace {

constexpr int kTimeoutMs = 600000;

// The process's peak resident set (VmHWM), in bytes; 0 when /proc does not say.
uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

TEST(AppMeasurement, TimeToFirstTokenDecodeRateAndMemoryEstimate) {
  const char* path = std::getenv("INFERSCOPE_MEASURE_MODEL");
  if (path == nullptr || *path == '\0') GTEST_SKIP() << "set INFERSCOPE_MEASURE_MODEL to a GGUF file to measure";
  const char* tokens_env = std::getenv("INFERSCOPE_MEASURE_TOKENS");
  const int tokens = tokens_env ? std::atoi(tokens_env) : 32;

  MainWindow window(testing::scratchDatabase(QStringLiteral("app-measurement")));
  window.resize(1100, 800);
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  QSignalSpy failed(&window, &MainWindow::loadFailed);
  window.loadModel(QString::fromUtf8(path));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, kTimeoutMs));
  ASSERT_TRUE(failed.isEmpty()) << failed.front().front().toString().toStdString();
  const auto summary = loaded.front().front().value<ModelSummary>();

  auto file = gguf::File::open(path);
  ASSERT_TRUE(file) << file.message();
  auto config = ModelConfig::from_gguf(**file);
  ASSERT_TRUE(config) << config.message();
  const MemoryEstimate estimate = estimate_memory(**file, *config, summary.contextLength, summary.threads);
  const uint64_t allocated = static_cast<uint64_t>(summary.weightsBytes + summary.kvCacheBytes + summary.scratchBytes);

  window.chat()->setMaxTokens(tokens);
  QSignalSpy finished(window.chat(), &ChatSession::replyFinished);
  QSignalSpy replyFailed(window.chat(), &ChatSession::replyFailed);
  ASSERT_TRUE(window.chat()->send(QStringLiteral("Tell me a story about a dragon.")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !finished.isEmpty() || !replyFailed.isEmpty(); }, kTimeoutMs));
  ASSERT_TRUE(replyFailed.isEmpty()) << replyFailed.front().front().toString().toStdString();
  const auto stats = finished.front().front().value<ReplyStats>();

  std::printf("model %s (%s), %s, context %lld, %d threads\n", path, summary.architecture.toStdString().c_str(),
              summary.backendShort.toStdString().c_str(), static_cast<long long>(summary.contextLength), summary.threads);
  std::printf("reply: %d tokens, prompt %d tokens, time to first token %.1f ms, decode %.2f tokens/s\n", stats.tokens,
              stats.promptTokens, stats.ttftMs, stats.tokensPerSecond);
  std::printf("memory estimate: weights %.1f MiB, KV %.1f MiB, scratch %.1f MiB, total %.1f MiB\n",
              mib(estimate.weights_bytes), mib(estimate.kv_cache_bytes), mib(estimate.scratch_bytes),
              mib(estimate.total_bytes()));
  std::printf("allocated:       weights %.1f MiB, KV %.1f MiB, scratch %.1f MiB, total %.1f MiB (estimate %+.2f%%)\n",
              mib(static_cast<uint64_t>(summary.weightsBytes)), mib(static_cast<uint64_t>(summary.kvCacheBytes)),
              mib(static_cast<uint64_t>(summary.scratchBytes)), mib(allocated),
              100.0 * (static_cast<double>(estimate.total_bytes()) / static_cast<double>(allocated) - 1.0));
  std::printf("peak RSS of the app process: %.1f MiB\n", mib(peak_rss_bytes()));
  EXPECT_GT(stats.tokens, 0);
  EXPECT_LT(std::fabs(static_cast<double>(estimate.total_bytes()) / static_cast<double>(allocated) - 1.0), 0.05);
}

}  // namespace
}  // namespace inferscope::ui
