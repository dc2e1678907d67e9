// The semantic cache browser on the engine's thread: it lists what a database holds (entries
// put there by the engine's cache directly), searches, shows an entry whole, deletes the
// selected ones (gone from the file too), clears the last question's scope and the whole cache
// after asking, and the settings' limits and embedding model reach the cache.
#include <functional>

#include <QApplication>
#include <QCheckBox>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QTableView>
#include <QTextBrowser>
#include <QTest>
#include <QTimer>

#include <gtest/gtest.h>

#include "engine/semantic/semantic_cache.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_thread.h"
#include "ui/cache_browser/cache_browser.h"
#include "ui/cache_browser/cached_reply_model.h"
#include "ui/settings/semantic_cache_form.h"
#include "ui/settings/semantic_cache_store.h"

namespace inferscope::ui {
namespace {

// A unit vector along axis i of an 8-dimensional space.
std::vector<float> axis(std::size_t i) {
  std::vector<float> v(8, 0.0f);
  v[i] = 1.0f;
  return v;
}

// Puts three entries in two scopes into the database at `path`, as the engine's cache does.
void fillDatabase(const QString& path) {
  auto cache = semantic::SemanticCache::open_file(path.toStdString());
  ASSERT_TRUE(cache && cache->is_persistent()) << (cache ? cache->notice() : cache.message());
  ASSERT_TRUE(cache->insert("geography-scope", "What is the capital of France?", axis(0), "Paris."));
  ASSERT_TRUE(cache->insert("geography-scope", "What is the capital of Italy?", axis(1), "Rome."));
  ASSERT_TRUE(cache->insert("jokes-scope", "Tell me a joke", axis(2), "Knock knock."));
}

std::size_t entriesInFile(const QString& path) {
  auto cache = semantic::SemanticCache::open_file(path.toStdString());
  EXPECT_TRUE(cache && cache->is_persistent());
  return cache ? cache->stats().entries : 0;
}

// Answers the next question box with `button` once it shows.
void answerNextQuestion(QMessageBox::StandardButton button) {
  QTimer::singleShot(0, [button] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    ASSERT_NE(box, nullptr);
    box->button(button)->click();
  });
}

class CacheBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    QSignalSpy loaded(engine(), &EngineController::modelLoaded);
    engine()->loadModel(testing::bundledModel(), LoadOptions{});
    ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
  }
  EngineController* engine() const { return thread_.controller(); }

  // Waits for the browser's next listing after `action`.
  static void listedAfter(CacheBrowser& browser, const std::function<void()>& action) {
    QSignalSpy listed(&browser, &CacheBrowser::listed);
    action();
    ASSERT_TRUE(testing::waitForSignal(listed, 20000));
  }

  // A reply to `question` with the cache on (stored after a miss); its stop reason.
  QString ask(const QString& question, const SemanticCacheSettings& settings = enabled()) {
    ChatRequest request;
    request.messages = {{QStringLiteral("user"), question}};
    request.maxTokens = 8;
    request.semanticCache = settings;
    QSignalSpy finished(engine(), &EngineController::replyFinished);
    engine()->generate(request);
    EXPECT_TRUE(testing::waitForSignal(finished, 20000));
    return finished.isEmpty() ? QString() : finished.front().front().value<ReplyStats>().stopReason;
  }
  static SemanticCacheSettings enabled() {
    SemanticCacheSettings s;
    s.enabled = true;
    return s;
  }

  EngineThread thread_;
};

TEST_F(CacheBrowserTest, ListsSearchesShowsAndDeletesEntries) {
  const QString path = testing::scratchDatabase(QStringLiteral("cache-browser-list"));
  fillDatabase(path);
  engine()->setDatabasePath(path);
  QSignalSpy firstListing(engine(), &EngineController::semanticCacheListed);
  CacheBrowser browser(engine());
  CacheBrowser* b = &browser;
  b->resize(900, 600);
  b->show();
  ASSERT_TRUE(testing::waitForSignal(firstListing, 20000));
  QCoreApplication::processEvents();
  ASSERT_EQ(b->entries().rowCount(), 3);
  EXPECT_EQ(b->entries().entry(0).prompt, QStringLiteral("Tell me a joke"));  // most recently used first
  auto* clearScope = b->findChild<QPushButton*>("cacheClearScope");
  EXPECT_FALSE(clearScope->isEnabled());  // no question looked up yet: no last scope

  listedAfter(*b, [&] { b->setSearchText(QStringLiteral("PARIS")); });
  ASSERT_EQ(b->entries().rowCount(), 1);
  auto* table = b->findChild<QTableView*>("cacheEntries");
  table->selectRow(0);
  const QString detail = b->findChild<QTextBrowser*>("cacheEntryDetail")->toPlainText();
  EXPECT_TRUE(detail.contains(QStringLiteral("What is the capital of France?"))) << detail.toStdString();
  EXPECT_TRUE(detail.contains(QStringLiteral("Paris."))) << detail.toStdString();
  testing::saveScreenshot(b, QStringLiteral("cache-browser"));

  auto* remove = b->findChild<QPushButton*>("cacheDelete");
  ASSERT_TRUE(remove->isEnabled());
  listedAfter(*b, [&] { remove->click(); });
  EXPECT_EQ(b->entries().rowCount(), 0);
  listedAfter(*b, [&] { b->setSearchText(QString()); });
  EXPECT_EQ(b->entries().rowCount(), 2);
  EXPECT_EQ(entriesInFile(path), 2u);
}

TEST_F(CacheBrowserTest, ClearsTheLastQuestionsScopeAndEverythingAfterAsking) {
  const QString path = testing::scratchDatabase(QStringLiteral("cache-browser-clear"));
  fillDatabase(path);
  engine()->setDatabasePath(path);
  EXPECT_NE(ask(QStringLiteral("Tell me a story.")), QStringLiteral("semantic_cache"));
  EXPECT_EQ(ask(QStringLiteral("Tell me a story.")), QStringLiteral("semantic_cache"));
  QSignalSpy firstListing(engine(), &EngineController::semanticCacheListed);
  CacheBrowser browser(engine());
  ASSERT_TRUE(testing::waitForSignal(firstListing, 20000));
  QCoreApplication::processEvents();
  ASSERT_EQ(browser.entries().rowCount(), 4);
  EXPECT_TRUE(browser.entries().entry(0).inLastScope);
  EXPECT_EQ(browser.entries().entry(0).hits, 1);

  auto* lastScopeOnly = browser.findChild<QCheckBox*>();
  ASSERT_TRUE(lastScopeOnly->isEnabled());
  listedAfter(browser, [&] { lastScopeOnly->setChecked(true); });
  ASSERT_EQ(browser.entries().rowCount(), 1);
  EXPECT_EQ(browser.entries().entry(0).prompt, QStringLiteral("Tell me a story."));

  auto* clearScope = browser.findChild<QPushButton*>("cacheClearScope");
  answerNextQuestion(QMessageBox::Yes);
  listedAfter(browser, [&] { clearScope->click(); });
  EXPECT_EQ(browser.entries().rowCount(), 0);
  listedAfter(browser, [&] { lastScopeOnly->setChecked(false); });
  EXPECT_EQ(browser.entries().rowCount(), 3);  // the other scopes stay

  auto* clearAll = browser.findChild<QPushButton*>("cacheClearAll");
  QSignalSpy listed(&browser, &CacheBrowser::listed);
  answerNextQuestion(QMessageBox::Cancel);
  clearAll->click();
  QTest::qWait(200);
  EXPECT_TRUE(listed.isEmpty());  // cancelled: nothing asked of the engine
  answerNextQuestion(QMessageBox::Yes);
  listedAfter(browser, [&] { clearAll->click(); });
  EXPECT_EQ(browser.entries().rowCount(), 0);
  EXPECT_FALSE(clearAll->isEnabled());
}

TEST_F(CacheBrowserTest, TheSettingsLimitsEvictAndABertFileEmbeds) {
  engine()->setDatabasePath(testing::scratchDatabase(QStringLiteral("cache-browser-limits")));
  SemanticCacheSettings settings = enabled();
  settings.maxEntries = 1;
  settings.embeddingModel = QString::fromStdString(inferscope::testing::testdata("derived/tiny-random-bert-bge.gguf"));
  QSignalSpy notices(engine(), &EngineController::semanticCacheNotice);
  EXPECT_NE(ask(QStringLiteral("What is a cat?"), settings), QStringLiteral("semantic_cache"));
  EXPECT_EQ(ask(QStringLiteral("What is a cat?"), settings), QStringLiteral("semantic_cache"));
  EXPECT_NE(ask(QStringLiteral("Why is the sky blue?"), settings), QStringLiteral("semantic_cache"));
  EXPECT_TRUE(notices.isEmpty()) << notices.front().front().toString().toStdString();
  QSignalSpy firstListing(engine(), &EngineController::semanticCacheListed);
  CacheBrowser browser(engine());
  ASSERT_TRUE(testing::waitForSignal(firstListing, 20000));
  QCoreApplication::processEvents();
  ASSERT_EQ(browser.entries().rowCount(), 1);  // one entry at most: the first went
  EXPECT_EQ(browser.entries().entry(0).prompt, QStringLiteral("Why is the sky blue?"));

  settings.embeddingModel = QStringLiteral("/nonexistent/embedder.gguf");
  EXPECT_NE(ask(QStringLiteral("Why is the sky blue?"), settings), QStringLiteral("semantic_cache"));
  ASSERT_FALSE(notices.isEmpty());
  EXPECT_TRUE(notices.back().front().toString().contains(QStringLiteral("embedding model could not be loaded")))
      << notices.back().front().toString().toStdString();
}

TEST(SemanticCacheSettingsStore, RoundTripsThroughQSettingsAndRefusesOutOfRangeValues) {
  const QString file = testing::scratchDatabase(QStringLiteral("cache-settings")) + QStringLiteral(".ini");
  QSettings settings(file, QSettings::IniFormat);
  SemanticCacheSettings chosen;
  chosen.enabled = true;
  chosen.threshold = 0.93;
  chosen.guard = false;
  chosen.embeddingModel = QStringLiteral("/models/bge-small.gguf");
  chosen.ttlHours = 5;
  chosen.maxEntries = 77;
  chosen.maxMegabytes = 9;
  writeSemanticCacheSettings(settings, chosen);
  EXPECT_EQ(readSemanticCacheSettings(settings), chosen);
  settings.setValue("semanticCache/threshold", 1.5);
  settings.setValue("semanticCache/maxEntries", -3);
  settings.setValue("semanticCache/ttlHours", QStringLiteral("soon"));
  const SemanticCacheSettings read = readSemanticCacheSettings(settings);
  EXPECT_EQ(read.threshold, SemanticCacheSettings{}.threshold);
  EXPECT_EQ(read.maxEntries, SemanticCacheSettings{}.maxEntries);
  EXPECT_EQ(read.ttlHours, SemanticCacheSettings{}.ttlHours);

  SemanticCacheForm form;
  QSignalSpy changed(&form, &SemanticCacheForm::changed);
  form.setSettings(chosen);
  EXPECT_EQ(changed.size(), 1);
  EXPECT_EQ(form.settings(), chosen);
}

}  // namespace
}  // namespace inferscope::ui
