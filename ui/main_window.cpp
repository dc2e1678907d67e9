#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/chat/chat_session.h"
#include "ui/chat/chat_view.h"
#include "ui/chat/conversation.h"
#include "ui/chat/message_input.h"
#include "ui/status/engine_status_bar.h"

namespace inferscope::ui {

namespace {

constexpr const char* kGeometryKey = "window/geometry";
constexpr const char* kStateKey = "window/state";
constexpr const char* kSplitterKey = "window/splitter";

// The single local file of a drag, or an empty string.
QString droppedFile(const QMimeData* mime) {
  if (!mime->hasUrls() || mime->urls().size() != 1) return {};
  const QUrl url = mime->urls().front();
  return url.isLocalFile() ? url.toLocalFile() : QString();
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_conversation(new Conversation(this)),
      m_chat(new ChatSession(m_engine.controller(), m_conversation, this)) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Inferscope"));
  setAcceptDrops(true);
  m_chat->setMaxTokens(QSettings().value(kMaxTokensKey, ChatSession::kDefaultMaxTokens).toInt());

  m_view = new ChatView(m_conversation, this);
  m_splitter = new QSplitter(Qt::Vertical, this);
  m_splitter->setObjectName(QStringLiteral("chatSplitter"));
  m_splitter->setChildrenCollapsible(false);
  m_splitter->addWidget(m_view);
  buildActions();
  m_splitter->addWidget(buildComposer());
  m_splitter->setStretchFactor(0, 1);
  setCentralWidget(m_splitter);
  buildMenus();
  m_status = new EngineStatusBar(this);
  setStatusBar(m_status);
  connectEngine();
  restoreWindowState();
  updateActions();
  m_input->setFocus();
}

MainWindow::~MainWindow() = default;

QAction* MainWindow::addChatAction(const QString& name, const QString& text, const QKeySequence& shortcut) {
  auto* action = new QAction(text, this);
  action->setObjectName(name);
  action->setShortcut(shortcut);
  action->setToolTip(tr("%1 (%2)").arg(QString(text).remove(QLatin1Char('&')),
                                        shortcut.toString(QKeySequence::NativeText)));
  addAction(action);
  return action;
}

void MainWindow::buildActions() {
  m_sendAction = addChatAction(QStringLiteral("sendAction"), tr("&Send"), QKeySequence(Qt::CTRL | Qt::Key_Return));
  m_stopAction = addChatAction(QStringLiteral("stopAction"), tr("S&top"), QKeySequence(Qt::Key_Escape));
  m_regenerateAction = addChatAction(QStringLiteral("regenerateAction"), tr("&Regenerate"), QKeySequence(Qt::CTRL | Qt::Key_R));
  m_copyAction = addChatAction(QStringLiteral("copyAction"), tr("&Copy Last Reply"),
                               QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  m_editAction = addChatAction(QStringLiteral("editAction"), tr("&Edit Last Message"), QKeySequence(Qt::CTRL | Qt::Key_E));
  m_newChatAction = addChatAction(QStringLiteral("newChatAction"), tr("&New Chat"), QKeySequence::New);
  connect(m_sendAction, &QAction::triggered, this, &MainWindow::sendInput);
  connect(m_stopAction, &QAction::triggered, m_chat, &ChatSession::stop);
  connect(m_regenerateAction, &QAction::triggered, m_chat, &ChatSession::regenerate);
  connect(m_copyAction, &QAction::triggered, this, &MainWindow::copyLastReply);
  connect(m_editAction, &QAction::triggered, this, &MainWindow::editLastMessage);
  connect(m_newChatAction, &QAction::triggered, m_chat, &ChatSession::clear);
  connect(m_newChatAction, &QAction::triggered, this, &MainWindow::updateActions);
}

QWidget* MainWindow::buildComposer() {
  auto* composer = new QWidget(this);
  m_input = new MessageInput(composer);
  connect(m_input, &MessageInput::submitted, this, &MainWindow::sendInput);
  auto* buttons = new QHBoxLayout();
  for (QAction* action : {m_editAction, m_copyAction, m_regenerateAction}) {
    auto* button = new QToolButton(composer);
    button->setDefaultAction(action);
    buttons->addWidget(button);
  }
  buttons->addStretch(1);
  for (QAction* action : {m_stopAction, m_sendAction}) {
    auto* button = new QToolButton(composer);
    button->setDefaultAction(action);
    buttons->addWidget(button);
  }
  auto* layout = new QVBoxLayout(composer);
  layout->setContentsMargins(8, 4, 8, 4);
  layout->addWidget(m_input);
  layout->addLayout(buttons);
  return composer;
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open Model…"), this, &MainWindow::openModelDialog);
  open->setShortcut(QKeySequence::Open);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* chat = menuBar()->addMenu(tr("&Chat"));
  chat->addActions({m_sendAction, m_stopAction, m_regenerateAction});
  chat->addSeparator();
  chat->addActions({m_copyAction, m_editAction});
  chat->addSeparator();
  chat->addAction(m_newChatAction);
}

void MainWindow::connectEngine() {
  EngineController* engine = m_engine.controller();
  connect(engine, &EngineController::loadProgress, m_status, &EngineStatusBar::showLoadProgress);
  connect(engine, &EngineController::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(engine, &EngineController::loadFailed, this, &MainWindow::onLoadFailed);
  connect(engine, &EngineController::metrics, m_status,
          [this](const MetricsSample& sample) { m_status->showSpeed(sample.decodeTokensPerSecond); });
  connect(m_chat, &ChatSession::busyChanged, this, &MainWindow::updateActions);
  connect(m_chat, &ChatSession::replyFinished, this, &MainWindow::onReplyFinished);
  connect(m_chat, &ChatSession::replyFailed, this, [this](const QString& message) {
    showError(tr("Generation failed"), tr("The model could not reply."), message);
    m_input->setFocus();
  });
}

void MainWindow::loadModel(const QString& path) {
  m_chat->stop();
  m_loading = true;
  m_loadingPath = path;
  m_status->showLoading(path);
  updateActions();
  m_engine.controller()->loadModel(path, LoadOptions{});
}

void MainWindow::onModelLoaded(const ModelSummary& summary) {
  m_loading = false;
  m_hasModel = true;
  m_status->showModel(summary);
  setWindowTitle(tr("%1 — Inferscope").arg(QFileInfo(summary.path).fileName()));
  updateActions();
  emit modelLoaded(summary);
}

void MainWindow::onLoadFailed(const QString& message) {
  m_loading = false;
  m_status->showLoadFailed();
  updateActions();
  const QString kept = m_hasModel ? tr("The previous model stays loaded.") : tr("No model is loaded.");
  showError(tr("Could not load the model"),
            tr("%1 could not be loaded. %2").arg(QFileInfo(m_loadingPath).fileName(), kept), message);
  emit loadFailed(message);
}

void MainWindow::onReplyFinished() {
  updateActions();
  m_input->setFocus();
}

// Window-modal but not blocking: the engine's signals keep flowing while it is open.
void MainWindow::showError(const QString& title, const QString& text, const QString& details) {
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setInformativeText(details);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

void MainWindow::sendInput() {
  if (!m_sendAction->isEnabled()) return;
  if (m_chat->send(m_input->toPlainText())) m_input->clear();
}

void MainWindow::editLastMessage() {
  const QString text = m_chat->takeLastUserMessage();
  if (text.isEmpty()) return;
  m_input->setPlainText(text);
  m_input->moveCursor(QTextCursor::End);
  m_input->setFocus();
  updateActions();
}

void MainWindow::copyLastReply() { QApplication::clipboard()->setText(m_chat->lastReply()); }

void MainWindow::openModelDialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Model"), QString(), tr("GGUF models (*.gguf);;All files (*)"));
  if (!path.isEmpty()) loadModel(path);
}

void MainWindow::updateActions() {
  const bool idle = !m_chat->isBusy() && !m_loading;
  m_sendAction->setEnabled(idle && m_hasModel);
  m_stopAction->setEnabled(m_chat->isBusy());
  m_regenerateAction->setEnabled(idle && m_hasModel && m_chat->canRegenerate());
  m_copyAction->setEnabled(!m_chat->lastReply().isEmpty());
  m_editAction->setEnabled(idle && m_chat->canEditLast());
  m_newChatAction->setEnabled(!m_chat->isBusy());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedFile(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  loadModel(path);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveWindowState();
  QMainWindow::closeEvent(event);
}

void MainWindow::restoreWindowState() {
  const QSettings settings;
  if (!restoreGeometry(settings.value(kGeometryKey).toByteArray())) resize(900, 700);
  restoreState(settings.value(kStateKey).toByteArray());
  if (!m_splitter->restoreState(settings.value(kSplitterKey).toByteArray())) m_splitter->setSizes({560, 140});
}

void MainWindow::saveWindowState() const {
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState());
  settings.setValue(kSplitterKey, m_splitter->saveState());
}

}  // namespace inferscope::ui
