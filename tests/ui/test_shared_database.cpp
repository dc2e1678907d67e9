// The desktop app and inferscope-cli share one database: with no --database, `bench` records its
// run in the very file the app opens (StoreWorker::defaultPath, from Qt's AppDataLocation), which
// the CLI works out without Qt.
#include <QCoreApplication>
#include <QFile>

#include <gtest/gtest.h>

#include "engine/store/store.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_dir.h"
#include "ui/store/store_worker.h"

namespace inferscope::ui {
namespace {

// The app's names and a scratch XDG_DATA_HOME for one test; test_ui's own come back after it.
class AppDataFolder {
 public:
  AppDataFolder()
      : m_organization(QCoreApplication::organizationName()),
        m_application(QCoreApplication::applicationName()),
        m_database(qgetenv("INFERSCOPE_DATABASE")),
        m_dataHome(qgetenv("XDG_DATA_HOME")) {
    QCoreApplication::setOrganizationName(QStringLiteral("Inferscope"));
    QCoreApplication::setApplicationName(QStringLiteral("Inferscope"));
    qunsetenv("INFERSCOPE_DATABASE");
    const auto folder = inferscope::testing::scratch_dir("ui-shared-database");
    qputenv("XDG_DATA_HOME", QFile::encodeName(QString::fromStdString(folder.string())));
  }
  ~AppDataFolder() {
    QCoreApplication::setOrganizationName(m_organization);
    QCoreApplication::setApplicationName(m_application);
    qputenv("INFERSCOPE_DATABASE", m_database);
    if (m_dataHome.isEmpty()) qunsetenv("XDG_DATA_HOME");
    else qputenv("XDG_DATA_HOME", m_dataHome);
  }

 private:
  QString m_organization;
  QString m_application;
  QByteArray m_database;
  QByteArray m_dataHome;
};

TEST(SharedDatabase, CliBenchRecordsIntoTheAppsDefaultDatabase) {
  AppDataFolder folder;
  const QString appDatabase = StoreWorker::defaultPath();
  ASSERT_TRUE(appDatabase.endsWith(QStringLiteral("/Inferscope/Inferscope/inferscope.sqlite")))
      << appDatabase.toStdString();
  const auto run = inferscope::testing::run_cli("bench --prompt-tokens 8 --gen-tokens 4 --reps 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto db = store::Store::open(QFile::encodeName(appDatabase).toStdString());
  ASSERT_TRUE(db) << db.message() << "\n" << run.err;
  auto runs = db->benchmark_runs().list();
  ASSERT_TRUE(runs) << runs.message();
  ASSERT_EQ(runs->size(), 1u) << run.err;
  EXPECT_EQ(runs->front().backend, "cpu");
}

}  // namespace
}  // namespace inferscope::ui
