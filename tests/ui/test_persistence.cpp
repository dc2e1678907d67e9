// The chat history in the database end to end: sessions and their messages survive a restart,
// regenerate replaces the stored reply, edit-and-resend, delete with undo, the search box, a damaged
// database file (kept byte for byte, with a notice and a fresh database beside it), and a newer
// version's file (read-only, with a notice; the chat goes on unsaved), and the next reply waiting
// for the previous turn's commit; a thinking model's reasoning is kept with its reply.
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/store/store.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_controller.h"
#include "ui/chat/chat_session.h"
#include "ui/chat/chat_view.h"
#include "ui/chat/message_widget.h"
#include "ui/sessions/session_sidebar.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

constexpr int kTimeoutMs = 20000;

// What the database holds, read through a connection of the test's own.
std::vector<store::MessageRecord> storedMessages(const QString& path) {
  auto db = store::Store::open_read_only(path.toStdString());
  if (!db) return {};
  auto sessions = db->sessions().list();
  if (!sessions || sessions->empty()) return {};
  auto messages = db->messages().list(sessions->front().id);
  return messages ? *messages : std::vector<store::MessageRecord>{};
}

bool waitForStored(const QString& path, size_t count) {
  return QTest::qWaitFor([&] { return storedMessages(path).size() == count; }, kTimeoutMs);
}

bool waitForSessions(MainWindow* window, int count) {
  return QTest::qWaitFor([&] { return window->sessions()->sessions().size() == count; }, kTimeoutMs);
}

ReplyStats sendAndWait(MainWindow* window, const QString& text) {
  QSignalSpy finished(window->chat(), &ChatSession::replyFinished);
  EXPECT_TRUE(window->chat()->send(text));
  EXPECT_TRUE(finished.wait(kTimeoutMs));
  return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
}

QPushButton* button(MainWindow* window, const char* name) {
  return window->sessions()->findChild<QPushButton*>(QLatin1String(name));
}

TEST(Persistence, SessionsAndMessagesSurviveARestart) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-restart"));
  QString reply;
  {
    auto window = testing::windowWithModel(path);
    window->chat()->setMaxTokens(12);
    const ReplyStats stats = sendAndWait(window.get(), QStringLiteral("Once upon a time"));
    reply = window->chatView()->messageWidgets().at(1)->text();
    ASSERT_TRUE(waitForStored(path, 2));
    const auto stored = storedMessages(path);
    EXPECT_EQ(stored[0].content, "Once upon a time");
    EXPECT_EQ(stored[1].content, window->chat()->lastReply().toStdString());
    EXPECT_EQ(stored[1].stats.tokens.value_or(-1), stats.tokens);
  }
  auto window = testing::windowWithModel(path);
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  const SessionInfo session = window->sessions()->sessions().front();
  EXPECT_EQ(session.title, QStringLiteral("Once upon a time"));
  auto* list = window->sessions()->findChild<QListWidget*>(QStringLiteral("sessionList"));
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(0)).center());
  const auto& widgets = window->chatView()->messageWidgets();
  ASSERT_TRUE(QTest::qWaitFor([&] { return widgets.size() == 2; }, kTimeoutMs));
  EXPECT_EQ(widgets[0]->text(), QStringLiteral("Once upon a time"));
  EXPECT_EQ(widgets[1]->text(), reply);
  EXPECT_TRUE(widgets[1]->statsText().contains(QStringLiteral("tokens/s")));
  EXPECT_TRUE(window->chat()->canRegenerate());
}

// stories260K with a template whose generation prompt opens <think>: everything it writes is
// reasoning. The reasoning is stored with the reply and comes back, collapsed under its token
// count, when the chat is opened after a restart.
TEST(Persistence, ReasoningSurvivesARestart) {
  auto source = gguf::File::open(inferscope::testing::testdata("stories260K.gguf"));
  ASSERT_TRUE(source) << source.message();
  gguf::Writer w;
  w.copy_metadata(**source, "");
  w.add_string("tokenizer.chat_template",
               "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
               "{% if add_generation_prompt %}assistant: <think>{% endif %}");
  for (const gguf::TensorInfo& t : (*source)->tensors()) w.add_tensor_copy(*source, t);
  const std::string model = (inferscope::testing::scratch_dir("persist-thinking-model") / "thinking.gguf").string();
  ASSERT_TRUE(w.write(model));

  const QString path = testing::scratchDatabase(QStringLiteral("persist-reasoning"));
  QString reasoning;
  {
    MainWindow window(path);
    window.show();
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    window.loadModel(QString::fromStdString(model));
    ASSERT_TRUE(loaded.wait(kTimeoutMs));
    window.chat()->setMaxTokens(10);
    sendAndWait(&window, QStringLiteral("Once upon a time"));
    const auto& widgets = window.chatView()->messageWidgets();
    ASSERT_EQ(widgets.size(), 2);
    reasoning = widgets[1]->findChild<QLabel*>(QStringLiteral("thinking"))->text();
    ASSERT_FALSE(reasoning.isEmpty());
    ASSERT_TRUE(waitForStored(path, 2));
    const auto stored = storedMessages(path);
    EXPECT_EQ(QString::fromStdString(stored[1].stats.reasoning.value_or("")).trimmed(), reasoning);
    EXPECT_GT(stored[1].stats.reasoning_tokens.value_or(0), 0);
  }
  auto window = testing::windowWithModel(path);
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  auto* list = window->sessions()->findChild<QListWidget*>(QStringLiteral("sessionList"));
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(0)).center());
  const auto& widgets = window->chatView()->messageWidgets();
  ASSERT_TRUE(QTest::qWaitFor([&] { return widgets.size() == 2; }, kTimeoutMs));
  EXPECT_TRUE(widgets[1]->thinkingTitle().startsWith(QStringLiteral("Thinking")));
  EXPECT_FALSE(widgets[1]->thinkingShown());
  EXPECT_EQ(widgets[1]->findChild<QLabel*>(QStringLiteral("thinking"))->text(), reasoning);
}

// The next reply is asked of the engine only once the finished reply and the new user message are
// committed: at the moment the engine receives the second generate request, the database (read
// through the test's own connection) already holds the first turn, its reply and the second turn.
TEST(Persistence, TheNextReplyStartsOnlyAfterThePreviousTurnIsCommitted) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-commit-before-next"));
  auto window = testing::windowWithModel(path);
  window->chat()->setMaxTokens(8);
  std::vector<size_t> storedAtRequest;
  QObject::connect(window->engine(), &EngineController::generateRequested, window.get(),
                   [&](const ChatRequest&) { storedAtRequest.push_back(storedMessages(path).size()); },
                   Qt::DirectConnection);
  sendAndWait(window.get(), QStringLiteral("Once upon a time"));
  sendAndWait(window.get(), QStringLiteral("The end"));
  ASSERT_EQ(storedAtRequest.size(), 2u);
  EXPECT_EQ(storedAtRequest[0], 1u);  // the first user message
  EXPECT_EQ(storedAtRequest[1], 3u);  // ... its reply and the second user message
  ASSERT_TRUE(waitForStored(path, 4));
}

// Stop while the reply still waits for the commit: the engine is not asked, the reply ends as
// cancelled, and the chat goes on.
TEST(Persistence, StopWhileWaitingForTheCommitCancelsTheReply) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-stop-at-gate"));
  auto window = testing::windowWithModel(path);
  window->chat()->setMaxTokens(8);
  int requests = 0;
  QObject::connect(window->engine(), &EngineController::generateRequested, window.get(),
                   [&](const ChatRequest&) { ++requests; }, Qt::DirectConnection);
  QSignalSpy finished(window->chat(), &ChatSession::replyFinished);
  ASSERT_TRUE(window->chat()->send(QStringLiteral("Once upon a time")));
  window->chat()->stop();  // no event processed yet: the commit cannot have been confirmed
  ASSERT_TRUE(finished.wait(kTimeoutMs));
  EXPECT_EQ(finished.front().front().value<ReplyStats>().stopReason, QStringLiteral("cancelled"));
  EXPECT_EQ(requests, 0);
  EXPECT_FALSE(window->chat()->isBusy());
  EXPECT_GT(sendAndWait(window.get(), QStringLiteral("The end")).tokens, 0);
  EXPECT_EQ(requests, 1);
}

TEST(Persistence, RegenerateReplacesTheStoredReply) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-regenerate"));
  auto window = testing::windowWithModel(path);
  window->chat()->setMaxTokens(20);
  sendAndWait(window.get(), QStringLiteral("Tell me about a cat"));
  ASSERT_TRUE(waitForStored(path, 2));
  const std::int64_t replyId = storedMessages(path)[1].id;
  window->chat()->setMaxTokens(5);
  QSignalSpy finished(window->chat(), &ChatSession::replyFinished);
  window->chat()->regenerate();
  ASSERT_TRUE(finished.wait(kTimeoutMs));
  const QString reply = window->chat()->lastReply();
  const int tokens = finished.front().front().value<ReplyStats>().tokens;
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        const auto stored = storedMessages(path);
        return stored.size() == 2 && stored[1].stats.tokens.value_or(-1) == tokens;
      },
      kTimeoutMs));
  const auto stored = storedMessages(path);
  EXPECT_EQ(stored[1].id, replyId) << "replaced in place, not appended";
  EXPECT_EQ(stored[1].content, reply.toStdString());
}

TEST(Persistence, EditAndResendReplacesTheStoredTurn) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-edit"));
  auto window = testing::windowWithModel(path);
  window->chat()->setMaxTokens(4);
  sendAndWait(window.get(), QStringLiteral("First try"));
  ASSERT_TRUE(waitForStored(path, 2));
  EXPECT_EQ(window->chat()->takeLastUserMessage(), QStringLiteral("First try"));
  sendAndWait(window.get(), QStringLiteral("Second try"));
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        const auto stored = storedMessages(path);
        return stored.size() == 2 && stored[0].content == "Second try";
      },
      kTimeoutMs));
  EXPECT_EQ(storedMessages(path)[1].content, window->chat()->lastReply().toStdString());
}

TEST(Persistence, DeleteHidesTheSessionAndUndoBringsItBack) {
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("persist-delete")));
  window->chat()->setMaxTokens(4);
  sendAndWait(window.get(), QStringLiteral("A short one"));
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->sessions()->currentId() != 0; }, kTimeoutMs));
  ASSERT_TRUE(button(window.get(), "sessionDelete")->isEnabled());
  QTest::mouseClick(button(window.get(), "sessionDelete"), Qt::LeftButton);
  ASSERT_TRUE(waitForSessions(window.get(), 0));
  EXPECT_TRUE(window->chatView()->messageWidgets().isEmpty()) << "the deleted chat left the view";
  QPushButton* undo = button(window.get(), "sessionUndo");
  ASSERT_TRUE(undo->isVisible());
  testing::saveScreenshot(window.get(), QStringLiteral("sessions_undo_delete"));
  QTest::mouseClick(undo, Qt::LeftButton);
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  EXPECT_EQ(window->sessions()->sessions().front().title, QStringLiteral("A short one"));
  EXPECT_FALSE(undo->isVisible());
}

TEST(Persistence, RenamingInTheListIsStored) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-rename"));
  auto window = testing::windowWithModel(path);
  window->chat()->setMaxTokens(3);
  sendAndWait(window.get(), QStringLiteral("Untitled thoughts"));
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  auto* list = window->sessions()->findChild<QListWidget*>(QStringLiteral("sessionList"));
  list->item(0)->setText(QStringLiteral("Renamed chat"));  // what the in-place editor does on Enter
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return window->sessions()->sessions().front().title == QStringLiteral("Renamed chat"); }, kTimeoutMs));
  auto db = store::Store::open_read_only(path.toStdString());
  ASSERT_TRUE(db);
  EXPECT_EQ(db->sessions().list()->front().title, "Renamed chat");
}

TEST(Persistence, SearchFindsASessionByAWordOfAMessage) {
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("persist-search")));
  window->chat()->setMaxTokens(3);
  sendAndWait(window.get(), QStringLiteral("a zebrafish swims"));
  QTest::mouseClick(window->sessions()->findChild<QPushButton*>(QStringLiteral("sessionNew")), Qt::LeftButton);
  sendAndWait(window.get(), QStringLiteral("the quokka smiles"));
  ASSERT_TRUE(waitForSessions(window.get(), 2));
  auto* search = window->sessions()->findChild<QLineEdit*>(QStringLiteral("sessionSearch"));
  QTest::keyClicks(search, QStringLiteral("quokk"));
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  EXPECT_EQ(window->sessions()->sessions().front().title, QStringLiteral("the quokka smiles"));
  search->clear();
  EXPECT_TRUE(waitForSessions(window.get(), 2));
}

TEST(Persistence, ADamagedDatabaseIsKeptAndAFreshOneUsed) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-damaged"));
  QByteArray garbage(64 * 1024, Qt::Uninitialized);
  for (int i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919 + 13) % 251);
  {
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(garbage);
  }
  auto window = std::make_unique<MainWindow>(path);
  QSignalSpy notices(window.get(), &MainWindow::noticeShown);
  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  window->resize(900, 700);
  window->show();
  window->loadModel(testing::bundledModel());
  ASSERT_TRUE(notices.wait(kTimeoutMs));
  EXPECT_TRUE(notices.front().at(0).toString().contains(QStringLiteral("damaged")));
  EXPECT_TRUE(notices.front().at(1).toString().contains(QStringLiteral("recovered")))
      << notices.front().at(1).toString().toStdString();
  auto* box = window->findChild<QMessageBox*>(QStringLiteral("storeNotice"));
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->isVisible());
  testing::saveScreenshot(box, QStringLiteral("store_damaged_notice"));
  box->close();
  ASSERT_TRUE(testing::waitForSignal(loaded, kTimeoutMs));
  window->chat()->setMaxTokens(3);
  sendAndWait(window.get(), QStringLiteral("still works"));
  EXPECT_TRUE(waitForSessions(window.get(), 1)) << "the fresh database stores the chat";
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.readAll(), garbage) << "the damaged file is left as it was";
}

TEST(Persistence, ADatabaseFromANewerVersionIsShownReadOnly) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-newer"));
  {
    auto db = store::Store::open(path.toStdString());
    ASSERT_TRUE(db) << db.message();
    ASSERT_TRUE(db->sessions().create({"from the future", "", ""}));
  }
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99; PRAGMA journal_mode = DELETE;", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray before = file.readAll();
  file.close();
  auto window = std::make_unique<MainWindow>(path);
  QSignalSpy notices(window.get(), &MainWindow::noticeShown);
  window->show();
  ASSERT_TRUE(notices.wait(kTimeoutMs));
  EXPECT_TRUE(notices.front().at(0).toString().contains(QStringLiteral("read-only")));
  EXPECT_TRUE(notices.front().at(1).toString().contains(QStringLiteral("read-only")));
  ASSERT_TRUE(waitForSessions(window.get(), 1));
  EXPECT_EQ(window->sessions()->sessions().front().title, QStringLiteral("from the future"));
  window.reset();
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.readAll(), before) << "a newer version's file is never written";
}

// A read-only database does not hold the chat up: the writes fail, the status bar says history is
// not being saved, and each reply still starts and finishes.
TEST(Persistence, AReadOnlyDatabaseDoesNotHoldUpTheChat) {
  const QString path = testing::scratchDatabase(QStringLiteral("persist-readonly-chat"));
  {
    auto db = store::Store::open(path.toStdString());
    ASSERT_TRUE(db) << db.message();
  }
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99; PRAGMA journal_mode = DELETE;", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  auto window = testing::windowWithModel(path);
  window->chat()->setMaxTokens(6);
  EXPECT_GT(sendAndWait(window.get(), QStringLiteral("Once upon a time")).tokens, 0);
  EXPECT_GT(sendAndWait(window.get(), QStringLiteral("The end")).tokens, 0);
  EXPECT_TRUE(QTest::qWaitFor(
      [&] { return window->engineStatusBar()->currentMessage().contains(QStringLiteral("Chat history")); }, kTimeoutMs))
      << window->engineStatusBar()->currentMessage().toStdString();
  EXPECT_TRUE(storedMessages(path).empty());
}

}  // namespace
}  // namespace inferscope::ui
