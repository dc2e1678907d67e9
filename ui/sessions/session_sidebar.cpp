#include "ui/sessions/session_sidebar.h"

#include <utility>

#include <QHBoxLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/layout/narrow_button.h"

namespace inferscope::ui {

namespace {

constexpr int kIdRole = Qt::UserRole;

}  // namespace

SessionSidebar::SessionSidebar(QWidget* parent)
    : QWidget(parent),
      m_search(new QLineEdit(this)),
      m_list(new QListWidget(this)),
      m_undo(new QPushButton(tr("Deleted — Undo"), this)),
      m_undoTimer(new QTimer(this)) {
  setObjectName(QStringLiteral("sessionSidebar"));
  m_search->setObjectName(QStringLiteral("sessionSearch"));
  m_search->setPlaceholderText(tr("Search messages"));
  m_search->setClearButtonEnabled(true);
  m_list->setObjectName(QStringLiteral("sessionList"));
  m_list->setEditTriggers(QAbstractItemView::EditKeyPressed);
  m_undo->setObjectName(QStringLiteral("sessionUndo"));
  m_undo->hide();
  m_undoTimer->setSingleShot(true);
  m_undoTimer->setInterval(kUndoMs);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(m_search);
  layout->addWidget(m_list, 1);
  layout->addWidget(m_undo);
  layout->addWidget(buildButtons());

  connect(m_search, &QLineEdit::textChanged, this, &SessionSidebar::filterChanged);
  connect(m_list, &QListWidget::itemClicked, this, &SessionSidebar::onItemClicked);
  connect(m_list, &QListWidget::itemActivated, this, &SessionSidebar::onItemClicked);
  connect(m_list, &QListWidget::itemChanged, this, &SessionSidebar::onItemChanged);
  connect(m_list, &QListWidget::currentItemChanged, this, &SessionSidebar::updateButtons);
  connect(m_undo, &QPushButton::clicked, this, &SessionSidebar::undoDelete);
  connect(m_undoTimer, &QTimer::timeout, m_undo, &QWidget::hide);
  updateButtons();
}

QWidget* SessionSidebar::buildButtons() {
  auto* buttons = new QWidget(this);
  auto* newButton = new QPushButton(tr("New"), buttons);
  newButton->setObjectName(QStringLiteral("sessionNew"));
  m_rename = new QPushButton(tr("Rename"), buttons);
  m_rename->setObjectName(QStringLiteral("sessionRename"));
  m_delete = new QPushButton(tr("Delete"), buttons);
  m_delete->setObjectName(QStringLiteral("sessionDelete"));
  auto* layout = new QHBoxLayout(buttons);
  layout->setContentsMargins(0, 0, 0, 0);
  for (QPushButton* button : {newButton, m_rename, m_delete}) {
    letShrinkToText(button);
    layout->addWidget(button);
  }
  connect(newButton, &QPushButton::clicked, this, &SessionSidebar::newRequested);
  connect(m_rename, &QPushButton::clicked, this, &SessionSidebar::renameCurrent);
  connect(m_delete, &QPushButton::clicked, this, &SessionSidebar::deleteCurrent);
  return buttons;
}

qint64 SessionSidebar::idOf(const QListWidgetItem* item) { return item ? item->data(kIdRole).toLongLong() : 0; }

void SessionSidebar::setSessions(const QList<SessionInfo>& sessions) {
  m_sessions = sessions;
  m_filling = true;
  m_list->clear();
  for (const SessionInfo& session : sessions) {
    auto* item = new QListWidgetItem(session.title, m_list);
    item->setData(kIdRole, session.id);
    item->setToolTip(session.title);
    item->setFlags(item->flags() | Qt::ItemIsEditable);
    if (session.id == m_currentId) m_list->setCurrentItem(item);
  }
  m_filling = false;
  updateButtons();
}

void SessionSidebar::setCurrent(qint64 id) {
  m_currentId = id;
  m_list->setCurrentItem(nullptr);
  for (int row = 0; row < m_list->count(); ++row) {
    if (idOf(m_list->item(row)) == id) m_list->setCurrentRow(row);
  }
  updateButtons();
}

void SessionSidebar::renameCurrent() {
  if (QListWidgetItem* item = m_list->currentItem()) m_list->editItem(item);
}

void SessionSidebar::deleteCurrent() {
  const qint64 id = idOf(m_list->currentItem());
  if (id == 0) return;
  m_deletedId = id;
  m_undo->show();
  m_undoTimer->start();
  emit deleteRequested(id);
}

void SessionSidebar::undoDelete() {
  if (m_deletedId == 0 || !m_undo->isVisible()) return;
  m_undoTimer->stop();
  m_undo->hide();
  emit undoRequested(std::exchange(m_deletedId, 0));
}

void SessionSidebar::onItemClicked(QListWidgetItem* item) {
  const qint64 id = idOf(item);
  if (id != 0 && id != m_currentId) emit sessionActivated(id);
}

void SessionSidebar::onItemChanged(QListWidgetItem* item) {
  const QString title = item->text().simplified();
  if (m_filling || title.isEmpty()) return;
  emit renameRequested(idOf(item), title);
}

void SessionSidebar::updateButtons() {
  const bool selected = m_list->currentItem() != nullptr;
  m_rename->setEnabled(selected);
  m_delete->setEnabled(selected);
}

}  // namespace inferscope::ui
