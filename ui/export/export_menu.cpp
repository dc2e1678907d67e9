#include "ui/export/export_menu.h"

#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>

#include "ui/chat/chat_session.h"
#include "ui/chat/conversation.h"
#include "ui/export/session_export.h"
#include "ui/metrics/performance_panel.h"
#include "ui/sessions/session_sidebar.h"

namespace inferscope::ui {

ExportMenu::ExportMenu(const Conversation* conversation, const ChatSession* chat, const SessionSidebar* sessions,
                       PerformancePanel* performance, QWidget* window)
    : QObject(window),
      m_conversation(conversation),
      m_chat(chat),
      m_sessions(sessions),
      m_performance(performance),
      m_window(window) {}

void ExportMenu::addTo(QMenu* file) {
  QMenu* menu = file->addMenu(tr("&Export"));
  menu->addAction(tr("Session as &Markdown…"), this, [this] {
    exportWithDialog(tr("Export Session"), tr("Markdown (*.md)"), &ExportMenu::sessionMarkdown);
  });
  menu->addAction(tr("Session as &JSON…"), this, [this] {
    exportWithDialog(tr("Export Session"), tr("JSON (*.json)"), &ExportMenu::sessionJson);
  });
  menu->addAction(tr("Decode Speed Chart as &PNG…"), this, [this] {
    exportWithDialog(tr("Export Chart"), tr("PNG images (*.png)"), &ExportMenu::decodeChartPng);
  });
  menu->addAction(tr("Session Metrics as &CSV…"), this, [this] {
    exportWithDialog(tr("Export Metrics"), tr("CSV (*.csv)"), &ExportMenu::metricsCsv);
  });
}

void ExportMenu::exportWithDialog(const QString& title, const QString& filter,
                                  bool (ExportMenu::*write)(const QString&) const) {
  const QString path = QFileDialog::getSaveFileName(m_window, title, QString(), filter);
  if (path.isEmpty() || (this->*write)(path)) return;
  auto* box = new QMessageBox(QMessageBox::Critical, tr("Export failed"),
                              tr("%1 could not be written.").arg(QDir::toNativeSeparators(path)), QMessageBox::Ok,
                              m_window);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

QString ExportMenu::sessionTitle() const {
  for (const SessionInfo& session : m_sessions->sessions()) {
    if (session.id == m_sessions->currentId()) return session.title;
  }
  return tr("New chat");
}

bool ExportMenu::sessionMarkdown(const QString& path) const {
  return writeTextFile(path, sessionToMarkdown(sessionTitle(), m_chat->systemPrompt(), m_conversation->messages()));
}

bool ExportMenu::sessionJson(const QString& path) const {
  return writeTextFile(path, sessionToJson(sessionTitle(), m_chat->systemPrompt(), m_conversation->messages()));
}

bool ExportMenu::decodeChartPng(const QString& path) const {
  return m_performance->exportChartPng(path, PerformancePanel::Chart::DecodeRate);
}

bool ExportMenu::metricsCsv(const QString& path) const { return writeTextFile(path, m_performance->metricsCsv()); }

}  // namespace inferscope::ui
