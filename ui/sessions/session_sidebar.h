// The sessions sidebar: the stored chat sessions (most recent first), a search box that filters
// them by the words of their messages, New, Rename (edited in place), and Delete with an Undo
// button that stays for a few seconds. It holds no data of its own: the main window wires its
// signals to the StoreWorker and feeds back the lists it sends.
#pragma once

#include <QList>
#include <QWidget>

#include "ui/store/session_info.h"

class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTimer;

namespace inferscope::ui {

class SessionSidebar : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kUndoMs = 6000;
  static constexpr int kWidth = 220;

  explicit SessionSidebar(QWidget* parent = nullptr);

  QList<SessionInfo> sessions() const { return m_sessions; }
  qint64 currentId() const { return m_currentId; }
  QSize sizeHint() const override { return {kWidth, QWidget::sizeHint().height()}; }

 public slots:
  void setSessions(const QList<inferscope::ui::SessionInfo>& sessions);
  // 0: a new chat, not stored yet.
  void setCurrent(qint64 id);
  void renameCurrent();
  void deleteCurrent();
  void undoDelete();

 signals:
  void sessionActivated(qint64 id);
  void newRequested();
  void renameRequested(qint64 id, const QString& title);
  void deleteRequested(qint64 id);
  void undoRequested(qint64 id);
  void filterChanged(const QString& text);

 private:
  QWidget* buildButtons();
  void onItemClicked(QListWidgetItem* item);
  void onItemChanged(QListWidgetItem* item);
  void updateButtons();
  static qint64 idOf(const QListWidgetItem* item);

  QLineEdit* m_search;
  QListWidget* m_list;
  QPushButton* m_rename = nullptr;
  QPushButton* m_delete = nullptr;
  QPushButton* m_undo;
  QTimer* m_undoTimer;
  QList<SessionInfo> m_sessions;
  qint64 m_currentId = 0;
  qint64 m_deletedId = 0;
  bool m_filling = false;
};

}  // namespace inferscope::ui
