// The desktop app's main window: the chat (the session's system prompt, ChatView over the
// MessageInput, in a splitter), the chat actions with their shortcuts, the status bar, loading
// models (File > Open, a .gguf dropped on the window, Apply in the settings dock) with a progress
// bar and an error dialog that leaves the previous model in place (one for a bad file, one for a
// backend that cannot start on the chosen device); the docks (sessions, settings with the device
// picker, performance), Model Info, File > Export, and the chat history through StoreWorker with
// its notices. Geometry, dock and splitter state, and the settings the model last loaded with
// (device, threads, context), persist in QSettings.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QMainWindow>

#include "ui/bridge/backend_devices.h"
#include "ui/bridge/engine_thread.h"
#include "ui/bridge/load_options.h"
#include "ui/bridge/model_summary.h"
#include "ui/settings/load_settings.h"
#include "ui/bridge/sampling_settings.h"
#include "ui/chat/conversation.h"
#include "ui/store/session_info.h"
#include "ui/store/store_thread.h"

class QAction;
class QDockWidget;
class QLineEdit;
class QSplitter;

namespace inferscope::ui {

class CacheBrowser;
class ChatRecorder;
class ChatSession;
class ChatView;
class CompareView;
class EngineStatusBar;
class ExportMenu;
class MessageInput;
class PerformancePanel;
class ProfilerPanel;
class SessionSidebar;
class SettingsDock;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr const char* kMaxTokensKey = "chat/maxTokens";
  // The settings the last loaded model used; the app starts with them (loadModelWithSavedSettings).
  static constexpr const char* kLoadBackendKey = "load/backend";        // "cpu", "vulkan:0"
  static constexpr const char* kLoadDeviceNameKey = "load/deviceName";  // to find the device again
  static constexpr const char* kLoadThreadsKey = "load/threads";
  static constexpr const char* kLoadContextKey = "load/contextLength";

  explicit MainWindow(QWidget* parent = nullptr);
  // `databasePath` empty: StoreWorker::defaultPath().
  explicit MainWindow(const QString& databasePath, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads in the background; the current model stays usable until the new one is ready.
  void loadModel(const QString& path, const LoadOptions& options = {});
  // At start-up: loads `path` with the saved device, threads and context. A saved device waits
  // for the device listing; when it is gone the model loads on the CPU, with a status-bar note.
  void loadModelWithSavedSettings(const QString& path);
  bool isLoading() const { return m_loading; }
  // The engine's listing of backends and devices (empty until backendsListed).
  const QList<BackendInfo>& backends() const { return m_backends; }
  bool hasModel() const { return m_hasModel; }

  EngineController* engine() const { return m_engine.controller(); }
  ChatSession* chat() const { return m_chat; }
  ChatView* chatView() const { return m_view; }
  MessageInput* input() const { return m_input; }
  EngineStatusBar* engineStatusBar() const { return m_status; }
  StoreWorker* store() const { return m_store.worker(); }
  SessionSidebar* sessions() const { return m_sidebar; }
  QLineEdit* systemPromptField() const { return m_systemPrompt; }
  SettingsDock* settingsDock() const { return m_settings; }
  PerformancePanel* performancePanel() const { return m_performance; }
  ProfilerPanel* profilerPanel() const { return m_profiler; }
  QDockWidget* profilerDock() const { return m_profilerDock; }
  ExportMenu* exports() const { return m_export; }
  // View > Compare Configurations: the comparison workbench's window (made on first use), shown.
  CompareView* openCompareView();
  // View > Semantic Cache: the cache browser window (made on first use).
  CacheBrowser* openCacheBrowser();
  // File > Save Model as GGUF (enabled when the loaded model was requantized on load).
  void saveModelAs(const QString& path);

 signals:
  void modelLoaded(const inferscope::ui::ModelSummary& summary);
  void loadFailed(const QString& message);
  // The model's backend could not start on the chosen device (loadFailed follows).
  void backendFailed(const QString& backend, const QString& message);
  // The settings dock's picker holds the engine's listing.
  void backendsListed();
  void noticeShown(const QString& title, const QString& text);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  QWidget* buildComposer();
  QWidget* buildChatPane();
  void buildSessionsDock();
  void buildSettingsDock();
  void buildPerformanceDock();
  void connectSettings();
  void connectPerformance();
  void rememberModel(const QString& path);
  void reload(const LoadSettings& settings);
  LoadOptions optionsFor(const LoadSettings& settings) const;
  LoadSettings savedLoadSettings() const;
  void saveLoadSettings(const ModelSummary& summary) const;
  // What File > Open and a dropped file load with: the loaded model's settings.
  LoadOptions currentOptions() const;
  void onBackendsListed(const QList<BackendInfo>& backends);
  QString deviceLabel(const BackendChoice& choice) const;
  void loadPendingStartupModel();
  void onBackendFailed(const QString& backend, const QString& message);
  void openModelInfo();
  void connectStore();
  void startNewChat();
  void onSessionLoaded(const SessionInfo& session, const QList<ConversationMessage>& messages);
  void applySystemPrompt();
  void showNotice(const QString& title, const QString& text, const QString& details);
  // The model's chat template could not be used (`reason`); messages go out in the plain format.
  void showChatTemplateNotice(const QString& reason);
  void buildActions();
  void buildMenus();
  void connectEngine();
  void restoreWindowState();
  void saveWindowState() const;
  QAction* addChatAction(const QString& name, const QString& text, const QKeySequence& shortcut);

  void sendInput();
  void editLastMessage();
  void copyLastReply();
  void openModelDialog();
  void saveModelDialog();
  void onModelLoaded(const ModelSummary& summary);
  void onLoadFailed(const QString& message);
  void onReplyFinished();
  void showError(const QString& title, const QString& text, const QString& details, const QString& objectName = {});
  void updateActions();

  StoreThread m_store;  // destroyed last: the writes queued until then still commit
  EngineThread m_engine;
  Conversation* m_conversation;
  ChatSession* m_chat;
  ChatRecorder* m_recorder;
  SessionSidebar* m_sidebar = nullptr;
  QDockWidget* m_sessionsDock = nullptr;
  QLineEdit* m_systemPrompt = nullptr;
  SettingsDock* m_settings = nullptr;
  PerformancePanel* m_performance = nullptr;
  QDockWidget* m_performanceDock = nullptr;
  ProfilerPanel* m_profiler = nullptr;
  QDockWidget* m_profilerDock = nullptr;
  QAction* m_modelInfoAction = nullptr;
  QAction* m_saveModelAction = nullptr;
  ExportMenu* m_export = nullptr;
  CompareView* m_compare = nullptr;
  CacheBrowser* m_cacheBrowser = nullptr;
  QString m_serverAddress;  // the local server's, while it serves
  QElapsedTimer m_clock;  // the decode chart's time axis
  int m_replies = 0;
  bool m_replyHasDecodeSample = false;  // a metrics sample came during the current reply
  ChatView* m_view = nullptr;
  MessageInput* m_input = nullptr;
  QSplitter* m_splitter = nullptr;
  EngineStatusBar* m_status = nullptr;
  QAction* m_sendAction = nullptr;
  QAction* m_stopAction = nullptr;
  QAction* m_regenerateAction = nullptr;
  QAction* m_copyAction = nullptr;
  QAction* m_editAction = nullptr;
  QAction* m_newChatAction = nullptr;
  QString m_loadingPath;
  LoadOptions m_loadingOptions;
  LoadOptions m_loadedOptions;
  ModelSummary m_loaded;
  QString m_modelPath;
  QList<BackendInfo> m_backends;
  bool m_backendsListed = false;
  QString m_startupPath;  // a start-up load waiting for the device listing
  bool m_memoryOnDevice = false;  // the performance panel charts the device's memory
  bool m_loading = false;
  bool m_hasModel = false;
};

}  // namespace inferscope::ui
