// File > Export: the current session as Markdown or JSON, the decode-speed chart as PNG, and the
// session's metrics as CSV. Each action asks for a file name, then writes; a file that cannot be
// written gets an error box. The writers are public for tests and scripts.
#pragma once

#include <QObject>
#include <QString>

class QMenu;
class QWidget;

namespace inferscope::ui {

class ChatSession;
class Conversation;
class PerformancePanel;
class SessionSidebar;

class ExportMenu : public QObject {
  Q_OBJECT

 public:
  ExportMenu(const Conversation* conversation, const ChatSession* chat, const SessionSidebar* sessions,
             PerformancePanel* performance, QWidget* window);

  // Adds the Export submenu to `file`.
  void addTo(QMenu* file);

  // False when the file cannot be written.
  bool sessionMarkdown(const QString& path) const;
  bool sessionJson(const QString& path) const;
  bool decodeChartPng(const QString& path) const;
  bool metricsCsv(const QString& path) const;

 private:
  void exportWithDialog(const QString& title, const QString& filter, bool (ExportMenu::*write)(const QString&) const);
  QString sessionTitle() const;

  const Conversation* m_conversation;
  const ChatSession* m_chat;
  const SessionSidebar* m_sessions;
  PerformancePanel* m_performance;
  QWidget* m_window;
};

}  // namespace inferscope::ui
