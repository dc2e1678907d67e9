// The main window's docks wired to the engine and the database: sampling settings reach the next
// reply without a reload, Apply reloads the model, presets round-trip through the database, the
// performance panel follows the replies (a draft model's memory too), Model Info opens, and the system prompt is stored with
// the session. Screenshots of the whole window mid-generation and idle, and at small sizes, where
// everything still fits.
#include <QAbstractButton>
#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <gtest/gtest.h>

#include "engine/store/store.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"
#include "ui/chat/message_input.h"
#include "ui/metrics/performance_panel.h"
#include "ui/model_info/model_info_dialog.h"
#include "ui/sessions/session_sidebar.h"
#include "ui/settings/settings_dock.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

constexpr int kTimeoutMs = 20000;

class MainWindowDocks : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::scratchDatabase(QStringLiteral("docks"));
    window_ = testing::windowWithModel(path_);
    ASSERT_TRUE(window_->hasModel());
  }
  template <typename T>
  T* dockChild(const char* name) const {
    return window_->settingsDock()->findChild<T*>(QLatin1String(name));
  }
  ReplyStats send(const QString& text) {
    QSignalSpy finished(window_->chat(), &ChatSession::replyFinished);
    EXPECT_TRUE(window_->chat()->send(text));
    EXPECT_TRUE(finished.wait(kTimeoutMs));
    return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
  }
  ReplyStats regenerate() {
    QSignalSpy finished(window_->chat(), &ChatSession::replyFinished);
    window_->chat()->regenerate();
    EXPECT_TRUE(finished.wait(kTimeoutMs));
    return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
  }

  QString path_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(MainWindowDocks, MaxTokensFromTheDockLimitsTheNextReply) {
  dockChild<QSpinBox>("maxTokens")->setValue(3);
  const ReplyStats stats = send(QStringLiteral("Once upon a time"));
  EXPECT_EQ(stats.tokens, 3);
  EXPECT_EQ(stats.stopReason, QStringLiteral("max_tokens"));
}

TEST_F(MainWindowDocks, TemperatureZeroGivesTheSameReplyEveryTime) {
  dockChild<QDoubleSpinBox>("temperature")->setValue(0.0);
  dockChild<QSpinBox>("maxTokens")->setValue(24);
  send(QStringLiteral("The dog"));
  const QString first = window_->chat()->lastReply();
  regenerate();
  EXPECT_EQ(window_->chat()->lastReply(), first);
  EXPECT_FALSE(first.isEmpty());
}

TEST_F(MainWindowDocks, APresetIsStoredAndLoadedBack) {
  dockChild<QDoubleSpinBox>("temperature")->setValue(0.35);
  dockChild<QSpinBox>("maxTokens")->setValue(77);
  auto* name = dockChild<QComboBox>("presetName");
  name->setEditText(QStringLiteral("short"));
  QTest::mouseClick(dockChild<QPushButton>("savePreset"), Qt::LeftButton);
  ASSERT_TRUE(QTest::qWaitFor([&] { return name->findText(QStringLiteral("short")) >= 0; }, kTimeoutMs));
  dockChild<QSpinBox>("maxTokens")->setValue(5);
  name->setEditText(QStringLiteral("short"));
  QTest::mouseClick(dockChild<QPushButton>("loadPreset"), Qt::LeftButton);
  ASSERT_TRUE(QTest::qWaitFor([&] { return dockChild<QSpinBox>("maxTokens")->value() == 77; }, kTimeoutMs));
  EXPECT_NEAR(dockChild<QDoubleSpinBox>("temperature")->value(), 0.35, 1e-6);
  auto db = store::Store::open_read_only(path_.toStdString());
  ASSERT_TRUE(db);
  auto preset = db->presets().load("short");
  ASSERT_TRUE(preset);
  EXPECT_NE(preset->settings_json.find("\"max_tokens\":77"), std::string::npos) << preset->settings_json;
}

TEST_F(MainWindowDocks, ApplyReloadsTheModelWithProgress) {
  QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
  dockChild<QSpinBox>("contextLength")->setValue(256);
  QTest::mouseClick(dockChild<QPushButton>("applyModel"), Qt::LeftButton);
  EXPECT_TRUE(window_->isLoading());
  EXPECT_TRUE(window_->engineStatusBar()->findChild<QProgressBar*>(QStringLiteral("loadProgress"))->isVisible());
  ASSERT_TRUE(loaded.wait(kTimeoutMs));
  EXPECT_EQ(loaded.front().front().value<ModelSummary>().contextLength, 256);
  EXPECT_FALSE(window_->isLoading());
}

TEST_F(MainWindowDocks, PerformancePanelFollowsTheReplies) {
  dockChild<QSpinBox>("maxTokens")->setValue(40);
  const ReplyStats stats = send(QStringLiteral("Hello"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return window_->performancePanel()->metricsCsv().contains(QStringLiteral("\nreply,,1,")); }, 2000))
      << window_->performancePanel()->metricsCsv().toStdString();
  EXPECT_GT(stats.tokens, 0);
  EXPECT_TRUE(window_->performancePanel()->metricsCsv().contains(QStringLiteral("\ndecode,")));
  EXPECT_TRUE(window_->performancePanel()->metricsCsv().contains(QStringLiteral("\nmemory,")));
}

// A reply drafting with a draft model (Settings > Sampling) stacks its memory on the chart and
// into the summary; the next reply, drafting by prompt lookup, drops it. Screenshots at 800x600,
// of the window and of the performance panel.
TEST_F(MainWindowDocks, PerformancePanelShowsTheDraftModelOfASpeculativeReply) {
  window_->resize(800, 600);
  dockChild<QSpinBox>("maxTokens")->setValue(32);
  auto* source = dockChild<QComboBox>("draftSource");
  source->setCurrentIndex(source->findData(static_cast<int>(DraftSource::Model)));
  dockChild<QLineEdit>("draftModelPath")
      ->setText(QString::fromStdString(inferscope::testing::testdata("derived/stories260K-moe4-distinct.gguf")));
  PerformancePanel* panel = window_->performancePanel();
  const auto lastDraftColumn = [&] {  // draft_model_bytes of the last memory row
    const QStringList lines = panel->metricsCsv().split('\n', Qt::SkipEmptyParts);
    for (qsizetype i = lines.size() - 1; i > 0; --i) {
      if (lines[i].startsWith(QLatin1String("memory,"))) return lines[i].section(',', 8, 8).toULongLong();
    }
    return quint64{0};
  };
  EXPECT_GT(send(QStringLiteral("Once upon a time")).draftTokens, 0);
  ASSERT_TRUE(QTest::qWaitFor([&] { return panel->memorySummary().contains(QStringLiteral("draft model")); }, 2000))
      << panel->memorySummary().toStdString();
  EXPECT_GT(lastDraftColumn(), 0u);
  QTest::qWait(300);  // the chart redraws on its timer
  testing::saveScreenshot(window_.get(), QStringLiteral("main_window_draft_model_800x600"));
  testing::saveScreenshot(panel, QStringLiteral("performance_panel_draft_model_800x600"));

  source->setCurrentIndex(source->findData(static_cast<int>(DraftSource::Lookup)));
  send(QStringLiteral("Once upon a time"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !panel->memorySummary().contains(QStringLiteral("draft model")); }, 2000))
      << panel->memorySummary().toStdString();
  EXPECT_EQ(lastDraftColumn(), 0u);
}

TEST_F(MainWindowDocks, ModelInfoOpensForTheLoadedModel) {
  auto* action = window_->findChild<QAction*>(QStringLiteral("modelInfoAction"));
  ASSERT_NE(action, nullptr);
  ASSERT_TRUE(action->isEnabled());
  action->trigger();
  auto* dialog = window_->findChild<ModelInfoDialog*>();
  ASSERT_NE(dialog, nullptr);
  EXPECT_TRUE(dialog->isVisible());
  dialog->close();
}

TEST_F(MainWindowDocks, TheSystemPromptIsStoredWithTheSession) {
  QLineEdit* field = window_->systemPromptField();
  field->setText(QStringLiteral("You tell short stories."));
  emit field->editingFinished();
  dockChild<QSpinBox>("maxTokens")->setValue(4);
  send(QStringLiteral("Begin"));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        auto db = store::Store::open_read_only(path_.toStdString());
        if (!db) return false;
        auto sessions = db->sessions().list();
        return sessions && sessions->size() == 1 && sessions->front().system_prompt == "You tell short stories.";
      },
      kTimeoutMs));
}

TEST_F(MainWindowDocks, ScreenshotsMidGenerationAndIdle) {
  window_->resize(1400, 900);
  dockChild<QSpinBox>("maxTokens")->setValue(12);
  send(QStringLiteral("Tell me about a cat"));
  dockChild<QSpinBox>("maxTokens")->setValue(2000);
  // The bundled model fills its 512-token context in a fraction of a second; with the context
  // shifting, the long reply runs its 2000 tokens, so it is surely still running when looked at.
  QSignalSpy policy(window_->engine(), &EngineController::cachePolicyChanged);
  CachePolicy shifting;
  shifting.context_shift = true;
  window_->engine()->setCachePolicy(shifting);
  ASSERT_TRUE(testing::waitForSignal(policy, kTimeoutMs));
  QSignalSpy chunks(window_->engine(), &EngineController::tokens);
  QSignalSpy finished(window_->chat(), &ChatSession::replyFinished);
  ASSERT_TRUE(window_->chat()->send(QStringLiteral("And then a long story about a dog")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return chunks.size() >= 8; }, kTimeoutMs));
  EXPECT_TRUE(window_->chat()->isBusy());
  testing::saveScreenshot(window_.get(), QStringLiteral("main_window_docks_generating"));
  window_->chat()->stop();
  ASSERT_TRUE(finished.wait(kTimeoutMs));
  QTest::qWait(300);  // the performance panel redraws on its timer
  testing::saveScreenshot(window_.get(), QStringLiteral("main_window_docks_idle"));
}

// True when nothing of `widget` is cut off by its ancestors up to the window.
bool fullyVisible(QWidget* widget) {
  if (!widget->isVisible()) return false;
  QRect area = widget->rect();
  for (QWidget* w = widget; !w->isWindow(); w = w->parentWidget()) {
    area.translate(w->pos());
    if (!w->parentWidget()->rect().contains(area)) return false;
  }
  return true;
}

// The window at small sizes, all docks open, after a reply (so every chart has data): the window
// takes the size (no dock or button row forces it wider), nothing needs a horizontal scroll bar,
// the buttons show their whole text, and the chat keeps room for a message. Screenshots of each.
TEST_F(MainWindowDocks, FitsSmallWindowsWithEveryDockOpen) {
  dockChild<QSpinBox>("maxTokens")->setValue(24);
  send(QStringLiteral("Tell me about a cat"));
  for (const QSize size : {QSize(800, 600), QSize(1024, 700)}) {
    SCOPED_TRACE(size.width());
    window_->resize(size);
    QTest::qWait(400);  // layouts settle; the performance panel redraws on its timer
    const QString name = QStringLiteral("main_window_small_%1x%2").arg(size.width()).arg(size.height());
    testing::saveScreenshot(window_.get(), name);
    EXPECT_EQ(window_->width(), size.width()) << "the window's minimum width is " << window_->minimumSizeHint().width();
    EXPECT_EQ(window_->height(), size.height()) << "its minimum height is " << window_->minimumSizeHint().height();
    for (QScrollArea* scroll : window_->findChildren<QScrollArea*>()) {
      EXPECT_FALSE(scroll->horizontalScrollBar()->isVisible()) << scroll->objectName().toStdString();
    }
    auto* chat = window_->findChild<QScrollArea*>(QStringLiteral("chatView"));
    EXPECT_GE(chat->viewport()->height(), 100);
    EXPECT_LE(chat->widget()->width(), chat->viewport()->width()) << "messages wrap instead of being cut off";
    for (QAbstractButton* button : window_->findChildren<QAbstractButton*>()) {
      const bool shown = button->isVisible() && button->window() == window_.get();
      if (!shown || button->text().isEmpty() || button->objectName().startsWith(QLatin1String("qt_"))) continue;
      const QString text = button->text().remove(QLatin1Char('&'));
      EXPECT_GE(button->width(), button->fontMetrics().horizontalAdvance(text)) << text.toStdString();
    }
    EXPECT_TRUE(fullyVisible(window_->input()));
    EXPECT_TRUE(fullyVisible(window_->sessions()->findChild<QPushButton*>(QStringLiteral("sessionDelete"))));
  }
}

}  // namespace
}  // namespace inferscope::ui
