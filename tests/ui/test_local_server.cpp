// The app's local server: EngineController serves the loaded model on 127.0.0.1 (an OpenAI
// client's request answered), counts the requests, restarts on a newly loaded model, stops, and
// reports a port it cannot take; with the semantic cache on, a repeated question is answered from
// the app's database; the settings switch and the status bar show it.
#include <QCheckBox>
#include <QFile>
#include <QLabel>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/raw_http.h"
#include "tests/support/scratch_dir.h"
#include "tests/ui/ui_test_support.h"
#include "ui/bridge/engine_thread.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

class LocalServerTest : public ::testing::Test {
 protected:
  void SetUp() override { load(); }
  void load() {
    QSignalSpy loaded(engine(), &EngineController::modelLoaded);
    engine()->loadModel(testing::bundledModel(), LoadOptions{});
    ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
  }
  EngineController* engine() const { return thread_.controller(); }
  // The next localServerChanged: (address, error).
  std::pair<QString, QString> serve(const LocalServerSettings& settings) {
    QSignalSpy changed(engine(), &EngineController::localServerChanged);
    engine()->setLocalServer(settings);
    EXPECT_TRUE(testing::waitForSignal(changed, 10000));
    if (changed.isEmpty()) return {};
    return {changed.back().at(0).toString(), changed.back().at(1).toString()};
  }
  static int portOf(const QString& address) { return address.section(QLatin1Char(':'), 2).section(QLatin1Char('/'), 0, 0).toInt(); }

  EngineThread thread_;
};

TEST_F(LocalServerTest, ServesTheLoadedModelCountsRequestsAndStops) {
  const auto [address, error] = serve({true, 0, {}});
  ASSERT_TRUE(error.isEmpty()) << error.toStdString();
  ASSERT_TRUE(address.startsWith(QStringLiteral("http://127.0.0.1:"))) << address.toStdString();
  const int port = portOf(address);
  const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}}, {"max_tokens", 8}};
  const auto reply = inferscope::testing::raw_post(port, "/v1/chat/completions", body.dump());
  ASSERT_EQ(reply.status, 200) << reply.text;
  const auto answer = nlohmann::json::parse(inferscope::testing::raw_body(reply));
  EXPECT_EQ(answer["model"], "stories260K.gguf");
  EXPECT_FALSE(answer["choices"][0]["message"]["content"].get<std::string>().empty());
  QSignalSpy requests(engine(), &EngineController::localServerRequests);
  ASSERT_TRUE(testing::waitForSignal(requests, 5000));
  EXPECT_GE(requests.back().front().toLongLong(), 1);

  // A new model: served again, on a port of its own.
  QSignalSpy restarted(engine(), &EngineController::localServerChanged);
  load();
  ASSERT_TRUE(testing::waitForSignal(restarted, 10000));
  EXPECT_TRUE(restarted.back().at(0).toString().startsWith(QStringLiteral("http://127.0.0.1:")));

  const auto [stopped, none] = serve({false, 0, {}});
  EXPECT_TRUE(stopped.isEmpty());
  EXPECT_TRUE(none.isEmpty());
  EXPECT_EQ(inferscope::testing::raw_post(port, "/health", "{}").status, 0);  // nobody listens any more
}

TEST_F(LocalServerTest, APortInUseIsReportedAndAKeyIsRequired) {
  const auto [first, ok] = serve({true, 0, QStringLiteral("k3y")});
  ASSERT_TRUE(ok.isEmpty()) << ok.toStdString();
  const int port = portOf(first);
  const auto refused = inferscope::testing::raw_post(port, "/v1/completions", R"({"prompt": "Hi"})");
  EXPECT_EQ(refused.status, 401) << refused.text;  // no key sent
  EngineThread other;
  QSignalSpy loaded(other.controller(), &EngineController::modelLoaded);
  other.controller()->loadModel(testing::bundledModel(), LoadOptions{});
  ASSERT_TRUE(testing::waitForSignal(loaded, 10000));
  QSignalSpy changed(other.controller(), &EngineController::localServerChanged);
  other.controller()->setLocalServer({true, port, {}});
  ASSERT_TRUE(testing::waitForSignal(changed, 10000));
  EXPECT_TRUE(changed.back().at(0).toString().isEmpty());
  EXPECT_TRUE(changed.back().at(1).toString().contains(QStringLiteral("cannot listen"))) << changed.back().at(1).toString().toStdString();
}

TEST_F(LocalServerTest, ARepeatedQuestionComesFromTheSemanticCacheInTheAppsDatabase) {
  const QString database =
      QString::fromStdString((inferscope::testing::scratch_dir("local-server-cache") / "app.sqlite").string());
  engine()->setDatabasePath(database);
  const auto [address, error] = serve({true, 0, {}, true});
  ASSERT_TRUE(error.isEmpty()) << error.toStdString();
  const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}},
                               {"max_tokens", 8},
                               {"temperature", 0}};
  const auto first = inferscope::testing::raw_post(portOf(address), "/v1/chat/completions", body.dump());
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_NE(first.text.find("X-Inferscope-Cache: miss"), std::string::npos) << first.text;
  const auto again = inferscope::testing::raw_post(portOf(address), "/v1/chat/completions", body.dump());
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_NE(again.text.find("X-Inferscope-Cache: hit"), std::string::npos) << again.text;
  EXPECT_EQ(nlohmann::json::parse(inferscope::testing::raw_body(again))["choices"][0]["message"]["content"],
            nlohmann::json::parse(inferscope::testing::raw_body(first))["choices"][0]["message"]["content"]);
  serve({false, 0, {}, false});
  EXPECT_TRUE(QFile::exists(database));
}

TEST(LocalServerStatus, TheStatusBarShowsTheAddressAndRequests) {
  EngineStatusBar bar;
  bar.show();
  EXPECT_TRUE(bar.serverText().isEmpty());
  bar.showServer(QStringLiteral("http://127.0.0.1:8080/v1"), 3);
  EXPECT_EQ(bar.serverText(), QStringLiteral("Serving http://127.0.0.1:8080/v1 · 3 request(s)"));
  bar.showServer({}, 0);
  EXPECT_TRUE(bar.serverText().isEmpty());
}

}  // namespace
}  // namespace inferscope::ui
