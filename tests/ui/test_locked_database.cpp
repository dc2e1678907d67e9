// The chat history while another program holds a lock on the database file: the app opens with a
// notice saying so, the stored chats stay readable where the lock allows, new messages are typed
// and replied to, and once the lock is released they are saved, next to everything that was
// there before (nothing lost, nothing deleted). The busy timeout is shortened for the test through
// $INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS; users get 5 s.
#include <map>
#include <string>
#include <vector>

#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include "engine/store/store.h"
#include "tests/store/store_test_support.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"
#include "ui/chat/chat_view.h"
#include "ui/chat/message_input.h"
#include "ui/sessions/session_sidebar.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

using store::testing::RawConnection;
using Transcripts = std::map<std::string, std::vector<std::string>>;  // session title -> message texts

constexpr int kTimeoutMs = 20000;
constexpr int kBusyTimeoutMs = 300;

// Every live session's messages, read through a connection of the test's own; empty when the
// file cannot be read.
Transcripts storedTranscripts(const QString& path) {
  store::StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(kBusyTimeoutMs);
  auto db = store::Store::open_read_only(path.toStdString(), options);
  if (!db) return {};
  auto sessions = db->sessions().list();
  if (!sessions) return {};
  Transcripts transcripts;
  for (const store::SessionRecord& session : *sessions) {
    auto messages = db->messages().list(session.id);
    if (!messages) return {};
    std::vector<std::string>& texts = transcripts[session.title];
    for (const store::MessageRecord& message : *messages) texts.push_back(message.content);
  }
  return transcripts;
}

// An old chat (one turn) in a fresh database at `path`.
void writeOldChat(const QString& path) {
  auto db = store::Store::open(path.toStdString());
  ASSERT_TRUE(db) << db.message();
  auto session = db->sessions().create({"old chat", "", ""});
  ASSERT_TRUE(session) << session.message();
  ASSERT_TRUE(db->messages().append(session->id, {store::MessageRole::user, "an old question", {}}));
  ASSERT_TRUE(db->messages().append(session->id, {store::MessageRole::assistant, "an old answer", {}}));
}

class LockedChatHistory : public ::testing::Test {
 protected:
  void SetUp() override { qputenv("INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS", QByteArray::number(kBusyTimeoutMs)); }
  void TearDown() override { qunsetenv("INFERSCOPE_DATABASE_BUSY_TIMEOUT_MS"); }

  // Opens the window on `path` and waits for the store's notice and the model.
  std::unique_ptr<MainWindow> openWindow(const QString& path, QStringList* notice) {
    auto window = std::make_unique<MainWindow>(path);
    QSignalSpy notices(window.get(), &MainWindow::noticeShown);
    QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
    window->resize(900, 700);
    window->show();
    window->loadModel(testing::bundledModel());
    EXPECT_TRUE(testing::waitForSignal(notices, kTimeoutMs)) << "no notice about the locked database";
    if (!notices.isEmpty()) *notice = {notices.front().at(0).toString(), notices.front().at(1).toString()};
    EXPECT_TRUE(testing::waitForSignal(loaded, kTimeoutMs)) << "the bundled model did not load";
    window->chat()->setMaxTokens(6);
    return window;
  }

  // Types `text` into the message box, presses Enter, and waits for the reply.
  static ReplyStats typeAndSend(MainWindow* window, const QString& text) {
    QSignalSpy finished(window->chat(), &ChatSession::replyFinished);
    QTest::keyClicks(window->input(), text);
    QTest::keyClick(window->input(), Qt::Key_Return);
    EXPECT_TRUE(finished.wait(kTimeoutMs)) << "no reply to " << text.toStdString();
    return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
  }

  static bool statusSays(MainWindow* window, const QString& words) {
    return QTest::qWaitFor([&] { return window->engineStatusBar()->currentMessage().contains(words); }, kTimeoutMs);
  }
};

// WAL (the app's own files): the other connection's write lock leaves reading open, so the old
// chat is listed and can be continued; a new chat is started too. Both are saved after the lock.
TEST_F(LockedChatHistory, TheChatGoesOnAndIsSavedOnceTheLockIsReleased) {
  const QString path = testing::scratchDatabase(QStringLiteral("locked-wal"));
  writeOldChat(path);
  RawConnection other(path.toStdString());
  ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), "");

  QStringList notice;
  auto window = openWindow(path, &notice);
  ASSERT_EQ(notice.size(), 2);
  EXPECT_TRUE(notice[0].contains(QStringLiteral("locked"))) << notice[0].toStdString();
  EXPECT_TRUE(notice[1].contains(QStringLiteral("saved as soon as the lock is released"))) << notice[1].toStdString();
  auto* box = window->findChild<QMessageBox*>(QStringLiteral("storeNotice"));
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->isVisible());
  testing::saveScreenshot(box, QStringLiteral("store_locked_notice"));
  box->close();
  EXPECT_TRUE(statusSays(window.get(), QStringLiteral("locked by another program")));

  // The old chat is readable and takes a new turn.
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->sessions()->sessions().size() == 1; }, kTimeoutMs));
  auto* list = window->sessions()->findChild<QListWidget*>(QStringLiteral("sessionList"));
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(0)).center());
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->chatView()->messageWidgets().size() == 2; }, kTimeoutMs));
  EXPECT_GT(typeAndSend(window.get(), QStringLiteral("one more question")).tokens, 0);
  const QString oldChatReply = window->chat()->lastReply();
  // A new chat, two turns.
  QTest::mouseClick(window->sessions()->findChild<QPushButton*>(QStringLiteral("sessionNew")), Qt::LeftButton);
  EXPECT_GT(typeAndSend(window.get(), QStringLiteral("typed while locked")).tokens, 0);
  EXPECT_GT(typeAndSend(window.get(), QStringLiteral("and again")).tokens, 0);
  const QString newChatReply = window->chat()->lastReply();
  EXPECT_EQ(window->chatView()->messageWidgets().size(), 4);
  EXPECT_EQ(storedTranscripts(path).size(), 1u) << "nothing can be written while the lock is held";

  ASSERT_EQ(other.exec("COMMIT"), "");
  ASSERT_TRUE(QTest::qWaitFor([&] { return storedTranscripts(path).size() == 2; }, kTimeoutMs));
  ASSERT_TRUE(QTest::qWaitFor([&] { return storedTranscripts(path)["typed while locked"].size() == 4; }, kTimeoutMs));
  Transcripts stored = storedTranscripts(path);
  const std::vector<std::string> oldChat{"an old question", "an old answer", "one more question",
                                         oldChatReply.toStdString()};
  EXPECT_EQ(stored["old chat"], oldChat);
  const std::vector<std::string> newChat{"typed while locked", stored["typed while locked"][1], "and again",
                                         newChatReply.toStdString()};
  EXPECT_EQ(stored["typed while locked"], newChat);
  EXPECT_TRUE(statusSays(window.get(), QStringLiteral("lock is released")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->sessions()->sessions().size() == 2; }, kTimeoutMs));
  EXPECT_EQ(window->sessions()->currentId(), window->sessions()->sessions().front().id)
      << "the new chat is the current session once stored";
}

// A rollback-journal file under an exclusive lock keeps readers out too: nothing is listed, the
// chat still works, and after the lock the file (switched to WAL) holds the old and the new chat.
TEST_F(LockedChatHistory, AFileLockedAgainstReadersOpensOnceTheLockIsReleased) {
  const QString path = testing::scratchDatabase(QStringLiteral("locked-rollback"));
  writeOldChat(path);
  RawConnection other(path.toStdString());
  ASSERT_EQ(other.exec("PRAGMA journal_mode = DELETE"), "");
  ASSERT_EQ(other.exec("BEGIN EXCLUSIVE; UPDATE sessions SET title = 'uncommitted' WHERE title = 'old chat';"), "");

  QStringList notice;
  auto window = openWindow(path, &notice);
  ASSERT_EQ(notice.size(), 2);
  EXPECT_TRUE(notice[0].contains(QStringLiteral("locked"))) << notice[0].toStdString();
  window->findChild<QMessageBox*>(QStringLiteral("storeNotice"))->close();
  EXPECT_TRUE(window->sessions()->sessions().isEmpty());
  EXPECT_GT(typeAndSend(window.get(), QStringLiteral("nobody can read the file")).tokens, 0);
  const QString reply = window->chat()->lastReply();

  ASSERT_EQ(other.exec("ROLLBACK"), "");
  ASSERT_TRUE(QTest::qWaitFor([&] { return storedTranscripts(path)["nobody can read the file"].size() == 2; },
                              kTimeoutMs));
  Transcripts stored = storedTranscripts(path);
  EXPECT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored["old chat"], (std::vector<std::string>{"an old question", "an old answer"}));
  EXPECT_EQ(stored["nobody can read the file"][1], reply.toStdString());
  ASSERT_TRUE(QTest::qWaitFor([&] { return window->sessions()->sessions().size() == 2; }, kTimeoutMs))
      << "the sidebar lists the chats once the file can be read";
}

// Closing the window before the next retry: the waiting messages get a last try, and are saved.
TEST_F(LockedChatHistory, MessagesStillWaitingAtQuitAreSavedWhenTheLockIsGone) {
  const QString path = testing::scratchDatabase(QStringLiteral("locked-quit"));
  writeOldChat(path);
  RawConnection other(path.toStdString());
  ASSERT_EQ(other.exec("BEGIN EXCLUSIVE"), "");
  QStringList notice;
  auto window = openWindow(path, &notice);
  EXPECT_GT(typeAndSend(window.get(), QStringLiteral("said just before quitting")).tokens, 0);
  ASSERT_EQ(other.exec("COMMIT"), "");
  window.reset();  // most likely before the next retry tick: the last try at quitting saves them
  EXPECT_EQ(storedTranscripts(path)["said just before quitting"].size(), 2u);
  EXPECT_EQ(storedTranscripts(path)["old chat"].size(), 2u);
}

}  // namespace
}  // namespace inferscope::ui
