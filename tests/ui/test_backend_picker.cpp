// The device picker end to end. The settings dock lists the CPU and every Vulkan device the engine
// finds (Mesa's lavapipe on the test machines), Apply reloads the bundled model on the chosen
// device and a reply streams from it, the status bar and the performance panel name the device,
// and the app starts on the saved device. What goes wrong leaves (or puts) the model on the CPU:
// a context too large for the device's memory and a forced load without a Vulkan driver give the
// backend's error dialog, a saved device that is gone gives a status-bar note.
//
// The no-driver cases point the Vulkan loader at a driver file that does not exist
// (VK_ICD_FILENAMES / VK_DRIVER_FILES) before this process first touches Vulkan: ctest runs each
// case in its own process (gtest_discover_tests), so nothing has touched it yet (the loader here
// also rereads them at each instance, so a run of the whole binary passes too). The tests that
// need a device skip, saying why, when the engine lists none.
//
// They load the bundled model on the device when the Vulkan backend can run it; while it cannot
// (its 172-column feed-forward matrices are not a multiple of the f32 matvec's 8-column chunk),
// the shared test data's llama-2-tiny-random.gguf, with a printed note saying why.
#include <cstdlib>
#include <limits>
#include <optional>

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QAbstractItemView>
#include <QTest>

#include <gtest/gtest.h>

#include "engine/backend/backend_registry.h"
#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "tests/support/testdata.h"
#include "tests/ui/ui_test_support.h"
#include "ui/chat/chat_session.h"
#include "ui/chat/chat_view.h"
#include "ui/chat/message_input.h"
#include "ui/chat/message_widget.h"
#include "ui/metrics/performance_panel.h"
#include "ui/settings/settings_dock.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {
namespace {

constexpr int kTimeoutMs = 30000;
constexpr const char* kNoDriver = "/nonexistent/inferscope-no-vulkan-driver.json";

QComboBox* picker(const MainWindow& window) { return window.settingsDock()->findChild<QComboBox*>(QStringLiteral("backend")); }

QMessageBox* visibleMessageBox(const QString& objectName) {
  for (QWidget* w : QApplication::topLevelWidgets()) {
    auto* box = qobject_cast<QMessageBox*>(w);
    if (box && box->isVisible() && box->objectName() == objectName) return box;
  }
  return nullptr;
}

// The model the device tests load on Vulkan device 0: the bundled one when the engine can run
// it there, else a small model from the shared test data (see the file comment).
QString vulkanModel() {
  static const QString path = [] {
    const QString bundled = testing::bundledModel();
    auto model = Model::load(bundled.toStdString());
    if (!model) return bundled;  // its error shows where the test loads it
    SessionOptions options;
    options.n_ctx = 64;
    options.backend = BackendChoice{"vulkan", 0};
    auto session = Session::create(*model, options);
    if (session) return bundled;
    std::printf("[ note ] the bundled model does not run on Vulkan (%s); using llama-2-tiny-random.gguf\n",
                session.message().c_str());
    return QString::fromStdString(inferscope::testing::testdata("llama-2-tiny-random.gguf"));
  }();
  return path;
}

bool waitForBackends(const MainWindow& window) {
  return QTest::qWaitFor([&] { return !window.backends().isEmpty(); }, kTimeoutMs);
}

// The dock with the picker's list open under it, as one image: the list is a window of its own,
// which the offscreen screen places anywhere; here it hangs from the picker, right-aligned with
// it as it is when the dock sits at the screen's right edge.
QPixmap dockWithOpenPicker(QWidget* dock, QComboBox* combo) {
  combo->showPopup();
  QTest::qWait(200);
  QWidget* popup = combo->view()->window();
  const QRect comboRect(combo->mapTo(dock, QPoint(0, 0)), combo->size());
  const QRect popupRect(QPoint(comboRect.right() + 1 - popup->width(), comboRect.bottom() + 1), popup->size());
  const QRect canvas = QRect(QPoint(0, 0), dock->size()).united(popupRect);
  QPixmap image(canvas.size());
  image.fill(dock->palette().color(QPalette::Window));
  QPainter painter(&image);
  painter.drawPixmap(-canvas.topLeft(), dock->grab());
  painter.drawPixmap(popupRect.topLeft() - canvas.topLeft(), popup->grab());
  painter.end();
  combo->hidePopup();
  return image;
}

// A scratch database and no saved load settings left behind for the cases after this one (they
// matter when the whole binary runs in one process).
class SavedLoadSettings {
 public:
  SavedLoadSettings() { QSettings().remove(QStringLiteral("load")); }
  ~SavedLoadSettings() { QSettings().remove(QStringLiteral("load")); }
  void save(const QString& backend, const QString& deviceName) {
    QSettings settings;
    settings.setValue(MainWindow::kLoadBackendKey, backend);
    settings.setValue(MainWindow::kLoadDeviceNameKey, deviceName);
  }
};

// Shows the window and loads the bundled model with the saved load settings; expects it on the
// CPU and returns the status bar's note (empty when no model loaded, with a failure).
QString loadOnSavedDeviceExpectingTheCpu(MainWindow& window) {
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  window.loadModelWithSavedSettings(testing::bundledModel());
  if (!loaded.wait(kTimeoutMs)) {
    ADD_FAILURE() << "the bundled model did not load";
    return {};
  }
  EXPECT_EQ(loaded.front().front().value<ModelSummary>().backendId, QStringLiteral("cpu"));
  return window.engineStatusBar()->currentMessage();
}

// The Vulkan loader finds no driver while this lives.
class NoVulkanDriver {
 public:
  NoVulkanDriver() {
    for (const char* name : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES"}) {
      if (const char* value = std::getenv(name)) m_saved.emplace_back(name, value);
      else m_saved.emplace_back(name, std::nullopt);
      qputenv(name, kNoDriver);
    }
  }
  ~NoVulkanDriver() {
    for (const auto& [name, value] : m_saved) {
      if (value) qputenv(name, QByteArray::fromStdString(*value));
      else qunsetenv(name);
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> m_saved;
};

ReplyStats sendAndWait(MainWindow& window, const QString& text) {
  QSignalSpy finished(window.chat(), &ChatSession::replyFinished);
  QTest::keyClicks(window.input(), text);
  QTest::keyClick(window.input(), Qt::Key_Return);
  EXPECT_TRUE(finished.wait(kTimeoutMs));
  return finished.isEmpty() ? ReplyStats{} : finished.front().front().value<ReplyStats>();
}

// With a Vulkan device: the bundled model, on the CPU, in a shown window whose picker is filled.
class VulkanPicker : public ::testing::Test {
 protected:
  void SetUp() override {
    const BackendDevices vulkan = list_backend_devices("vulkan");
    if (vulkan.devices.empty()) GTEST_SKIP() << "no Vulkan device to test on: " << vulkan.unavailable_reason;
    device_ = QString::fromStdString(vulkan.devices.front().name);
    deviceMemory_ = static_cast<qint64>(vulkan.devices.front().memory_bytes);
    window_ = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("backend-picker")));
    ASSERT_TRUE(window_->hasModel());
    ASSERT_TRUE(waitForBackends(*window_)) << "the engine never listed the backends";
  }
  int pickerIndex(const QString& id) const { return picker(*window_)->findData(id); }
  // Chooses `id` in the picker and presses Apply; the loaded model's summary.
  std::optional<ModelSummary> applyDevice(const QString& id) {
    QComboBox* combo = picker(*window_);
    const int index = pickerIndex(id);
    EXPECT_GE(index, 0) << id.toStdString();
    if (index < 0) return std::nullopt;
    combo->setCurrentIndex(index);
    emit combo->activated(index);
    window_->settingsDock()->findChild<QLineEdit*>(QStringLiteral("modelPath"))->setText(vulkanModel());
    QSignalSpy loaded(window_.get(), &MainWindow::modelLoaded);
    QSignalSpy failed(window_.get(), &MainWindow::loadFailed);
    QTest::mouseClick(window_->settingsDock()->findChild<QPushButton*>(QStringLiteral("applyModel")), Qt::LeftButton);
    EXPECT_TRUE(window_->isLoading());
    EXPECT_TRUE(window_->engineStatusBar()->findChild<QProgressBar*>(QStringLiteral("loadProgress"))->isVisible());
    EXPECT_TRUE(QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, kTimeoutMs));
    if (!failed.isEmpty()) ADD_FAILURE() << "loading on " << id.toStdString() << " failed: " << failed.front().front().toString().toStdString();
    if (loaded.isEmpty()) return std::nullopt;
    return loaded.front().front().value<ModelSummary>();
  }

  SavedLoadSettings saved_;
  QString device_;
  qint64 deviceMemory_ = 0;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(VulkanPicker, ListsTheCpuAndTheDeviceByNameAndMemory) {
  QComboBox* combo = picker(*window_);
  EXPECT_EQ(combo->itemData(0).toString(), QStringLiteral("cpu"));
  EXPECT_TRUE(combo->itemText(0).startsWith(QStringLiteral("CPU")));
  const int vulkan = pickerIndex(QStringLiteral("vulkan:0"));
  ASSERT_GE(vulkan, 1);
  const QString text = combo->itemText(vulkan);
  EXPECT_TRUE(text.startsWith(QStringLiteral("Vulkan: ") + device_)) << text.toStdString();
  EXPECT_TRUE(text.contains(QLocale().formattedDataSize(deviceMemory_, 1))) << text.toStdString();
  EXPECT_TRUE(qobject_cast<QStandardItemModel*>(combo->model())->item(vulkan)->isEnabled());
  EXPECT_TRUE(combo->itemData(vulkan, Qt::ToolTipRole).toString().contains(QStringLiteral("subgroup size")));
  EXPECT_EQ(combo->currentIndex(), 0);  // the model runs on the CPU

  window_->resize(1200, 800);
  QTest::qWait(200);
  combo->setCurrentIndex(vulkan);
  testing::saveScreenshot(dockWithOpenPicker(window_->settingsDock(), combo), QStringLiteral("settings_backend_picker"));
}

TEST_F(VulkanPicker, ApplyReloadsTheModelOnTheDeviceAndARepliesStreamsFromIt) {
  const auto summary = applyDevice(QStringLiteral("vulkan:0"));
  ASSERT_TRUE(summary.has_value()) << "the model did not load on the Vulkan device";
  EXPECT_EQ(summary->backendId, QStringLiteral("vulkan:0"));
  EXPECT_EQ(summary->deviceName, device_);
  EXPECT_EQ(summary->deviceMemoryBytes, deviceMemory_);
  EXPECT_GT(summary->deviceWeightsBytes, 0);
  EXPECT_FALSE(window_->isLoading());
  const QString backend = window_->engineStatusBar()->backendText();
  EXPECT_EQ(backend, QStringLiteral("Vulkan: ") + device_) << backend.toStdString();
  EXPECT_EQ(picker(*window_)->currentData().toString(), QStringLiteral("vulkan:0"));
  // The choice is saved for the next start.
  EXPECT_EQ(QSettings().value(MainWindow::kLoadBackendKey).toString(), QStringLiteral("vulkan:0"));
  EXPECT_EQ(QSettings().value(MainWindow::kLoadDeviceNameKey).toString(), device_);

  // A long reply, caught mid-stream for the screenshot, then stopped.
  window_->resize(1400, 900);
  window_->settingsDock()->findChild<QSpinBox*>(QStringLiteral("maxTokens"))->setValue(2000);
  QSignalSpy chunks(window_->engine(), &EngineController::tokens);
  QSignalSpy finished(window_->chat(), &ChatSession::replyFinished);
  QTest::keyClicks(window_->input(), QStringLiteral("Tell me a long story about a dog"));
  QTest::keyClick(window_->input(), Qt::Key_Return);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chunks.size() >= 8; }, kTimeoutMs)) << "no reply streamed from the device";
  EXPECT_TRUE(window_->chat()->isBusy());
  QTest::qWait(300);  // the performance panel redraws on its timer
  EXPECT_FALSE(window_->engineStatusBar()->speedText().isEmpty());
  testing::saveScreenshot(window_.get(), QStringLiteral("main_window_vulkan_generating"));
  window_->chat()->stop();
  ASSERT_TRUE(finished.wait(kTimeoutMs));
  const auto stopped = finished.front().front().value<ReplyStats>();
  EXPECT_GT(stopped.tokens, 8);
  EXPECT_EQ(stopped.backend, QStringLiteral("Vulkan: ") + device_.section(QStringLiteral(" ("), 0, 0));
  const QString stats = window_->chatView()->messageWidgets().back()->statsText();
  EXPECT_TRUE(stats.contains(QStringLiteral("Vulkan: "))) << stats.toStdString();
  EXPECT_FALSE(window_->chat()->lastReply().isEmpty());

  // The memory chart counts the device's memory against the device's.
  const QString memory = window_->performancePanel()->memorySummary();
  EXPECT_TRUE(memory.startsWith(QStringLiteral("On ") + device_.section(QStringLiteral(" ("), 0, 0))) << memory.toStdString();
  EXPECT_TRUE(memory.contains(QStringLiteral("device memory"))) << memory.toStdString();
  // Where the device's time went, from its timestamps.
  const QString ops = window_->performancePanel()->opTimesText();
  EXPECT_TRUE(ops.startsWith(QStringLiteral("Time per op (Vulkan: "))) << ops.toStdString();
  EXPECT_TRUE(ops.contains(QStringLiteral("matmul "))) << ops.toStdString();

  // And back to the CPU.
  const auto cpu = applyDevice(QStringLiteral("cpu"));
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->backend, QStringLiteral("CPU"));
  EXPECT_TRUE(window_->engineStatusBar()->backendText().startsWith(QStringLiteral("CPU · ")));
  EXPECT_TRUE(window_->performancePanel()->memorySummary().contains(QStringLiteral("RAM")));
  window_->chat()->setMaxTokens(16);
  EXPECT_GT(sendAndWait(*window_, QStringLiteral("Still there?")).tokens, 0);
}

// Out of device memory: a context whose KV cache does not fit the device is refused before any
// upload; the dialog names the backend and the figures, the CPU model keeps answering.
TEST_F(VulkanPicker, AContextTooLargeForTheDeviceShowsTheBackendErrorAndTheModelStays) {
  QSignalSpy failed(window_.get(), &MainWindow::backendFailed);
  LoadOptions options;
  options.backend = BackendChoice{"vulkan", 0};
  // At least 32 bytes of KV cache per token in either model: twice the device's memory or more.
  // The host's check is lifted (the engine's test hook), so that the device's is the one to fail.
  options.contextLength = deviceMemory_ / 32 * 2;
  options.availableMemoryBytes = std::numeric_limits<qint64>::max();
  window_->loadModel(vulkanModel(), options);
  ASSERT_TRUE(failed.wait(kTimeoutMs));
  EXPECT_EQ(failed.front().at(0).toString(), QStringLiteral("Vulkan: ") + device_);
  EXPECT_TRUE(failed.front().at(1).toString().contains(QStringLiteral("device memory"))) << failed.front().at(1).toString().toStdString();
  QMessageBox* box = visibleMessageBox(QStringLiteral("backendErrorDialog"));
  ASSERT_NE(box, nullptr) << "no error dialog";
  EXPECT_TRUE(box->text().contains(QStringLiteral("previous model stays loaded on CPU"))) << box->text().toStdString();
  box->close();
  EXPECT_EQ(picker(*window_)->currentData().toString(), QStringLiteral("cpu"));
  EXPECT_TRUE(window_->engineStatusBar()->backendText().startsWith(QStringLiteral("CPU")));
  window_->chat()->setMaxTokens(16);
  EXPECT_GT(sendAndWait(*window_, QStringLiteral("Still there?")).tokens, 0);
}

TEST(BackendPickerStartup, StartsOnTheSavedDevice) {
  const BackendDevices vulkan = list_backend_devices("vulkan");
  if (vulkan.devices.empty()) GTEST_SKIP() << "no Vulkan device to test on: " << vulkan.unavailable_reason;
  SavedLoadSettings saved;
  const QString device = QString::fromStdString(vulkan.devices.front().name);
  saved.save(QStringLiteral("vulkan:0"), device);
  MainWindow window(testing::scratchDatabase(QStringLiteral("backend-startup")));
  window.show();
  QSignalSpy loaded(&window, &MainWindow::modelLoaded);
  QSignalSpy failed(&window, &MainWindow::loadFailed);
  window.loadModelWithSavedSettings(vulkanModel());
  EXPECT_TRUE(window.isLoading());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, kTimeoutMs));
  ASSERT_TRUE(failed.isEmpty()) << failed.front().front().toString().toStdString();
  const auto summary = loaded.front().front().value<ModelSummary>();
  EXPECT_EQ(summary.backendId, QStringLiteral("vulkan:0"));
  EXPECT_EQ(summary.deviceName, device);
  EXPECT_EQ(picker(window)->currentData().toString(), QStringLiteral("vulkan:0"));
}

// A device saved on another machine (or a removed card): the model loads on the CPU and the
// status bar says why. Runs with or without a Vulkan driver.
TEST(BackendPickerStartup, ASavedDeviceThatIsGoneStartsOnTheCpuWithANote) {
  SavedLoadSettings saved;
  saved.save(QStringLiteral("vulkan:3"), QStringLiteral("Imaginary GPU 9000"));
  MainWindow window(testing::scratchDatabase(QStringLiteral("backend-gone")));
  const QString note = loadOnSavedDeviceExpectingTheCpu(window);
  EXPECT_TRUE(note.contains(QStringLiteral("Imaginary GPU 9000"))) << note.toStdString();
  EXPECT_TRUE(note.contains(QStringLiteral("runs on the CPU"))) << note.toStdString();
  EXPECT_EQ(picker(window)->currentData().toString(), QStringLiteral("cpu"));
  EXPECT_EQ(QSettings().value(MainWindow::kLoadBackendKey).toString(), QStringLiteral("cpu"));
}

// Without a driver: Vulkan is listed as unavailable with the loader's reason, a load forced on
// it (a saved choice, or a call like this one) gives the backend's error dialog, and the CPU
// model keeps answering.
TEST(BackendPickerNoDriver, ShowsVulkanUnavailableAndAForcedLoadKeepsTheCpuModel) {
  NoVulkanDriver noDriver;
  const BackendDevices vulkan = list_backend_devices("vulkan");
  ASSERT_TRUE(vulkan.devices.empty()) << "the Vulkan loader still found a driver: this case needs a process of its own "
                                         "(ctest gives it one) that has not used Vulkan yet";
  const QString reason = QString::fromStdString(vulkan.unavailable_reason);
  ASSERT_FALSE(reason.isEmpty());
  SavedLoadSettings saved;
  auto window = testing::windowWithModel(testing::scratchDatabase(QStringLiteral("backend-no-driver")));
  ASSERT_TRUE(window->hasModel());
  ASSERT_TRUE(waitForBackends(*window));

  QComboBox* combo = picker(*window);
  const int vulkanItem = combo->findText(QStringLiteral("Vulkan — unavailable: ") + reason);
  ASSERT_GT(vulkanItem, 0) << "the items: CPU, then one per other backend (CUDA, Vulkan...)";
  EXPECT_EQ(combo->count(), static_cast<int>(backend_names().size()));
  EXPECT_FALSE(qobject_cast<QStandardItemModel*>(combo->model())->item(vulkanItem)->isEnabled());
  EXPECT_EQ(combo->itemData(vulkanItem, Qt::ToolTipRole).toString(), reason);
  auto* note = window->settingsDock()->findChild<QLabel*>(QStringLiteral("backendNote"));
  EXPECT_TRUE(note->isVisible());
  EXPECT_TRUE(note->text().contains(reason)) << note->text().toStdString();
  QTest::qWait(100);  // the wrapped note's height settles
  testing::saveScreenshot(window->settingsDock(), QStringLiteral("settings_backend_unavailable"));
  // The reason wraps: the window still fits 800 px.
  window->resize(800, 600);
  QTest::qWait(200);
  EXPECT_EQ(window->width(), 800);

  window->resize(900, 700);
  QSignalSpy failed(window.get(), &MainWindow::backendFailed);
  QSignalSpy loadFailed(window.get(), &MainWindow::loadFailed);
  LoadOptions options;
  options.backend = BackendChoice{"vulkan", 0};
  window->loadModel(testing::bundledModel(), options);
  ASSERT_TRUE(failed.wait(kTimeoutMs));
  EXPECT_EQ(loadFailed.size(), 1);
  EXPECT_EQ(failed.front().at(0).toString(), QStringLiteral("Vulkan device 0"));
  EXPECT_TRUE(failed.front().at(1).toString().contains(reason)) << failed.front().at(1).toString().toStdString();

  QMessageBox* box = visibleMessageBox(QStringLiteral("backendErrorDialog"));
  ASSERT_NE(box, nullptr) << "no error dialog";
  EXPECT_EQ(box->icon(), QMessageBox::Critical);
  EXPECT_TRUE(box->text().contains(QStringLiteral("Vulkan backend could not start"))) << box->text().toStdString();
  EXPECT_TRUE(box->text().contains(QStringLiteral("Vulkan device 0"))) << box->text().toStdString();
  EXPECT_TRUE(box->text().contains(QStringLiteral("previous model stays loaded on CPU"))) << box->text().toStdString();
  EXPECT_TRUE(box->informativeText().contains(reason)) << box->informativeText().toStdString();
  testing::saveScreenshot(box, QStringLiteral("backend_error_dialog"));
  box->close();

  EXPECT_FALSE(window->isLoading());
  EXPECT_TRUE(window->hasModel());
  EXPECT_TRUE(window->engineStatusBar()->modelText().contains(QStringLiteral("stories260K.gguf")));
  EXPECT_TRUE(window->engineStatusBar()->backendText().startsWith(QStringLiteral("CPU · ")));
  window->chat()->setMaxTokens(24);
  const ReplyStats stats = sendAndWait(*window, QStringLiteral("Still there?"));
  EXPECT_GT(stats.tokens, 0);
  EXPECT_EQ(stats.backend, QStringLiteral("CPU"));
  EXPECT_FALSE(window->chat()->lastReply().isEmpty());
}

TEST(BackendPickerNoDriver, ASavedVulkanDeviceStartsOnTheCpuWithANote) {
  NoVulkanDriver noDriver;
  const BackendDevices vulkan = list_backend_devices("vulkan");
  ASSERT_TRUE(vulkan.devices.empty()) << "the Vulkan loader still found a driver: this case needs a process of its own";
  SavedLoadSettings saved;
  saved.save(QStringLiteral("vulkan:0"), QStringLiteral("llvmpipe (LLVM 15.0.6, 256 bits)"));
  MainWindow window(testing::scratchDatabase(QStringLiteral("backend-no-driver-startup")));
  const QString note = loadOnSavedDeviceExpectingTheCpu(window);
  EXPECT_TRUE(note.contains(QStringLiteral("not available"))) << note.toStdString();
  EXPECT_TRUE(note.contains(QString::fromStdString(vulkan.unavailable_reason))) << note.toStdString();
  EXPECT_EQ(visibleMessageBox(QStringLiteral("backendErrorDialog")), nullptr);
}

}  // namespace
}  // namespace inferscope::ui
