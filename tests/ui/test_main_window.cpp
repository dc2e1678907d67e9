// The main window end to end on the offscreen platform: the bundled model loads with its status,
// a prompt typed into the input streams a reply with its statistics, Stop, Regenerate,
// Edit-and-resend, Copy, a corrupt file dropped on the window, and the window state restored.
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSplitter>
#include <QTest>
#include <QToolButton>
#include <QUrl>
#include <QTextDocument>
#include <QtMath>

#include <gtest/gtest.h>

#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"
#include "ui/chat/chat_view.h"
#include "ui/chat/message_input.h"
#include "ui/chat/markdown_view.h"
#include "ui/chat/message_widget.h"
#include "ui/metrics/performance_panel.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

constexpr int kReplyTimeoutMs = 20000;

class MainWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    window_ = testing::windowWithModel();
    ASSERT_TRUE(window_->hasModel());
  }
  QAction* action(const char* name) const { return window_->findChild<QAction*>(QLatin1String(name)); }
  ChatSession* chat() const { return window_->chat(); }
  const QList<MessageWidget*>& messages() const { return window_->chatView()->messageWidgets(); }
  // Types `text` into the input and presses Enter; returns the finished reply's statistics.
  ReplyStats typeAndSend(const QString& text) {
    QSignalSpy finished(chat(), &ChatSession::replyFinished);
    QTest::keyClicks(window_->input(), text);
    QTest::keyClick(window_->input(), Qt::Key_Return);
    EXPECT_TRUE(chat()->isBusy());
    EXPECT_TRUE(finished.wait(kReplyTimeoutMs));
    return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
  }

  std::unique_ptr<MainWindow> window_;
};

TEST_F(MainWindowTest, OpensWithTheBundledModelAndTheInputFocused) {
  const EngineStatusBar* status = window_->engineStatusBar();
  EXPECT_TRUE(status->modelText().contains(QStringLiteral("stories260K.gguf"))) << status->modelText().toStdString();
  EXPECT_FALSE(status->findChild<QProgressBar*>(QStringLiteral("loadProgress"))->isVisible());
  EXPECT_TRUE(window_->windowTitle().contains(QStringLiteral("stories260K")));
  EXPECT_TRUE(action("sendAction")->isEnabled());
  EXPECT_FALSE(action("stopAction")->isEnabled());
  EXPECT_FALSE(action("regenerateAction")->isEnabled());
  EXPECT_TRUE(window_->input()->hasFocus());
  testing::saveScreenshot(window_.get(), QStringLiteral("main_window_loaded"));
}

TEST_F(MainWindowTest, EnterSendsAndTheReplyStreamsWithStatistics) {
  chat()->setMaxTokens(1000);
  QSignalSpy chunks(window_->engine(), &EngineController::tokens);
  const ReplyStats stats = typeAndSend(QStringLiteral("Tell me a story"));
  EXPECT_GT(chunks.size(), 1) << "the reply arrived in one piece";
  ASSERT_EQ(messages().size(), 2);
  EXPECT_EQ(messages()[0]->text(), QStringLiteral("Tell me a story"));
  EXPECT_FALSE(messages()[1]->text().isEmpty());
  EXPECT_GT(stats.tokens, 0);
  EXPECT_TRUE(messages()[1]->statsText().contains(QStringLiteral("tokens/s"))) << messages()[1]->statsText().toStdString();
  EXPECT_TRUE(messages()[1]->statsText().contains(QStringLiteral("first token")));
  EXPECT_TRUE(window_->input()->toPlainText().isEmpty());
  EXPECT_TRUE(window_->input()->hasFocus()) << "focus returns to the input after a reply";
  EXPECT_TRUE(window_->engineStatusBar()->speedText().contains(QStringLiteral("tokens/s")));
  EXPECT_TRUE(action("regenerateAction")->isEnabled());
  testing::saveScreenshot(window_.get(), QStringLiteral("main_window_idle"));
}

TEST_F(MainWindowTest, ShiftEnterStartsANewLine) {
  QTest::keyClicks(window_->input(), QStringLiteral("one"));
  QTest::keyClick(window_->input(), Qt::Key_Return, Qt::ShiftModifier);
  QTest::keyClicks(window_->input(), QStringLiteral("two"));
  EXPECT_EQ(window_->input()->toPlainText(), QStringLiteral("one\ntwo"));
  EXPECT_FALSE(chat()->isBusy());
  EXPECT_TRUE(messages().isEmpty());
}

TEST_F(MainWindowTest, StopEndsTheReplyAndKeepsItsText) {
  chat()->setMaxTokens(2000);
  QSignalSpy chunks(window_->engine(), &EngineController::tokens);
  QSignalSpy finished(chat(), &ChatSession::replyFinished);
  QTest::keyClicks(window_->input(), QStringLiteral("A long story, please"));
  QTest::keyClick(window_->input(), Qt::Key_Return);
  ASSERT_TRUE(testing::waitForSignal(chunks, kReplyTimeoutMs));
  // The first chunk may be a token without visible text (a space or a newline): stop once the
  // reply shows some, so that "the partial reply stays" has something to keep.
  QElapsedTimer shown;
  shown.start();
  while ((messages().size() < 2 || messages()[1]->text().isEmpty()) && shown.elapsed() < kReplyTimeoutMs) {
    QTest::qWait(5);
  }
  ASSERT_TRUE(action("stopAction")->isEnabled());
  QTest::keyClick(window_.get(), Qt::Key_Escape);
  ASSERT_TRUE(finished.wait(5000));
  const auto stats = finished.front().front().value<ReplyStats>();
  EXPECT_EQ(stats.stopReason, QStringLiteral("cancelled"));
  EXPECT_LT(stats.tokens, 2000);
  ASSERT_EQ(messages().size(), 2);
  EXPECT_FALSE(messages()[1]->text().isEmpty()) << "the partial reply stays";
  EXPECT_TRUE(messages()[1]->statsText().contains(QStringLiteral("stopped")));
  EXPECT_FALSE(chat()->isBusy());
}

TEST_F(MainWindowTest, RegenerateReplacesTheLastReply) {
  chat()->setMaxTokens(64);
  typeAndSend(QStringLiteral("Hello"));
  QSignalSpy finished(chat(), &ChatSession::replyFinished);
  action("regenerateAction")->trigger();
  EXPECT_TRUE(chat()->isBusy());
  ASSERT_TRUE(finished.wait(kReplyTimeoutMs));
  ASSERT_EQ(messages().size(), 2);
  EXPECT_EQ(messages()[0]->text(), QStringLiteral("Hello"));
  EXPECT_FALSE(messages()[1]->text().isEmpty());
  EXPECT_FALSE(messages()[1]->statsText().isEmpty());
}

TEST_F(MainWindowTest, EditAndResendTheLastMessage) {
  chat()->setMaxTokens(32);
  typeAndSend(QStringLiteral("Hello"));
  action("editAction")->trigger();
  EXPECT_TRUE(messages().isEmpty()) << "the message and its reply are taken back";
  EXPECT_EQ(window_->input()->toPlainText(), QStringLiteral("Hello"));
  typeAndSend(QStringLiteral(" again"));
  ASSERT_EQ(messages().size(), 2);
  EXPECT_EQ(messages()[0]->text(), QStringLiteral("Hello again"));
}

TEST_F(MainWindowTest, CopyPutsTheLastReplyOnTheClipboard) {
  chat()->setMaxTokens(32);
  typeAndSend(QStringLiteral("Hi"));
  action("copyAction")->trigger();
  EXPECT_EQ(QApplication::clipboard()->text(), chat()->lastReply());
  EXPECT_FALSE(chat()->lastReply().isEmpty());
}

TEST_F(MainWindowTest, ACorruptFileDroppedOnTheWindowShowsAnErrorAndTheModelStays) {
  const QString path = testing::garbageGguf(QStringLiteral("dropped-corrupt"), 8192);
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(path)});
  const QPoint at = window_->rect().center();
  QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &enter);
  ASSERT_TRUE(enter.isAccepted());
  QSignalSpy failed(window_.get(), &MainWindow::loadFailed);
  QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(window_.get(), &drop);
  ASSERT_TRUE(failed.wait(10000));

  QMessageBox* box = nullptr;
  for (QWidget* w : QApplication::topLevelWidgets()) {
    if (auto* b = qobject_cast<QMessageBox*>(w); b && b->isVisible()) box = b;
  }
  ASSERT_NE(box, nullptr) << "no error dialog";
  EXPECT_EQ(box->icon(), QMessageBox::Critical);
  EXPECT_TRUE(box->text().contains(QStringLiteral("dropped-corrupt.gguf"))) << box->text().toStdString();
  EXPECT_TRUE(box->text().contains(QStringLiteral("previous model stays loaded")));
  EXPECT_FALSE(box->informativeText().isEmpty());
  testing::saveScreenshot(box, QStringLiteral("load_error_dialog"));
  box->close();

  EXPECT_TRUE(window_->engineStatusBar()->modelText().contains(QStringLiteral("stories260K.gguf")));
  chat()->setMaxTokens(32);
  EXPECT_GT(typeAndSend(QStringLiteral("Still there?")).tokens, 0);
}

// Out of memory: a model whose estimate exceeds the available memory (set low here) is refused by
// the engine before it is loaded; the usual error dialog gives both figures and the previous model
// keeps answering.
TEST_F(MainWindowTest, AModelThatDoesNotFitInMemoryShowsAnErrorAndTheModelStays) {
  QSignalSpy failed(window_.get(), &MainWindow::loadFailed);
  LoadOptions options;
  options.availableMemoryBytes = 1024;
  window_->loadModel(testing::bundledModel(), options);
  ASSERT_TRUE(failed.wait(10000));
  EXPECT_TRUE(failed.front().front().toString().contains(QStringLiteral("0.00 GiB available")))
      << failed.front().front().toString().toStdString();

  QMessageBox* box = nullptr;
  for (QWidget* w : QApplication::topLevelWidgets()) {
    if (auto* b = qobject_cast<QMessageBox*>(w); b && b->isVisible()) box = b;
  }
  ASSERT_NE(box, nullptr) << "no error dialog";
  EXPECT_EQ(box->icon(), QMessageBox::Critical);
  EXPECT_TRUE(box->text().contains(QStringLiteral("previous model stays loaded")));
  const QString details = box->text() + box->informativeText();
  EXPECT_TRUE(details.contains(QStringLiteral("needs "))) << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("GiB available"))) << details.toStdString();
  box->close();

  EXPECT_TRUE(window_->hasModel());
  chat()->setMaxTokens(16);
  EXPECT_GT(typeAndSend(QStringLiteral("Still there?")).tokens, 0);
}

TEST(MainWindowLoading, ShowsProgressUntilTheModelIsLoaded) {
  MainWindow window;
  window.show();
  auto* progress = window.findChild<QProgressBar*>(QStringLiteral("loadProgress"));
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.loadModel(testing::bundledModel());
  EXPECT_TRUE(progress->isVisible());
  EXPECT_TRUE(window.isLoading());
  EXPECT_FALSE(window.findChild<QAction*>(QStringLiteral("sendAction"))->isEnabled());
  ASSERT_TRUE(loaded.wait(10000));
  EXPECT_EQ(progress->value(), progress->maximum());
  EXPECT_FALSE(progress->isVisible());
  EXPECT_TRUE(window.findChild<QAction*>(QStringLiteral("sendAction"))->isEnabled());
}

TEST(MainWindowPalette, FollowsADarkSystemPalette) {
  const QPalette original = QApplication::palette();
  QPalette dark;
  dark.setColor(QPalette::Window, QColor(0x2d, 0x2d, 0x2d));
  dark.setColor(QPalette::WindowText, QColor(0xee, 0xee, 0xee));
  dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
  dark.setColor(QPalette::AlternateBase, QColor(0x33, 0x33, 0x33));
  dark.setColor(QPalette::Text, QColor(0xee, 0xee, 0xee));
  dark.setColor(QPalette::Button, QColor(0x3a, 0x3a, 0x3a));
  dark.setColor(QPalette::ButtonText, QColor(0xee, 0xee, 0xee));
  dark.setColor(QPalette::PlaceholderText, QColor(0x99, 0x99, 0x99));
  // As a system dark theme does: disabled text is dimmed.
  for (const QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    dark.setColor(QPalette::Disabled, role, QColor(0x77, 0x77, 0x77));
  }
  QApplication::setPalette(dark);
  {
    auto window = testing::windowWithModel();
    window->chat()->setMaxTokens(48);
    QSignalSpy finished(window->chat(), &ChatSession::replyFinished);
    ASSERT_TRUE(window->chat()->send(QStringLiteral("Hello in the dark")));
    ASSERT_TRUE(finished.wait(kReplyTimeoutMs));
    QTest::qWait(200);  // the charts redraw at ~12 Hz
    testing::saveScreenshot(window.get(), QStringLiteral("main_window_dark"));
    const QImage image = window->chatView()->grab().toImage();
    const MessageWidget* reply = window->chatView()->messageWidgets().at(1);
    const QColor background = image.pixelColor(reply->mapTo(window->chatView(), QPoint(4, 4)));
    EXPECT_LT(background.lightness(), 80) << "the reply is drawn on the dark palette's base colour";
    // In this narrow window each message wraps at the view's width and shows all its lines.
    for (const MessageWidget* message : window->chatView()->messageWidgets()) {
      const auto* body = message->findChild<MarkdownView*>();
      ASSERT_NE(body, nullptr);
      EXPECT_NEAR(body->document()->textWidth(), body->viewport()->width(), 0.5) << "wraps at its own width";
      EXPECT_GE(body->height(), qCeil(body->document()->size().height())) << message->text().toStdString();
      EXPECT_LE(message->geometry().right(), window->chatView()->viewport()->width()) << "inside the view";
    }
    // However short, the reply made a point on the decode-speed chart.
    EXPECT_TRUE(window->performancePanel()->metricsCsv().contains(QStringLiteral("\ndecode,")))
        << window->performancePanel()->metricsCsv().toStdString();
  }
  QApplication::setPalette(original);
}

// The Stop and Send buttons under the input: Send only while idle with a model, Stop only while a
// reply is generating.
TEST_F(MainWindowTest, StopIsEnabledOnlyWhileGenerating) {
  QToolButton* stop = nullptr;
  QToolButton* send = nullptr;
  for (QToolButton* button : window_->findChildren<QToolButton*>()) {
    if (button->defaultAction() == action("stopAction")) stop = button;
    if (button->defaultAction() == action("sendAction")) send = button;
  }
  ASSERT_NE(stop, nullptr);
  ASSERT_NE(send, nullptr);
  EXPECT_FALSE(stop->isEnabled()) << "idle";
  EXPECT_TRUE(send->isEnabled()) << "idle";
  chat()->setMaxTokens(48);
  QSignalSpy finished(chat(), &ChatSession::replyFinished);
  QTest::keyClicks(window_->input(), QStringLiteral("Hello"));
  QTest::keyClick(window_->input(), Qt::Key_Return);
  ASSERT_TRUE(chat()->isBusy());
  EXPECT_TRUE(stop->isEnabled()) << "generating";
  EXPECT_FALSE(send->isEnabled()) << "generating";
  ASSERT_TRUE(finished.wait(kReplyTimeoutMs));
  EXPECT_FALSE(stop->isEnabled()) << "finished";
  EXPECT_TRUE(send->isEnabled()) << "finished";
  EXPECT_FALSE(action("stopAction")->isEnabled());
  EXPECT_TRUE(action("sendAction")->isEnabled());
}

TEST(MainWindowState, GeometryAndSplitterAreRestored) {
  QList<int> sizes;
  QSize size;
  {
    MainWindow window;
    window.resize(820, 640);
    window.show();
    auto* splitter = window.findChild<QSplitter*>(QStringLiteral("chatSplitter"));
    splitter->setSizes({300, 200});
    sizes = splitter->sizes();
    size = window.size();
    window.close();
  }
  MainWindow restored;
  restored.show();
  EXPECT_EQ(restored.size(), size);
  EXPECT_EQ(restored.findChild<QSplitter*>(QStringLiteral("chatSplitter"))->sizes(), sizes);
}

}  // namespace
}  // namespace inferscope::ui
