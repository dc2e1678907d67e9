#include "ui/main_window.h"

#include <algorithm>
#include <utility>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/chat/chat_session.h"
#include "ui/chat/chat_view.h"
#include "ui/chat/conversation.h"
#include "ui/chat/message_input.h"
#include "ui/cache_browser/cache_browser.h"
#include "ui/compare/compare_view.h"
#include "ui/export/export_menu.h"
#include "ui/metrics/performance_panel.h"
#include "ui/metrics/profiler_panel.h"
#include "ui/model_info/model_info_dialog.h"
#include "ui/sessions/session_sidebar.h"
#include "ui/settings/sampling_json.h"
#include "ui/settings/semantic_cache_store.h"
#include "ui/settings/settings_dock.h"
#include "ui/status/engine_status_bar.h"
#include "ui/store/chat_recorder.h"
#include "ui/store/store_worker.h"

namespace inferscope::ui {

namespace {

constexpr const char* kGeometryKey = "window/geometry";
constexpr const char* kStateKey = "window/state";
constexpr const char* kSplitterKey = "window/splitter";
constexpr const char* kRecentModelsKey = "models/recent";
constexpr int kRecentModels = 8;
constexpr int kChatMinimumHeight = 120;  // a message or two, in the smallest window
constexpr int kNoteTimeoutMs = 15000;
constexpr int kSemanticCacheNoticeMs = 10000;

// The single local file of a drag, or an empty string.
QString droppedFile(const QMimeData* mime) {
  if (!mime->hasUrls() || mime->urls().size() != 1) return {};
  const QUrl url = mime->urls().front();
  return url.isLocalFile() ? url.toLocalFile() : QString();
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : MainWindow(QString(), parent) {}

MainWindow::MainWindow(const QString& databasePath, QWidget* parent)
    : QMainWindow(parent),
      m_store(databasePath),
      m_conversation(new Conversation(this)),
      m_chat(new ChatSession(m_engine.controller(), m_conversation, this)),
      m_recorder(new ChatRecorder(m_conversation, m_store.worker(), this)) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Inferscope"));
  // The semantic cache keeps its entries in the app's database (a connection of its own).
  m_engine.controller()->setDatabasePath(databasePath.isEmpty() ? StoreWorker::defaultPath() : databasePath);
  setAcceptDrops(true);
  // A reply starts only once the finished reply before it and the new user message are committed.
  m_chat->setCommitGate([recorder = m_recorder](std::function<void()> then) { recorder->whenCommitted(std::move(then)); });

  m_view = new ChatView(m_conversation, this);
  m_view->setMinimumHeight(kChatMinimumHeight);  // the docks give way before the chat does
  m_splitter = new QSplitter(Qt::Vertical, this);
  m_splitter->setObjectName(QStringLiteral("chatSplitter"));
  m_splitter->setChildrenCollapsible(false);
  m_splitter->addWidget(m_view);
  buildActions();
  m_splitter->addWidget(buildComposer());
  m_splitter->setStretchFactor(0, 1);
  setCentralWidget(buildChatPane());
  buildSessionsDock();
  buildSettingsDock();
  buildPerformanceDock();
  buildMenus();
  m_status = new EngineStatusBar(this);
  setStatusBar(m_status);
  connectEngine();
  connectStore();
  connectSettings();
  connectPerformance();
  m_settings->setLoadSettings(savedLoadSettings());
  // Off the UI thread: loading the Vulkan library and creating an instance takes 100 ms and more.
  m_engine.controller()->listBackends();
  m_store.worker()->open();
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
  // The buttons under the input show short names, so the chat fits a small window; menus and
  // tooltips keep the full ones.
  m_editAction->setIconText(tr("Edit"));
  m_copyAction->setIconText(tr("Copy"));
  connect(m_sendAction, &QAction::triggered, this, &MainWindow::sendInput);
  connect(m_stopAction, &QAction::triggered, m_chat, &ChatSession::stop);
  connect(m_regenerateAction, &QAction::triggered, m_chat, &ChatSession::regenerate);
  connect(m_view, &ChatView::runForRealRequested, m_regenerateAction, &QAction::trigger);
  connect(m_copyAction, &QAction::triggered, this, &MainWindow::copyLastReply);
  connect(m_editAction, &QAction::triggered, this, &MainWindow::editLastMessage);
  connect(m_newChatAction, &QAction::triggered, this, &MainWindow::startNewChat);
}

// The session's system prompt above the chat and its composer.
QWidget* MainWindow::buildChatPane() {
  auto* pane = new QWidget(this);
  m_systemPrompt = new QLineEdit(pane);
  m_systemPrompt->setObjectName(QStringLiteral("systemPrompt"));
  m_systemPrompt->setPlaceholderText(tr("System prompt for this chat (optional)"));
  m_systemPrompt->setClearButtonEnabled(true);
  connect(m_systemPrompt, &QLineEdit::editingFinished, this, &MainWindow::applySystemPrompt);
  auto* form = new QFormLayout();
  form->setContentsMargins(8, 4, 8, 0);
  form->addRow(tr("System:"), m_systemPrompt);
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addLayout(form);
  layout->addWidget(m_splitter, 1);
  return pane;
}

void MainWindow::buildSessionsDock() {
  m_sidebar = new SessionSidebar(this);
  m_sessionsDock = new QDockWidget(tr("Sessions"), this);
  m_sessionsDock->setObjectName(QStringLiteral("sessionsDock"));
  m_sessionsDock->setWidget(m_sidebar);
  addDockWidget(Qt::LeftDockWidgetArea, m_sessionsDock);
}

void MainWindow::connectStore() {
  StoreWorker* store = m_store.worker();
  connect(store, &StoreWorker::noticeRaised, this, &MainWindow::showNotice);
  connect(store, &StoreWorker::failed, this, [this](const QString& message) {
    m_status->showMessage(tr("Chat history: %1").arg(message), 10000);
  });
  connect(store, &StoreWorker::lockChanged, this, [this](bool locked) {
    if (locked) {
      m_status->showMessage(tr("Chat history: locked by another program; new messages are saved once it is released"));
    } else {
      m_status->showMessage(tr("Chat history: the lock is released and everything is saved"), 10000);
    }
  });
  connect(store, &StoreWorker::sessionsListed, m_sidebar, &SessionSidebar::setSessions);
  connect(store, &StoreWorker::currentSessionChanged, m_sidebar, &SessionSidebar::setCurrent);
  connect(store, &StoreWorker::sessionLoaded, this, &MainWindow::onSessionLoaded);
  connect(m_sidebar, &SessionSidebar::sessionActivated, this, [this, store](qint64 id) {
    if (!m_chat->isBusy()) store->selectSession(id);
  });
  connect(m_sidebar, &SessionSidebar::newRequested, this, &MainWindow::startNewChat);
  connect(m_sidebar, &SessionSidebar::renameRequested, store, &StoreWorker::renameSession);
  connect(m_sidebar, &SessionSidebar::deleteRequested, this, [this, store](qint64 id) {
    if (id == m_sidebar->currentId()) startNewChat();
    store->deleteSession(id);
  });
  connect(m_sidebar, &SessionSidebar::undoRequested, store, &StoreWorker::undoDelete);
  connect(m_sidebar, &SessionSidebar::filterChanged, store, &StoreWorker::setFilter);
}

void MainWindow::startNewChat() {
  if (m_chat->isBusy()) return;
  m_recorder->load({});
  m_store.worker()->newSession(m_systemPrompt->text());
  updateActions();
}

void MainWindow::onSessionLoaded(const SessionInfo& session, const QList<ConversationMessage>& messages) {
  if (m_chat->isBusy()) return;
  m_recorder->load(messages);
  m_systemPrompt->setText(session.systemPrompt);
  m_chat->setSystemPrompt(session.systemPrompt);
  updateActions();
}

void MainWindow::applySystemPrompt() {
  if (m_systemPrompt->text() == m_chat->systemPrompt()) return;
  m_chat->setSystemPrompt(m_systemPrompt->text());
  m_store.worker()->setSystemPrompt(m_systemPrompt->text());
}

// Not blocking: the database and the engine keep working while it is open. The title heads the
// box too, as window decorations do not always show it.
void MainWindow::showNotice(const QString& title, const QString& text, const QString& details) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()),
                              QMessageBox::Ok, this);
  box->setInformativeText(text);
  box->setDetailedText(details);
  box->setObjectName(QStringLiteral("storeNotice"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit noticeShown(title, text);
}

void MainWindow::showChatTemplateNotice(const QString& reason) {
  showNotice(tr("Chat template not used"),
             tr("The model's chat template was stopped: %1.\n\nMessages are sent in the plain "
                "\"User: ... / Assistant:\" format instead.").arg(reason),
             QString());
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
  m_saveModelAction = file->addAction(tr("&Save Model as GGUF…"), this, &MainWindow::saveModelDialog);
  m_saveModelAction->setObjectName(QStringLiteral("saveModelAction"));
  m_saveModelAction->setToolTip(tr("Writes the model requantized on load to a file"));
  file->addSeparator();
  m_export = new ExportMenu(m_conversation, m_chat, m_sidebar, m_performance, this);
  m_export->addTo(file);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* chat = menuBar()->addMenu(tr("&Chat"));
  chat->addActions({m_sendAction, m_stopAction, m_regenerateAction});
  chat->addSeparator();
  chat->addActions({m_copyAction, m_editAction});
  chat->addSeparator();
  chat->addAction(m_newChatAction);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addActions({m_sessionsDock->toggleViewAction(), m_settings->toggleViewAction(),
                    m_performanceDock->toggleViewAction(), m_profilerDock->toggleViewAction()});
  view->addSeparator();
  m_modelInfoAction = view->addAction(tr("Model &Info…"), this, &MainWindow::openModelInfo);
  m_modelInfoAction->setObjectName(QStringLiteral("modelInfoAction"));
  QAction* compare = view->addAction(tr("&Compare Configurations…"), this, &MainWindow::openCompareView);
  compare->setObjectName(QStringLiteral("compareAction"));
  compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
  QAction* cache = view->addAction(tr("&Semantic Cache…"), this, &MainWindow::openCacheBrowser);
  cache->setObjectName(QStringLiteral("cacheBrowserAction"));
}

void MainWindow::saveModelDialog() {
  const QString suggested = QFileInfo(m_modelPath).completeBaseName() + QLatin1Char('-') + m_loadedOptions.weights + QStringLiteral(".gguf");
  const QString path = QFileDialog::getSaveFileName(this, tr("Save Model as GGUF"), suggested, tr("GGUF models (*.gguf)"));
  if (!path.isEmpty()) saveModelAs(path);
}

void MainWindow::saveModelAs(const QString& path) {
  m_status->showMessage(tr("Saving %1…").arg(QFileInfo(path).fileName()));
  m_engine.controller()->saveModelAs(path);
}

CompareView* MainWindow::openCompareView() {
  if (m_compare == nullptr) {
    m_compare = new CompareView(m_engine.controller(), m_store.worker(), this);
    m_compare->setWindowFlag(Qt::Window);
    m_compare->resize(1100, 760);
    connect(m_compare, &CompareView::currentChatRequested, this, [this] {
      QStringList prompts;
      for (const ConversationMessage& m : m_conversation->messages()) {
        if (m.role == ConversationMessage::Role::User) prompts << m.text;
      }
      m_compare->setPrompts(prompts);
    });
  }
  m_compare->setDefaultModel(m_modelPath);
  m_compare->show();
  m_compare->raise();
  return m_compare;
}

CacheBrowser* MainWindow::openCacheBrowser() {
  if (m_cacheBrowser == nullptr) {
    m_cacheBrowser = new CacheBrowser(m_engine.controller(), this);
    m_cacheBrowser->setWindowFlag(Qt::Window);
    m_cacheBrowser->resize(900, 600);
  } else {
    m_cacheBrowser->refresh();
  }
  m_cacheBrowser->show();
  m_cacheBrowser->raise();
  return m_cacheBrowser;
}

void MainWindow::buildSettingsDock() {
  m_settings = new SettingsDock(this);
  // Wide enough for its forms without a horizontal scroll bar.
  if (auto* scroll = qobject_cast<QScrollArea*>(m_settings->widget())) {
    m_settings->setMinimumWidth(scroll->widget()->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
  }
  addDockWidget(Qt::RightDockWidgetArea, m_settings);
  m_settings->setRecentModels(QSettings().value(kRecentModelsKey).toStringList());
}

void MainWindow::buildPerformanceDock() {
  m_performance = new PerformancePanel(this);
  // Scrolls, so that the charts never squeeze the chat.
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(m_performance);
  m_performanceDock = new QDockWidget(tr("Performance"), this);
  m_performanceDock->setObjectName(QStringLiteral("performanceDock"));
  m_performanceDock->setWidget(scroll);
  addDockWidget(Qt::BottomDockWidgetArea, m_performanceDock);
  // The profiler goes beside the performance dock when opened.
  m_profiler = new ProfilerPanel(this);
  auto* profilerScroll = new QScrollArea(this);
  profilerScroll->setWidgetResizable(true);
  profilerScroll->setFrameShape(QFrame::NoFrame);
  profilerScroll->setObjectName(QStringLiteral("profilerScroll"));
  profilerScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // its charts shrink to the width
  profilerScroll->setWidget(m_profiler);
  m_profilerDock = new QDockWidget(tr("Profiler"), this);
  m_profilerDock->setObjectName(QStringLiteral("profilerDock"));
  m_profilerDock->setWidget(profilerScroll);
  addDockWidget(Qt::BottomDockWidgetArea, m_profilerDock);
  m_profilerDock->hide();  // View > Profiler opens it; closed, it takes no room from the chat
  // The side docks run the full height; the charts sit under the chat only.
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
}

// Sampling applies to the next reply; Apply reloads the model; presets live in the database.
void MainWindow::connectSettings() {
  StoreWorker* store = m_store.worker();
  connect(m_settings, &SettingsDock::samplingChanged, this, [this](const SamplingSettings& sampling) {
    m_chat->setSampling(sampling);
    QSettings().setValue(kMaxTokensKey, sampling.maxTokens);
  });
  connect(m_settings, &SettingsDock::semanticCacheChanged, this, [this](const SemanticCacheSettings& cache) {
    m_chat->setSemanticCache(cache);
    QSettings settings;
    writeSemanticCacheSettings(settings, cache);
  });
  connect(m_settings, &SettingsDock::semanticCacheBrowseRequested, this, &MainWindow::openCacheBrowser);
  m_settings->setSemanticCache(readSemanticCacheSettings(QSettings()));
  connect(m_settings, &SettingsDock::reloadRequested, this, &MainWindow::reload);
  connect(m_settings, &SettingsDock::kvTypesRequested, m_engine.controller(), &EngineController::setKvTypes);
  connect(m_settings, &SettingsDock::cachePolicyRequested, m_engine.controller(), &EngineController::setCachePolicy);
  connect(m_settings, &SettingsDock::presetSaveRequested, this,
          [store](const QString& name, const SamplingSettings& sampling) { store->savePreset(name, samplingToJson(sampling)); });
  connect(m_settings, &SettingsDock::presetLoadRequested, store, &StoreWorker::loadPreset);
  connect(m_settings, &SettingsDock::presetDeleteRequested, store, &StoreWorker::deletePreset);
  connect(store, &StoreWorker::presetsListed, m_settings, &SettingsDock::setPresetNames);
  connect(store, &StoreWorker::presetLoaded, this, [this](const QString& name, const QString& json) {
    const auto sampling = samplingFromJson(json);
    if (sampling) m_settings->applySampling(*sampling);
    else m_status->showMessage(tr("Preset %1 is not valid JSON").arg(name), 10000);
  });
  SamplingSettings sampling = m_settings->sampling();
  sampling.maxTokens = QSettings().value(kMaxTokensKey, ChatSession::kDefaultMaxTokens).toInt();
  m_settings->applySampling(sampling);
}

void MainWindow::connectPerformance() {
  m_clock.start();
  connect(m_engine.controller(), &EngineController::metrics, m_performance, [this](const MetricsSample& sample) {
    m_performance->addDecodeSample(m_clock.elapsed() / 1000.0, sample.decodeTokensPerSecond);
    m_performance->setMemory(m_memoryOnDevice ? sample.deviceWeightsBytes : sample.weightsBytes, sample.kvCacheBytes,
                             sample.scratchBytes, sample.kvBlocks,
                             m_memoryOnDevice ? sample.draftModelDeviceBytes : sample.draftModelBytes,
                             sample.recurrentBytes);
    m_performance->setOpTimes(sample.opSeconds, m_loaded.backendShort);
    m_profiler->showSample(sample);
    if (m_chat->isBusy()) m_replyHasDecodeSample = true;
  });
  connect(m_chat, &ChatSession::busyChanged, m_performance, [this](bool busy) {
    if (busy) m_replyHasDecodeSample = false;
  });
  connect(m_chat, &ChatSession::replyFinished, m_performance, [this](const ReplyStats& stats) {
    m_performance->addReply(++m_replies, stats.ttftMs, stats.tokensPerSecond);
    m_performance->addPrefixReuse(m_replies, stats.promptTokens, stats.reusedTokens);
    if (stats.cacheLookedUp) {
      m_performance->addSemanticCacheLookup(m_replies, stats.stopReason == QLatin1String("semantic_cache"));
    }
    // A short reply can end before the first metrics sample: its average still makes a point.
    if (!m_replyHasDecodeSample && stats.tokens > 0) {
      m_performance->addDecodeSample(m_clock.elapsed() / 1000.0, stats.tokensPerSecond);
    }
    m_replyHasDecodeSample = false;
  });
}

void MainWindow::reload(const LoadSettings& settings) { loadModel(settings.modelPath, optionsFor(settings)); }

LoadOptions MainWindow::optionsFor(const LoadSettings& settings) const {
  LoadOptions options;
  options.threads = settings.threads;
  options.contextLength = settings.contextLength;
  options.backend = backendChoiceFromId(settings.backend).value_or(BackendChoice{});
  options.kvTypes = m_settings->kvTypes();
  options.cache = m_settings->cachePolicy();
  options.weights = settings.weights;
  return options;
}

LoadSettings MainWindow::savedLoadSettings() const {
  const QSettings settings;
  LoadSettings saved;
  saved.backend = settings.value(kLoadBackendKey, saved.backend).toString();
  saved.threads = settings.value(kLoadThreadsKey, 0).toInt();
  saved.contextLength = settings.value(kLoadContextKey, 0).toLongLong();
  return saved;
}

void MainWindow::saveLoadSettings(const ModelSummary& summary) const {
  QSettings settings;
  settings.setValue(kLoadBackendKey, summary.backendId);
  settings.setValue(kLoadDeviceNameKey, summary.deviceName);
  settings.setValue(kLoadThreadsKey, m_loadedOptions.threads);
  settings.setValue(kLoadContextKey, m_loadedOptions.contextLength);
}

LoadOptions MainWindow::currentOptions() const {
  if (m_hasModel) return m_loadedOptions;
  return optionsFor(m_settings->loadSettings());
}

void MainWindow::loadModelWithSavedSettings(const QString& path) {
  const LoadSettings saved = savedLoadSettings();
  const LoadOptions options = optionsFor(saved);
  if (options.backend.on_cpu()) {
    loadModel(path, options);
    return;
  }
  // The saved device is looked up by name once the engine has listed the devices.
  m_startupPath = path;
  m_chat->stop();
  m_loading = true;
  m_loadingPath = path;
  m_status->showLoading(path, backendDisplayName(options.backend.backend, QSettings().value(kLoadDeviceNameKey).toString()));
  updateActions();
  if (m_backendsListed) loadPendingStartupModel();
}

// "Vulkan: llvmpipe (...)" when the listing has the device, else "Vulkan device 0".
QString MainWindow::deviceLabel(const BackendChoice& choice) const {
  for (const BackendInfo& backend : m_backends) {
    for (const BackendDeviceInfo& device : backend.devices) {
      if (sameChoice(device.choice, choice)) return backendDisplayName(choice.backend, device.name);
    }
  }
  return tr("%1 device %2").arg(backendKindLabel(choice.backend)).arg(choice.device);
}

void MainWindow::onBackendsListed(const QList<BackendInfo>& backends) {
  m_backends = backends;
  m_backendsListed = true;
  m_settings->setBackends(backends);
  // The dock shows the loaded model's device, or the saved one before the first load.
  LoadSettings shown = m_settings->loadSettings();
  shown.backend = m_hasModel ? m_loaded.backendId : savedLoadSettings().backend;
  m_settings->setLoadSettings(shown);
  if (!m_startupPath.isEmpty()) loadPendingStartupModel();
  emit backendsListed();
}

// The saved device by name (its number may have changed since); the CPU when it is gone.
void MainWindow::loadPendingStartupModel() {
  const QString path = std::exchange(m_startupPath, QString());
  const LoadSettings saved = savedLoadSettings();
  LoadOptions options = optionsFor(saved);
  const QString savedName = QSettings().value(kLoadDeviceNameKey).toString();
  const BackendDeviceInfo* found = nullptr;
  QString reason;
  for (const BackendInfo& backend : m_backends) {
    if (backend.backend != options.backend.backend) continue;
    reason = backend.unavailableReason;
    for (const BackendDeviceInfo& device : backend.devices) {
      const bool sameName = savedName.isEmpty() || device.name == savedName;
      if (!sameName) continue;
      if (!found || device.choice.device == options.backend.device) found = &device;
    }
  }
  if (found) {
    options.backend = found->choice;
    loadModel(path, options);
    return;
  }
  const QString device = savedName.isEmpty() ? deviceLabel(options.backend) : backendDisplayName(options.backend.backend, savedName);
  options.backend = BackendChoice{};
  loadModel(path, options);
  m_status->showMessage(reason.isEmpty() ? tr("The saved device, %1, is no longer there: the model runs on the CPU.").arg(device)
                                         : tr("The saved device, %1, is not available (%2): the model runs on the CPU.")
                                               .arg(device, reason),
                        kNoteTimeoutMs);
}

void MainWindow::rememberModel(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(kRecentModelsKey).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kRecentModels) recent.removeLast();
  settings.setValue(kRecentModelsKey, recent);
  m_settings->setRecentModels(recent);
}

void MainWindow::openModelInfo() {
  if (m_modelPath.isEmpty()) return;
  auto* dialog = new ModelInfoDialog(m_modelPath, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->open();
}

void MainWindow::connectEngine() {
  EngineController* engine = m_engine.controller();
  connect(engine, &EngineController::loadProgress, m_status, &EngineStatusBar::showLoadProgress);
  connect(engine, &EngineController::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(engine, &EngineController::loadFailed, this, &MainWindow::onLoadFailed);
  connect(engine, &EngineController::backendFailed, this, &MainWindow::onBackendFailed);
  connect(engine, &EngineController::backendsListed, this, &MainWindow::onBackendsListed);
  connect(engine, &EngineController::chatTemplateFellBack, this, &MainWindow::showChatTemplateNotice);
  connect(m_settings, &SettingsDock::localServerChanged, engine, &EngineController::setLocalServer);
  connect(m_settings, &SettingsDock::routingChanged, engine, &EngineController::setRouting);
  connect(engine, &EngineController::routingChanged, m_settings, &SettingsDock::showRouting);
  connect(engine, &EngineController::routeNotice, m_status,
          [this](const QString& message) { m_status->showMessage(message, kSemanticCacheNoticeMs); });
  connect(engine, &EngineController::localServerChanged, this, [this](const QString& address, const QString& error) {
    m_settings->showLocalServer(address, error);
    m_serverAddress = address;
    m_status->showServer(address, 0);
    if (!error.isEmpty()) m_status->showMessage(tr("The local server could not start: %1").arg(error), 10000);
  });
  connect(engine, &EngineController::localServerRequests, this,
          [this](qint64 requests) { m_status->showServer(m_serverAddress, requests); });
  connect(engine, &EngineController::semanticCacheNotice, m_status,
          [this](const QString& message) { m_status->showMessage(message, kSemanticCacheNoticeMs); });
  connect(engine, &EngineController::kvCacheChanged, this, [this](const KvTypes& types, quint64 bytes) {
    m_loadedOptions.kvTypes = types;
    m_settings->showKvCache(types, bytes);
    m_performance->setKvCacheType(QString::fromStdString(kv_types_label(types)));
  });
  connect(engine, &EngineController::cachePolicyChanged, this, [this](const CachePolicy& policy) {
    m_loadedOptions.cache = policy;
    m_settings->showCachePolicy(policy);
  });
  connect(engine, &EngineController::cachePolicyRefused, this, [this](const QString& reason) {
    m_settings->showCachePolicyRefused(reason);
    m_status->showMessage(tr("Cache settings not changed: %1").arg(reason), 10000);
  });
  connect(engine, &EngineController::kvCacheRefused, this, [this](const QString& reason) {
    m_settings->showKvCacheRefused(reason);
    m_status->showMessage(tr("KV cache not changed: %1").arg(reason), 10000);
  });
  connect(engine, &EngineController::modelSaved, this,
          [this](const QString& path) { m_status->showMessage(tr("Saved %1").arg(path), 10000); });
  connect(engine, &EngineController::saveFailed, this, [this](const QString& message) {
    showError(tr("Could not save the model"), tr("The model was not saved."), message);
  });
  connect(engine, &EngineController::metrics, m_status,
          [this](const MetricsSample& sample) { m_status->showSpeed(sample.decodeTokensPerSecond); });
  connect(m_chat, &ChatSession::busyChanged, this, &MainWindow::updateActions);
  connect(m_chat, &ChatSession::replyFinished, this, &MainWindow::onReplyFinished);
  connect(m_chat, &ChatSession::replyFailed, this, [this](const QString& message) {
    showError(tr("Generation failed"), tr("The model could not reply."), message);
    m_input->setFocus();
  });
}

void MainWindow::loadModel(const QString& path, const LoadOptions& options) {
  m_chat->stop();
  m_loading = true;
  m_loadingPath = path;
  m_loadingOptions = options;
  m_status->showLoading(path, options.backend.on_cpu() ? QString() : deviceLabel(options.backend));
  updateActions();
  m_engine.controller()->loadModel(path, options);
}

void MainWindow::onModelLoaded(const ModelSummary& summary) {
  m_loading = false;
  m_hasModel = true;
  m_status->showModel(summary);
  m_modelPath = summary.path;
  if (m_compare != nullptr) m_compare->setDefaultModel(summary.path);
  m_loaded = summary;
  m_loadedOptions = m_loadingOptions;
  LoadSettings loaded = m_settings->loadSettings();
  loaded.modelPath = summary.path;
  loaded.backend = summary.backendId;
  loaded.weights = m_loadingOptions.weights;
  m_settings->setLoadSettings(loaded);
  rememberModel(summary.path);
  saveLoadSettings(summary);
  // The memory chart: the device's memory when the model runs on one, the host's otherwise.
  m_memoryOnDevice = !summary.deviceName.isEmpty();
  m_performance->setMemoryDevice(summary.deviceName, static_cast<quint64>(summary.deviceMemoryBytes),
                                 static_cast<quint64>(summary.weightsBytes));
  m_performance->setMemory(static_cast<quint64>(m_memoryOnDevice ? summary.deviceWeightsBytes : summary.weightsBytes),
                           static_cast<quint64>(summary.kvCacheBytes), static_cast<quint64>(summary.scratchBytes),
                           summary.kvBlocks);
  m_performance->setOpTimes({}, summary.backendShort);  // a new session measures from zero
  m_performance->setKvCacheType(QString::fromStdString(kv_types_label(summary.kvTypes)));
  m_settings->showLayerKinds(summary.kvLayers, summary.recurrentLayers, summary.sharedKvLayers);
  m_settings->showKvCache(summary.kvTypes, static_cast<quint64>(summary.kvCacheBytes));
  m_settings->showMeasuredMemory(static_cast<quint64>(m_memoryOnDevice ? summary.deviceWeightsBytes : summary.weightsBytes),
                                 static_cast<quint64>(summary.kvCacheBytes), static_cast<quint64>(summary.scratchBytes));
  m_settings->showCachePolicy(summary.cachePolicy);
  setWindowTitle(tr("%1 — Inferscope").arg(QFileInfo(summary.path).fileName()));
  updateActions();
  if (!summary.chatFormatNotice.isEmpty()) showChatTemplateNotice(summary.chatFormatNotice);
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

// The file loaded but the chosen device could not run it: the dialog names the backend and the
// engine's reason, the picker goes back to the device the loaded model runs on.
void MainWindow::onBackendFailed(const QString& backend, const QString& message) {
  m_loading = false;
  m_status->showLoadFailed();
  updateActions();
  LoadSettings shown = m_settings->loadSettings();
  shown.backend = m_hasModel ? m_loaded.backendId : QStringLiteral("cpu");
  m_settings->setLoadSettings(shown);
  const QString kind = backendKindLabel(m_loadingOptions.backend.backend);
  const QString kept = m_hasModel ? tr("The previous model stays loaded on %1.").arg(m_loaded.backend) : tr("No model is loaded.");
  showError(tr("%1 backend unavailable").arg(kind),
            tr("<b>The %1 backend could not start.</b><br>%2 could not be loaded on %3. %4")
                .arg(kind, QFileInfo(m_loadingPath).fileName().toHtmlEscaped(), backend.toHtmlEscaped(), kept.toHtmlEscaped()),
            tr("Reason: %1").arg(message), QStringLiteral("backendErrorDialog"));
  emit backendFailed(backend, message);
  emit loadFailed(message);
}

void MainWindow::onReplyFinished() {
  updateActions();
  m_input->setFocus();
}

// Window-modal but not blocking: the engine's signals keep flowing while it is open.
void MainWindow::showError(const QString& title, const QString& text, const QString& details, const QString& objectName) {
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setInformativeText(details);
  if (!objectName.isEmpty()) box->setObjectName(objectName);
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
  if (!path.isEmpty()) loadModel(path, currentOptions());
}

void MainWindow::updateActions() {
  const bool idle = !m_chat->isBusy() && !m_loading;
  m_sendAction->setEnabled(idle && m_hasModel);
  m_stopAction->setEnabled(m_chat->isBusy());
  m_regenerateAction->setEnabled(idle && m_hasModel && m_chat->canRegenerate());
  m_copyAction->setEnabled(!m_chat->lastReply().isEmpty());
  m_editAction->setEnabled(idle && m_chat->canEditLast());
  m_newChatAction->setEnabled(!m_chat->isBusy());
  m_modelInfoAction->setEnabled(m_hasModel);
  m_saveModelAction->setEnabled(idle && m_hasModel && !m_loadedOptions.weights.isEmpty());
  m_sidebar->setEnabled(!m_chat->isBusy());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedFile(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QString path = droppedFile(event->mimeData());
  if (path.isEmpty()) return;
  event->acceptProposedAction();
  loadModel(path, currentOptions());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveWindowState();
  QMainWindow::closeEvent(event);
}

void MainWindow::restoreWindowState() {
  const QSettings settings;
  // First start: 900x700, or the screen's free space if smaller; the docks share the width so
  // that the chat keeps the most of it.
  if (!restoreGeometry(settings.value(kGeometryKey).toByteArray())) {
    const QSize available = screen() != nullptr ? screen()->availableSize() : QSize(900, 700);
    resize(std::min(900, available.width()), std::min(700, available.height()));
  }
  if (!restoreState(settings.value(kStateKey).toByteArray())) {
    resizeDocks({m_sessionsDock, m_settings}, {width() * 22 / 100, width() * 32 / 100}, Qt::Horizontal);
    resizeDocks({m_performanceDock}, {height() * 34 / 100}, Qt::Vertical);
  }
  // The composer starts at its own height (three lines and the buttons); the chat takes the rest.
  if (!m_splitter->restoreState(settings.value(kSplitterKey).toByteArray())) {
    m_splitter->setSizes({560, m_splitter->widget(1)->sizeHint().height()});
  }
}

void MainWindow::saveWindowState() const {
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState());
  settings.setValue(kSplitterKey, m_splitter->saveState());
}

}  // namespace inferscope::ui
