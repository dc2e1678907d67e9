// The desktop app's main window: the chat (ChatView over the MessageInput, in a splitter), the
// chat actions with their shortcuts, the status bar, and loading models (File > Open, a .gguf
// dropped on the window) with a progress bar and an error dialog that leaves the previous model
// in place. Geometry and splitter state persist in QSettings.
#pragma once

#include <QMainWindow>

#include "ui/bridge/engine_thread.h"
#include "ui/bridge/model_summary.h"

class QAction;
class QSplitter;

namespace inferscope::ui {

class ChatSession;
class ChatView;
class Conversation;
class EngineStatusBar;
class MessageInput;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  static constexpr const char* kMaxTokensKey = "chat/maxTokens";

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads in the background; the current model stays usable until the new one is ready.
  void loadModel(const QString& path);
  bool isLoading() const { return m_loading; }
  bool hasModel() const { return m_hasModel; }

  EngineController* engine() const { return m_engine.controller(); }
  ChatSession* chat() const { return m_chat; }
  ChatView* chatView() const { return m_view; }
  MessageInput* input() const { return m_input; }
  EngineStatusBar* engineStatusBar() const { return m_status; }

 signals:
  void modelLoaded(const inferscope::ui::ModelSummary& summary);
  void loadFailed(const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  QWidget* buildComposer();
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

  EngineThread m_engine;
  Conversation* m_conversation;
  ChatSession* m_chat;
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
  bool m_loading = false;
  bool m_hasModel = false;
};

}  // namespace inferscope::ui
