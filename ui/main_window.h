// The desktop app's main window: the chat (the session's system prompt, ChatView over the
// MessageInput, in a splitter), the chat actions with their shortcuts, the status bar, loading
// models (File > Open, a .gguf dropped on the window, Apply in the settings dock) with a progress
// bar and an error dialog that leaves the previous model in place; the docks (sessions, settings,
// performance), Model Info, File > Export, and the chat history through StoreWorker with its
// notices. Geometry, dock and splitter state persist in QSettings.
#pragma once

#include <QElapsedTimer>
#include <QMainWindow>

#include "ui/bridge/engine_thread.h"
#include "ui/bridge/load_options.h"
#include "ui/bridge/model_summary.h"
#include "ui/settings/load_settings.h"
#include "ui/settings/sampling_settings.h"
#include "ui/chat/conversation.h"
#include "ui/store/session_info.h"
#include "ui/store/store_thread.h"

class QAction;
class QDockWidget;
class QLineEdit;
class QSplitter;

namespace inferscope::ui {

class ChatRecorder;
class ChatSession;
class ChatView;
class EngineStatusBar;
class ExportMenu;
class MessageInput;
class PerformancePanel;
class SessionSidebar;
class SettingsDock;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr const char* kMaxTokensKey = "chat/maxTokens";

  explicit MainWindow(QWidget* parent = nullptr);
  // `databasePath` empty: StoreWorker::defaultPath().
  explicit MainWindow(const QString& databasePath, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads in the background; the current model stays usable until the new one is ready.
  void loadModel(const QString& path, const LoadOptions& options = {});
  bool isLoading() const { return m_loading; }
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
  ExportMenu* exports() const { return m_export; }

 signals:
  void modelLoaded(const inferscope::ui::ModelSummary& summary);
  void loadFailed(const QString& message);
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
  void openModelInfo();
  void connectStore();
  void startNewChat();
  void onSessionLoaded(const SessionInfo& session, const QList<ConversationMessage>& messages);
  void applySystemPrompt();
  void showNotice(const QString& title, const QString& text, const QString& details);
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
  void onModelLoaded(const ModelSummary& summary);
  void onLoadFailed(const QString& message);
  void onReplyFinished();
  void showError(const QString& title, const QString& text, const QString& details);
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
  QAction* m_modelInfoAction = nullptr;
  ExportMenu* m_export = nullptr;
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
  QString m_modelPath;
  bool m_loading = false;
  bool m_hasModel = false;
};

}  // namespace inferscope::ui
