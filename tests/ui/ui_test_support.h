// Shared by the UI tests: the bundled model, scratch files, screenshots, and the main window
// with the bundled model loaded.
#pragma once

#include <memory>

#include <QPixmap>
#include <QSignalSpy>
#include <QString>

#include "ui/main_window.h"

namespace inferscope::ui::testing {

QString bundledModel();
// Until `spy` has recorded a signal (processing events). Unlike QSignalSpy::wait, a signal
// emitted on another thread before the call counts too.
bool waitForSignal(const QSignalSpy& spy, int timeoutMs = 10000);
// A file of `bytes` pseudo-random bytes named `name`.gguf in a scratch directory.
QString garbageGguf(const QString& name, int bytes);
// Saves the widget's rendering as <build>/tests/ui/screenshots/<name>.png; returns the path.
QString saveScreenshot(QWidget* widget, const QString& name);
QString saveScreenshot(const QPixmap& pixmap, const QString& name);
// A shown 900x700 main window with the bundled model loaded (fails the test otherwise), on the
// database at `databasePath` (the tests' shared scratch database when empty).
std::unique_ptr<MainWindow> windowWithModel(const QString& databasePath = {});
// A database path in a new scratch directory called `name`.
QString scratchDatabase(const QString& name);

}  // namespace inferscope::ui::testing
