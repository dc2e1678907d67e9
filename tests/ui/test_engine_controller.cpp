// EngineController on its worker thread: loading with progress (automatic threads by default),
// replies streamed in paced batches, stop, a corrupt file that leaves the loaded model usable,
// speculative drafts (and the draft model's memory in the metrics while a reply drafts with it),
// the backends listed on its thread, and a device that does not exist failing as a backend error.
#include <algorithm>
#include <atomic>

#include <QElapsedTimer>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <gtest/gtest.h>

#include "engine/backend/backend_registry.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_thread.h"

namespace inferscope::ui {
namespace {

ChatRequest storyRequest(int maxTokens) {
  ChatRequest request;
  request.messages = {{QStringLiteral("user"), QStringLiteral("Tell me a story about a cat.")}};
  request.maxTokens = maxTokens;
  return request;
}

class EngineControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    QSignalSpy loaded(engine(), &EngineController::modelLoaded);
    engine()->loadModel(testing::bundledModel(), LoadOptions{});
    ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
    summary_ = loaded.front().front().value<ModelSummary>();
  }
  EngineController* engine() const { return thread_.controller(); }

  EngineThread thread_;
  ModelSummary summary_;
};

TEST_F(EngineControllerTest, LoadsTheBundledModelReportingProgress) {
  QSignalSpy progress(engine(), &EngineController::loadProgress);
  QSignalSpy loaded(engine(), &EngineController::modelLoaded);
  engine()->loadModel(testing::bundledModel(), LoadOptions{2, true});
  ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
  ASSERT_GE(progress.size(), 2);
  EXPECT_EQ(progress.front().front().toDouble(), 0.0);
  EXPECT_EQ(progress.back().front().toDouble(), 1.0);
  const auto summary = loaded.front().front().value<ModelSummary>();
  EXPECT_EQ(summary.architecture, QStringLiteral("llama"));
  EXPECT_EQ(summary.chatFormat, QStringLiteral("plain"));
  EXPECT_EQ(summary.backend, QStringLiteral("CPU"));
  EXPECT_EQ(summary.threads, 2);
  EXPECT_FALSE(summary.threadsAutomatic);  // a number fixes the threads
  EXPECT_EQ(summary.layers, 5);
  EXPECT_GT(summary.weightsBytes, 0);
}

// The default, "automatic", runs on every core (none kept back for the UI) and adapts to a busy
// machine.
TEST_F(EngineControllerTest, AutomaticThreadsAreEveryCoreAndAdapt) {
  EXPECT_EQ(summary_.threads, std::max(1, QThread::idealThreadCount()));
  EXPECT_TRUE(summary_.threadsAutomatic);
}

TEST_F(EngineControllerTest, StreamsAReplyInPacedBatches) {
  QSignalSpy chunks(engine(), &EngineController::tokens);
  QSignalSpy metrics(engine(), &EngineController::metrics);
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  engine()->generate(storyRequest(1500));
  ASSERT_TRUE(testing::waitForSignal(finished, 20000));
  const auto stats = finished.front().front().value<ReplyStats>();
  QString text;
  for (const auto& args : chunks) text += args.front().toString();
  EXPECT_GT(stats.tokens, 0);
  EXPECT_FALSE(text.isEmpty());
  EXPECT_GT(stats.tokensPerSecond, 0);
  EXPECT_GT(stats.ttftMs, 0);
  // Paced at ~30 Hz, never one signal per token.
  EXPECT_LT(chunks.size(), stats.tokens / 4) << chunks.size() << " chunks for " << stats.tokens << " tokens";
  ASSERT_FALSE(metrics.isEmpty());
  const auto last = metrics.back().front().value<MetricsSample>();
  EXPECT_EQ(last.tokens, stats.tokens);
  EXPECT_GT(last.weightsBytes, 0u);
  EXPECT_GT(last.kvCacheBytes, 0u);
  EXPECT_GT(last.scratchBytes, 0u);
}

TEST_F(EngineControllerTest, StopEndsTheReplyAtOnce) {
  QSignalSpy chunks(engine(), &EngineController::tokens);
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  engine()->generate(storyRequest(2000));
  ASSERT_TRUE(testing::waitForSignal(chunks, 10000));
  QElapsedTimer sinceStop;
  std::atomic<qint64> endedAfterNs{-1};  // measured on the engine's thread, as it reports the end
  QObject::connect(
      engine(), &EngineController::replyFinished, engine(), [&] { endedAfterNs = sinceStop.nsecsElapsed(); },
      Qt::DirectConnection);
  sinceStop.start();
  engine()->stop();
  ASSERT_TRUE(testing::waitForSignal(finished, 5000));
  // The spy records before the timing slot runs on the engine's thread; wait for that slot.
  for (int i = 0; i < 100 && endedAfterNs.load() < 0; ++i) QTest::qWait(10);
  const auto stats = finished.front().front().value<ReplyStats>();
  const double endedAfterMs = endedAfterNs / 1e6;
  std::printf("[ stop ] the reply ended %.2f ms after stop(), after %d tokens\n", endedAfterMs, stats.tokens);
  EXPECT_EQ(stats.stopReason, QStringLiteral("cancelled"));
  EXPECT_LT(stats.tokens, 2000);
  EXPECT_GE(endedAfterMs, 0.0);
  EXPECT_LT(endedAfterMs, 100.0);
}

TEST_F(EngineControllerTest, ACorruptFileFailsAndTheModelStaysUsable) {
  QSignalSpy failed(engine(), &EngineController::loadFailed);
  engine()->loadModel(testing::garbageGguf(QStringLiteral("controller-corrupt"), 4096), LoadOptions{});
  ASSERT_TRUE(testing::waitForSignal(failed, 10000));
  EXPECT_FALSE(failed.front().front().toString().isEmpty());
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  engine()->generate(storyRequest(32));
  ASSERT_TRUE(testing::waitForSignal(finished, 10000));
  EXPECT_GT(finished.front().front().value<ReplyStats>().tokens, 0);
}

// Speculative decoding from the sampling settings: the reply's statistics count the drafted and
// accepted tokens (a story whose phrases repeat gives drafts).
TEST_F(EngineControllerTest, ASpeculativeReplyCountsItsDrafts) {
  ChatRequest request = storyRequest(64);
  request.messages = {{QStringLiteral("user"),
                       QStringLiteral("Once upon a time, there was a little girl. Once upon a time, there was a little boy. "
                                      "Once upon a time,")}};
  request.sampling.temperature = 0;
  request.sampling.draftSource = DraftSource::Lookup;
  request.sampling.draftMax = 8;
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  engine()->generate(request);
  ASSERT_TRUE(testing::waitForSignal(finished, 10000));
  const auto stats = finished.front().front().value<ReplyStats>();
  EXPECT_GT(stats.draftTokens, 0);
  EXPECT_LE(stats.acceptedTokens, stats.draftTokens);
}

// The other sources: the loaded model's own file as the draft model (greedy, so every draft is
// right), and a layer-skip draft through more layers than the model has (the engine uses all
// but one). A draft model that cannot be opened fails the reply, saying why.
TEST_F(EngineControllerTest, DraftsFromAModelFileOrTheModelsFirstLayers) {
  ChatRequest request = storyRequest(48);
  request.sampling.temperature = 0;
  request.sampling.draftSource = DraftSource::Model;
  request.sampling.draftModelPath = testing::bundledModel();
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  engine()->generate(request);
  ASSERT_TRUE(testing::waitForSignal(finished, 10000));
  const auto byModel = finished.takeFirst().front().value<ReplyStats>();
  EXPECT_GT(byModel.draftTokens, 0);
  EXPECT_EQ(byModel.acceptedTokens, byModel.draftTokens);

  request.sampling.draftSource = DraftSource::LayerSkip;
  request.sampling.draftLayers = 99;
  engine()->generate(request);
  ASSERT_TRUE(testing::waitForSignal(finished, 10000));
  const auto byLayers = finished.takeFirst().front().value<ReplyStats>();
  EXPECT_GT(byLayers.draftTokens, 0);
  EXPECT_EQ(byLayers.tokens, byModel.tokens);

  QSignalSpy failed(engine(), &EngineController::replyFailed);
  request.sampling.draftSource = DraftSource::Model;
  request.sampling.draftModelPath = testing::bundledModel() + QStringLiteral(".missing");
  engine()->generate(request);
  ASSERT_TRUE(testing::waitForSignal(failed, 10000));
  EXPECT_TRUE(failed.front().front().toString().startsWith(QStringLiteral("The speculative draft cannot be used: ")))
      << failed.front().front().toString().toStdString();
}

// The metrics count the draft model's memory while a reply drafts with it, and only then: it
// stays open when the next reply drafts from the model's own layers, and is not counted there.
TEST_F(EngineControllerTest, TheMetricsCountTheDraftModelOnlyWhileTheReplyDraftsWithIt) {
  const QString draftFile = QString::fromStdString(inferscope::testing::testdata("derived/stories260K-moe4-distinct.gguf"));
  QSignalSpy metrics(engine(), &EngineController::metrics);
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  const auto replySamples = [&](const ChatRequest& request) {
    metrics.clear();
    finished.clear();
    engine()->generate(request);
    EXPECT_TRUE(testing::waitForSignal(finished, 20000));
    QList<MetricsSample> samples;  // the reply's: its last one is published before it finishes
    for (const auto& args : metrics) samples.append(args.front().value<MetricsSample>());
    EXPECT_FALSE(samples.isEmpty());
    return samples;
  };
  ChatRequest request = storyRequest(48);
  request.sampling.temperature = 0;
  const auto sameAsTheFirst = [](const QList<MetricsSample>& s) {
    return std::all_of(s.begin(), s.end(), [&](const MetricsSample& m) { return m.draftModelBytes == s.front().draftModelBytes; });
  };

  const QList<MetricsSample> undrafted = replySamples(request);
  for (const MetricsSample& s : undrafted) EXPECT_EQ(s.draftModelBytes, 0u);

  request.sampling.draftSource = DraftSource::Model;
  request.sampling.draftModelPath = draftFile;
  const QList<MetricsSample> drafted = replySamples(request);
  ASSERT_FALSE(drafted.isEmpty());
  EXPECT_GT(finished.front().front().value<ReplyStats>().draftTokens, 0);
  const quint64 draftBytes = drafted.front().draftModelBytes;
  EXPECT_GT(draftBytes, static_cast<quint64>(QFileInfo(draftFile).size() / 2)) << "its weights at least";
  EXPECT_TRUE(sameAsTheFirst(drafted));
  for (const MetricsSample& s : drafted) {
    EXPECT_EQ(s.draftModelDeviceBytes, 0u) << "on the CPU";
    EXPECT_EQ(s.weightsBytes, undrafted.back().weightsBytes) << "the target's figures leave it out";
    EXPECT_EQ(s.kvCacheBytes, undrafted.back().kvCacheBytes);
  }

  request.sampling.draftSource = DraftSource::LayerSkip;
  request.sampling.draftLayers = 2;
  for (const MetricsSample& s : replySamples(request)) EXPECT_EQ(s.draftModelBytes, 0u);

  request.sampling.draftSource = DraftSource::Model;  // the open draft model again
  const QList<MetricsSample> again = replySamples(request);
  ASSERT_FALSE(again.isEmpty());
  EXPECT_EQ(again.front().draftModelBytes, draftBytes);
  EXPECT_TRUE(sameAsTheFirst(again));
}

TEST_F(EngineControllerTest, ListsTheBackendsOnItsThread) {
  QSignalSpy listed(engine(), &EngineController::backendsListed);
  engine()->listBackends();
  ASSERT_TRUE(testing::waitForSignal(listed, 10000));
  const auto backends = listed.front().front().value<QList<BackendInfo>>();
  const std::vector<std::string> names = backend_names();  // cpu, then the plug-ins (vulkan, cuda...)
  ASSERT_EQ(static_cast<std::size_t>(backends.size()), names.size());
  EXPECT_EQ(backends[0].backend, "cpu");
  ASSERT_EQ(backends[0].devices.size(), 1);
  EXPECT_EQ(backendId(backends[0].devices[0].choice), QStringLiteral("cpu"));
  for (qsizetype i = 1; i < backends.size(); ++i) {
    EXPECT_EQ(backends[i].backend, names[static_cast<std::size_t>(i)]);
    // Devices, or the reason there are none.
    EXPECT_NE(backends[i].devices.isEmpty(), backends[i].unavailableReason.isEmpty()) << names[static_cast<std::size_t>(i)];
  }
}

TEST_F(EngineControllerTest, ADeviceThatDoesNotExistIsABackendErrorAndTheModelStaysUsable) {
  QSignalSpy backendFailed(engine(), &EngineController::backendFailed);
  QSignalSpy loadFailed(engine(), &EngineController::loadFailed);
  QSignalSpy progress(engine(), &EngineController::loadProgress);
  LoadOptions options;
  options.backend = BackendChoice{"vulkan", 77};
  engine()->loadModel(testing::bundledModel(), options);
  ASSERT_TRUE(testing::waitForSignal(backendFailed, 10000));
  EXPECT_EQ(backendFailed.front().at(0).toString(), QStringLiteral("Vulkan device 77"));
  EXPECT_FALSE(backendFailed.front().at(1).toString().isEmpty());
  EXPECT_TRUE(loadFailed.isEmpty());
  EXPECT_TRUE(progress.isEmpty());  // refused before the file is read
  QSignalSpy finished(engine(), &EngineController::replyFinished);
  engine()->generate(storyRequest(16));
  ASSERT_TRUE(testing::waitForSignal(finished, 10000));
  const auto stats = finished.front().front().value<ReplyStats>();
  EXPECT_GT(stats.tokens, 0);
  EXPECT_EQ(stats.backend, QStringLiteral("CPU"));
}

// A reply and the streamed text that made it.
std::pair<ReplyStats, QString> reply(EngineController* engine, const ChatRequest& request) {
  QSignalSpy chunks(engine, &EngineController::tokens);
  QSignalSpy finished(engine, &EngineController::replyFinished);
  engine->generate(request);
  EXPECT_TRUE(testing::waitForSignal(finished, 20000));
  QString text;
  for (const auto& args : chunks) text += args.front().toString();
  return {finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>(), text};
}

TEST_F(EngineControllerTest, TheSemanticCacheServesTheSameQuestionAndRunningForRealSkipsIt) {
  engine()->setDatabasePath(testing::scratchDatabase(QStringLiteral("engine-semantic-cache")));
  QSignalSpy notices(engine(), &EngineController::semanticCacheNotice);
  ChatRequest request = storyRequest(24);
  request.semanticCache.enabled = true;
  const auto [first, firstText] = reply(engine(), request);
  EXPECT_NE(first.stopReason, QStringLiteral("semantic_cache"));
  EXPECT_TRUE(first.cacheLookedUp);
  ASSERT_FALSE(firstText.isEmpty());

  const auto [cached, cachedText] = reply(engine(), request);
  EXPECT_EQ(cached.stopReason, QStringLiteral("semantic_cache"));
  EXPECT_NEAR(cached.cacheSimilarity, 1.0, 1e-5);
  EXPECT_EQ(cached.cacheMatchedPrompt, QStringLiteral("Tell me a story about a cat."));
  EXPECT_EQ(cachedText, firstText);
  EXPECT_TRUE(cached.cacheLookedUp);

  ChatRequest forReal = request;
  forReal.skipCacheLookup = true;
  const ReplyStats real = reply(engine(), forReal).first;
  EXPECT_NE(real.stopReason, QStringLiteral("semantic_cache"));
  EXPECT_FALSE(real.cacheLookedUp);  // not counted in the hit rate
  ChatRequest other = request;  // another conversation before the question: another scope
  other.messages.prepend({QStringLiteral("system"), QStringLiteral("You are terse.")});
  EXPECT_NE(reply(engine(), other).first.stopReason, QStringLiteral("semantic_cache"));
  ChatRequest off = request;
  off.semanticCache.enabled = false;
  const ReplyStats uncached = reply(engine(), off).first;
  EXPECT_NE(uncached.stopReason, QStringLiteral("semantic_cache"));
  EXPECT_FALSE(uncached.cacheLookedUp);
  EXPECT_TRUE(notices.isEmpty()) << notices.front().front().toString().toStdString();
}

TEST_F(EngineControllerTest, ADamagedCacheDatabaseIsANoticeAndTheReplyIsGenerated) {
  const QString path = testing::garbageGguf(QStringLiteral("damaged-cache"), 8192);
  engine()->setDatabasePath(path);
  QSignalSpy notices(engine(), &EngineController::semanticCacheNotice);
  ChatRequest request = storyRequest(8);
  request.semanticCache.enabled = true;
  const auto [stats, text] = reply(engine(), request);
  EXPECT_GT(stats.tokens, 0);
  EXPECT_FALSE(text.isEmpty());
  ASSERT_FALSE(notices.isEmpty());
  EXPECT_TRUE(notices.front().front().toString().contains(QStringLiteral("memory only")));
}

TEST(BackendIds, RoundTrip) {
  EXPECT_EQ(backendId(BackendChoice{}), QStringLiteral("cpu"));
  EXPECT_EQ(backendId(BackendChoice{"vulkan", 2}), QStringLiteral("vulkan:2"));
  const auto vulkan = backendChoiceFromId(QStringLiteral("vulkan:2"));
  ASSERT_TRUE(vulkan.has_value());
  EXPECT_EQ(vulkan->backend, "vulkan");
  EXPECT_EQ(vulkan->device, 2);
  EXPECT_TRUE(backendChoiceFromId(QStringLiteral("cpu")).has_value());
  for (const char* bad : {"", "gpu", "vulkan", "vulkan:", "vulkan:-1", "vulkan:x", "cpu:0"}) {
    EXPECT_FALSE(backendChoiceFromId(QString::fromLatin1(bad)).has_value()) << bad;
  }
  EXPECT_EQ(backendShortName("vulkan", QStringLiteral("llvmpipe (LLVM 15.0.6, 256 bits)")), QStringLiteral("Vulkan: llvmpipe"));
  EXPECT_EQ(backendDisplayName("cpu", {}), QStringLiteral("CPU"));
}

}  // namespace
}  // namespace inferscope::ui
