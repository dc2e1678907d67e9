// The status bar's backend text: on the CPU the threads, and whether the count is automatic
// (up to that many, fewer while other programs keep the cores busy) or fixed; on a device the
// device alone.
#include <gtest/gtest.h>

#include "ui/bridge/model_summary.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

ModelSummary cpu_summary(int threads, bool automatic) {
  ModelSummary s;
  s.path = QStringLiteral("/models/stories260K.gguf");
  s.architecture = QStringLiteral("llama");
  s.chatFormat = QStringLiteral("plain");
  s.backend = QStringLiteral("CPU");
  s.threads = threads;
  s.threadsAutomatic = automatic;
  return s;
}

TEST(EngineStatusBar, SaysWhetherTheThreadsAreAutomatic) {
  EngineStatusBar bar;
  bar.showModel(cpu_summary(2, true));
  EXPECT_EQ(bar.backendText(), QStringLiteral("CPU · up to 2 thread(s), automatic"));
  bar.showModel(cpu_summary(1, false));
  EXPECT_EQ(bar.backendText(), QStringLiteral("CPU · 1 thread(s)"));
}

TEST(EngineStatusBar, ADeviceIsNamedWithoutThreads) {
  EngineStatusBar bar;
  ModelSummary s = cpu_summary(2, true);
  s.backend = QStringLiteral("Vulkan: llvmpipe");
  s.deviceName = QStringLiteral("llvmpipe");
  bar.showModel(s);
  EXPECT_EQ(bar.backendText(), QStringLiteral("Vulkan: llvmpipe"));
}

}  // namespace
}  // namespace inferscope::ui
