// test_ui's main: one QApplication for every test, on the offscreen platform unless the caller
// chose one, with the app's settings and database in a scratch directory (never the user's) and the C locale
// (numbers formatted the same everywhere).
#include <QApplication>
#include <QFile>
#include <QLocale>
#include <QSettings>

#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"

int main(int argc, char** argv) {
  if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QLocale::setDefault(QLocale::c());
  QApplication::setOrganizationName(QStringLiteral("InferscopeTests"));
  QApplication::setApplicationName(QStringLiteral("InferscopeTests"));
  QSettings::setDefaultFormat(QSettings::IniFormat);
  const auto settings = inferscope::testing::scratch_dir("ui-settings");
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, QString::fromStdString(settings.string()));
  const auto database = inferscope::testing::scratch_dir("ui-database") / "inferscope.sqlite";
  qputenv("INFERSCOPE_DATABASE", QFile::encodeName(QString::fromStdString(database.string())));
  ::testing::InitGoogleTest(&argc, argv);
  return inferscope::testing::run_all_tests_with_scratch_cleanup();
}
