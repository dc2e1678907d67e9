#include "ui/store/store_thread.h"

namespace inferscope::ui {

StoreThread::StoreThread(const QString& databasePath) : m_worker(new StoreWorker(databasePath)) {
  qRegisterMetaType<SessionInfo>();
  qRegisterMetaType<ConversationMessage>();
  qRegisterMetaType<QList<SessionInfo>>();
  qRegisterMetaType<QList<ConversationMessage>>();
  qRegisterMetaType<ComparisonRunInfo>();
  qRegisterMetaType<QList<ComparisonRunInfo>>();
  qRegisterMetaType<ComparisonResult>();
  m_thread.setObjectName(QStringLiteral("inferscope-store"));
  m_worker->moveToThread(&m_thread);
  QObject::connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.start();
}

// Quitting from the worker's own queue lets every write queued before it commit first, and
// gives writes still waiting for another program's lock a last try.
StoreThread::~StoreThread() {
  m_worker->finishWrites();
  QMetaObject::invokeMethod(m_worker, [this] { m_thread.quit(); }, Qt::QueuedConnection);
  m_thread.wait();
}

}  // namespace inferscope::ui
