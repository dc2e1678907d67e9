// The UI thread stays responsive while replies stream: a 5 ms timer on it never waits 50 ms
// between two ticks that both fall while the same reply streams. (Finishing a reply and sending
// the next one, which the test does back to back, is reported beside it.) Also saves a
// screenshot of the window mid-reply.
//
// The build machines are small and shared, so a stall can also be the OS running other jobs;
// the measurement is repeated (up to 3 times) and the best run counts. A UI thread that blocks
// on the engine stalls in every run. In the sanitizer build (tests/sanitize.sh: -O0, every
// access checked) the replies still stream and are checked, but the gap is only reported.
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTimer>

#include <gtest/gtest.h>

#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"

namespace inferscope::ui {
namespace {

constexpr double kMaxGapMs = 50.0;
constexpr int kAttempts = 3;
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGapIsMeaningful = false;
#else
constexpr bool kGapIsMeaningful = true;
#endif

struct Measurement {
  double longestGapMs = 0;         // while one reply streams
  double longestGapOverallMs = 0;  // also across finishing one reply and sending the next
  int replies = 0;
  int tokens = 0;
  qint64 elapsedMs = 0;
};

// Replies of up to 2000 tokens, one after another, until they have streamed for 1.5 s, with a
// 5 ms timer ticking on the UI thread; the longest gap between its ticks.
Measurement measureWhileStreaming(MainWindow& window) {
  ChatSession* chat = window.chat();
  chat->setMaxTokens(2000);
  QElapsedTimer clock;
  qint64 lastTick = -1;
  int lastTickReply = -1;  // the reply streaming at the last tick; -1 when none was
  int reply = 0;
  qint64 longestGapNs = 0;
  qint64 longestGapOverallNs = 0;
  QTimer ticker;
  ticker.setTimerType(Qt::PreciseTimer);
  ticker.setInterval(5);
  QObject::connect(&ticker, &QTimer::timeout, [&] {
    const qint64 now = clock.nsecsElapsed();
    const int tickReply = chat->isBusy() ? reply : -1;
    if (lastTick >= 0) {
      longestGapOverallNs = std::max(longestGapOverallNs, now - lastTick);
      if (tickReply >= 0 && tickReply == lastTickReply) longestGapNs = std::max(longestGapNs, now - lastTick);
    }
    lastTick = now;
    lastTickReply = tickReply;
  });
  bool screenshotTaken = false;
  QMetaObject::Connection screenshot = QObject::connect(window.engine(), &EngineController::tokens, &window, [&] {
    if (screenshotTaken || chat->lastReply().size() < 400) return;
    screenshotTaken = true;
    testing::saveScreenshot(&window, QStringLiteral("main_window_generating"));
    lastTick = -1;  // grabbing the window is the test's work, not the app's
  });

  Measurement m;
  QSignalSpy finished(chat, &ChatSession::replyFinished);
  clock.start();
  ticker.start();
  while (clock.elapsed() < 1500 && m.replies < 10) {
    ++reply;
    EXPECT_TRUE(chat->send(QStringLiteral("Tell me a long story.")));
    if (!finished.wait(20000)) break;
    m.tokens += finished.back().front().value<ReplyStats>().tokens;
    ++m.replies;
  }
  ticker.stop();
  QObject::disconnect(screenshot);
  m.longestGapMs = longestGapNs / 1e6;
  m.longestGapOverallMs = longestGapOverallNs / 1e6;
  m.elapsedMs = clock.elapsed();
  return m;
}

TEST(Responsiveness, TheUiThreadNeverStallsWhileRepliesStream) {
  auto window = testing::windowWithModel();
  double best = 1e9;
  const int attempts = kGapIsMeaningful ? kAttempts : 1;
  for (int attempt = 1; attempt <= attempts && best >= kMaxGapMs; ++attempt) {
    const Measurement m = measureWhileStreaming(*window);
    std::printf("[ responsiveness ] run %d: %d replies, %d tokens in %lld ms; longest gap between 5 ms ticks while a "
                "reply streams: %.1f ms (%.1f ms counting the finish of one reply and the send of the next)\n",
                attempt, m.replies, m.tokens, m.elapsedMs, m.longestGapMs, m.longestGapOverallMs);
    ASSERT_GT(m.replies, 0);
    best = std::min(best, m.longestGapMs);
  }
  if (kGapIsMeaningful) {
    EXPECT_LT(best, kMaxGapMs);
  }
}

}  // namespace
}  // namespace inferscope::ui
