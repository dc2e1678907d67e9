#include "tests/ui/ui_test_support.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QTest>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

namespace inferscope::ui::testing {

QString bundledModel() { return QStringLiteral(INFERSCOPE_SOURCE_DIR "/models/stories260K.gguf"); }

bool waitForSignal(const QSignalSpy& spy, int timeoutMs) {
  return QTest::qWaitFor([&] { return !spy.isEmpty(); }, timeoutMs);
}

QString garbageGguf(const QString& name, int bytes) {
  const auto dir = inferscope::testing::scratch_dir(name.toStdString());
  const QString path = QDir(QString::fromStdString(dir.string())).filePath(name + QStringLiteral(".gguf"));
  QByteArray data(bytes, Qt::Uninitialized);
  QRandomGenerator random(42);
  for (char& c : data) c = static_cast<char>(random.bounded(256));
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(data);
  return path;
}

QString saveScreenshot(QWidget* widget, const QString& name) { return saveScreenshot(widget->grab(), name); }

QString saveScreenshot(const QPixmap& pixmap, const QString& name) {
  QDir().mkpath(QStringLiteral(INFERSCOPE_SCREENSHOT_DIR));
  const QString path = QDir(QStringLiteral(INFERSCOPE_SCREENSHOT_DIR)).filePath(name + QStringLiteral(".png"));
  EXPECT_TRUE(pixmap.save(path)) << path.toStdString();
  return path;
}

QString scratchDatabase(const QString& name) {
  const auto dir = inferscope::testing::scratch_dir(name.toStdString());
  return QDir(QString::fromStdString(dir.string())).filePath(QStringLiteral("inferscope.sqlite"));
}

std::unique_ptr<MainWindow> windowWithModel(const QString& databasePath) {
  auto window = std::make_unique<MainWindow>(databasePath);
  window->resize(900, 700);
  window->show();
  QSignalSpy loaded(window.get(), &MainWindow::modelLoaded);
  window->loadModel(bundledModel());
  EXPECT_TRUE(loaded.wait(10000)) << "the bundled model did not load";
  return window;
}

}  // namespace inferscope::ui::testing
