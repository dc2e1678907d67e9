// Edge-cloud routing in the app's chat: with a deployment config whose cloud tier is a server
// on loopback (Inferscope's own, in-process), a long conversation is answered by the cloud,
// streamed, and says so in its statistics; a short one and a private one by the loaded model; a
// dead cloud falls back to the local model with a notice; a bad config is reported.
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"
#include "tests/support/stories_server.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_thread.h"
#include "ui/chat/message_widget.h"

namespace inferscope::ui {
namespace {

QString writeConfig(const std::string& name, const std::string& text) {
  const auto path = inferscope::testing::scratch_dir("chat-route-" + name) / "deploy.yaml";
  std::ofstream(path) << text;
  return QString::fromStdString(path.string());
}

QString configFor(const serve::OpenAiServer& cloud, const std::string& name) {
  return writeConfig(name, "cloud: {endpoint: http://127.0.0.1:" + std::to_string(cloud.port()) +
                               "/v1, model: stories260K.gguf}\n"
                               "routing: {threshold: 150ms, prefill_tokens_per_s: 1000, private: ['\\bsecret\\b']}\n");
}

QString longQuestion() {
  QString text;
  for (int i = 0; i < 60; ++i) text += QStringLiteral("The little dog ran to the park. ");
  return text;
}

class ChatRoutingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    QSignalSpy loaded(engine(), &EngineController::modelLoaded);
    engine()->loadModel(testing::bundledModel(), LoadOptions{});
    ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
  }
  EngineController* engine() const { return thread_.controller(); }
  std::pair<QString, QString> route(const QString& path) {
    QSignalSpy changed(engine(), &EngineController::routingChanged);
    engine()->setRouting(path);
    EXPECT_TRUE(testing::waitForSignal(changed, 10000));
    return changed.isEmpty() ? std::pair<QString, QString>{} :
                               std::pair{changed.back().at(0).toString(), changed.back().at(1).toString()};
  }
  std::pair<ReplyStats, QString> ask(const QString& question) {
    ChatRequest request;
    request.messages = {{QStringLiteral("user"), question}};
    request.maxTokens = 8;
    request.sampling.temperature = 0;
    QSignalSpy chunks(engine(), &EngineController::tokens);
    QSignalSpy finished(engine(), &EngineController::replyFinished);
    engine()->generate(request);
    EXPECT_TRUE(testing::waitForSignal(finished, 20000));
    QString text;
    for (const auto& args : chunks) text += args.front().toString();
    return {finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>(), text};
  }

  EngineThread thread_;
};

TEST_F(ChatRoutingTest, LongQuestionsGoToTheCloudShortAndPrivateOnesStay) {
  auto cloud = inferscope::testing::start_stories_server();
  ASSERT_TRUE(cloud);
  const auto [summary, error] = route(configFor(*cloud, "routes"));
  EXPECT_TRUE(summary.contains(QStringLiteral("latency_aware"))) << summary.toStdString();
  EXPECT_TRUE(error.isEmpty()) << error.toStdString();
  const std::int64_t before = cloud->requests_served();
  const auto [cloudStats, cloudText] = ask(longQuestion());
  EXPECT_EQ(cloudStats.route, QStringLiteral("cloud (stories260K.gguf)"));
  EXPECT_TRUE(cloudStats.routeReason.contains(QStringLiteral("exceeds"))) << cloudStats.routeReason.toStdString();
  EXPECT_FALSE(cloudText.isEmpty());
  EXPECT_GT(cloud->requests_served(), before);
  EXPECT_TRUE(formatReplyStats(cloudStats).contains(QStringLiteral("answered by cloud (stories260K.gguf)")));

  EXPECT_EQ(ask(QStringLiteral("Hi")).first.route, QStringLiteral("local"));
  EXPECT_EQ(ask(longQuestion() + QStringLiteral(" It is a secret.")).first.route, QStringLiteral("local"));

  EXPECT_TRUE(route({}).first.isEmpty());  // off: no route in the statistics
  EXPECT_TRUE(ask(longQuestion()).first.route.isEmpty());
}

TEST_F(ChatRoutingTest, ADeadCloudFallsBackAndABadConfigIsReported) {
  auto cloud = inferscope::testing::start_stories_server();
  ASSERT_TRUE(cloud);
  route(configFor(*cloud, "dead"));
  cloud->stop();
  QSignalSpy notices(engine(), &EngineController::routeNotice);
  const auto [stats, text] = ask(longQuestion());
  EXPECT_EQ(stats.route, QStringLiteral("local (fallback)"));
  EXPECT_FALSE(text.isEmpty());
  ASSERT_FALSE(notices.isEmpty());
  EXPECT_TRUE(notices.front().front().toString().contains(QStringLiteral("the local model answers")));

  const auto [none, why] = route(writeConfig("bad", "routing: {policy: fastest}\n"));
  EXPECT_TRUE(none.isEmpty());
  EXPECT_TRUE(why.contains(QStringLiteral("unknown 'fastest'"))) << why.toStdString();
}

}  // namespace
}  // namespace inferscope::ui
