// A model whose chat template runs away, through the app's load path: the model loads, a notice
// names the limit that stopped the template, the status bar says the plain format is used, and
// the chat works. A template that only runs away on longer conversations is reported when it does.
#include <QApplication>
#include <QMessageBox>
#include <QSignalSpy>
#include <QTest>

#include <gtest/gtest.h>

#include "tests/support/chat_models.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

// A hang guard, not a speed check: the sanitizer build needs ~17 s for the 2^20 steps of
// NestedLoops on this machine, release builds a fraction of a second.
constexpr int kTimeoutMs = 90000;

// The bundled model with `chat_template`, in the test's scratch folder.
QString modelWithTemplate(const std::string& name, const std::string& chat_template) {
  const std::string path = (inferscope::testing::scratch_dir(name) / "model.gguf").string();
  const Status written = inferscope::testing::write_with_chat_template(
      testing::bundledModel().toStdString(), chat_template, path);
  EXPECT_TRUE(written) << written.message();
  return QString::fromStdString(path);
}

int sendAndWait(MainWindow& window, const QString& text) {
  QSignalSpy finished(window.chat(), &ChatSession::replyFinished);
  window.chat()->send(text);
  EXPECT_TRUE(finished.wait(kTimeoutMs)) << "no reply to " << text.toStdString();
  return finished.isEmpty() ? 0 : finished.front().front().value<ReplyStats>().tokens;
}

void closeNotices() {
  for (QWidget* w : QApplication::topLevelWidgets()) {
    if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) box->close();
  }
}

class HostileTemplateInApp : public ::testing::TestWithParam<inferscope::testing::HostileTemplate> {};

TEST_P(HostileTemplateInApp, LoadsWithANoticeAndChatsInThePlainFormat) {
  auto window = testing::windowWithModel();
  const QString path = modelWithTemplate(std::string("app-hostile-") + GetParam().name, GetParam().source);
  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  QSignalSpy notices(window.get(), &MainWindow::noticeShown);
  window->loadModel(path);
  ASSERT_TRUE(testing::waitForSignal(loaded, kTimeoutMs)) << "the model did not load";
  ASSERT_EQ(notices.size(), 1);
  EXPECT_EQ(notices.front().at(0).toString(), QStringLiteral("Chat template not used"));
  const QString text = notices.front().at(1).toString();
  EXPECT_TRUE(text.contains(QString::fromLatin1(GetParam().stops_with))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("plain"))) << text.toStdString();
  EXPECT_TRUE(window->engineStatusBar()->modelText().contains(QStringLiteral("plain (the file's template is not used)")))
      << window->engineStatusBar()->modelText().toStdString();
  closeNotices();
  window->chat()->setMaxTokens(4);
  EXPECT_GT(sendAndWait(*window, QStringLiteral("Hi")), 0);
}

INSTANTIATE_TEST_SUITE_P(All, HostileTemplateInApp, ::testing::ValuesIn(inferscope::testing::hostile_templates()),
                         [](const ::testing::TestParamInfo<inferscope::testing::HostileTemplate>& info) {
                           return std::string(info.param.name);
                         });

TEST(HostileTemplateInAppLater, ATemplateThatRunsAwayOnALongerChatIsReportedOnce) {
  auto window = testing::windowWithModel();
  const QString path = modelWithTemplate(
      "app-late-bomb",
      "{% if messages | length > 3 %}{% for i in range(1000000000) %}{% endfor %}{% endif %}"
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}");
  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  QSignalSpy notices(window.get(), &MainWindow::noticeShown);
  window->loadModel(path);
  ASSERT_TRUE(testing::waitForSignal(loaded, kTimeoutMs));
  EXPECT_TRUE(notices.isEmpty()) << "the template passes the check at load time";
  window->chat()->setMaxTokens(4);
  EXPECT_GT(sendAndWait(*window, QStringLiteral("one")), 0);  // 1 message
  EXPECT_GT(sendAndWait(*window, QStringLiteral("two")), 0);  // 3 messages
  EXPECT_TRUE(notices.isEmpty());
  EXPECT_GT(sendAndWait(*window, QStringLiteral("three")), 0);  // 5 messages: the template runs away
  ASSERT_EQ(notices.size(), 1);
  EXPECT_TRUE(notices.front().at(1).toString().contains(QStringLiteral("step limit")))
      << notices.front().at(1).toString().toStdString();
  closeNotices();
  EXPECT_GT(sendAndWait(*window, QStringLiteral("four")), 0);
  EXPECT_EQ(notices.size(), 1) << "reported once per model";
}

}  // namespace
}  // namespace inferscope::ui
