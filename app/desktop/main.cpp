// inferscope: the desktop chat app. Opens the main window with the model given on the command
// line, or the bundled one, already loading on the device (and with the threads and context) it
// last loaded with.
#include <cstdio>
#include <cstring>

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "app/desktop/bundled_model.h"
#include "ui/main_window.h"

namespace {

// Qt aborts when it cannot reach a display; say what is missing instead.
bool hasDisplay(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-platform") == 0) return true;
  }
  return qEnvironmentVariableIsSet("QT_QPA_PLATFORM") || qEnvironmentVariableIsSet("DISPLAY") ||
         qEnvironmentVariableIsSet("WAYLAND_DISPLAY");
}

}  // namespace

int main(int argc, char** argv) {
  if (!hasDisplay(argc, argv)) {
    std::fprintf(stderr,
                 "inferscope: no display (DISPLAY and WAYLAND_DISPLAY are unset). The desktop app needs X11 or "
                 "Wayland; QT_QPA_PLATFORM=offscreen runs it without a window, and inferscope-cli works in a "
                 "terminal.\n");
    return 1;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Inferscope"));
  QApplication::setApplicationName(QStringLiteral("Inferscope"));
  QApplication::setApplicationVersion(QStringLiteral(INFERSCOPE_VERSION));
  QApplication::setDesktopFileName(QStringLiteral("inferscope"));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/inferscope.png")));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Run language models (GGUF files) locally and chat with them."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("GGUF model to load (default: the bundled stories260K)"),
                               QStringLiteral("[model.gguf]"));
  parser.process(app);

  inferscope::ui::MainWindow window;
  window.show();
  const QString model = parser.positionalArguments().value(0, inferscope::desktop::bundledModelPath());
  if (!model.isEmpty()) window.loadModelWithSavedSettings(model);
  return app.exec();
}
