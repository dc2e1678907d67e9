#include "ui/bridge/engine_thread.h"

namespace inferscope::ui {

EngineThread::EngineThread() : m_controller(new EngineController()) {
  qRegisterMetaType<ModelSummary>();
  qRegisterMetaType<ReplyStats>();
  qRegisterMetaType<MetricsSample>();
  qRegisterMetaType<ChatRequest>();
  qRegisterMetaType<CacheBrowseRequest>();
  qRegisterMetaType<CacheListing>();
  qRegisterMetaType<LocalServerSettings>();
  qRegisterMetaType<LoadOptions>();
  qRegisterMetaType<KvTypes>();
  qRegisterMetaType<CachePolicy>();
  qRegisterMetaType<ComparisonOptions>();
  qRegisterMetaType<ComparisonResult>();
  qRegisterMetaType<BackendInfo>();
  qRegisterMetaType<QList<BackendInfo>>();
  m_thread.setObjectName(QStringLiteral("inferscope-engine"));
  m_controller->moveToThread(&m_thread);
  QObject::connect(&m_thread, &QThread::finished, m_controller, &QObject::deleteLater);
  m_thread.start();
}

EngineThread::~EngineThread() {
  m_controller->stop();
  m_controller->cancelComparison();
  m_thread.quit();
  m_thread.wait();
}

}  // namespace inferscope::ui
