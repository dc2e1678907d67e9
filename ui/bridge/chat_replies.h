// The chat's replies, on the engine thread: a ChatRequest made into the engine's ReplyRequest,
// answered by the loaded model's reply pipeline (engine/reply: the semantic cache, the draft,
// routing, the generation), its text paced for the window (~30 chunks a second, StreamPacer)
// with a live measurement each time, and how it went as ReplyStats. A thin adapter: every step
// of the reply is the pipeline's.
#pragma once

#include <functional>

#include <QObject>
#include <QString>

#include "engine/metrics/op_profile.h"
#include "engine/reply/reply_outcome.h"
#include "ui/bridge/app_reply_cache.h"
#include "ui/bridge/chat_model.h"
#include "ui/bridge/chat_request.h"
#include "ui/bridge/metrics_sample.h"
#include "ui/bridge/reply_stats.h"

namespace inferscope::ui {

class ChatReplies : public QObject {
  Q_OBJECT

 public:
  explicit ChatReplies(QObject* parent = nullptr) : QObject(parent) {}

  // Answers `request` on `chat` (null: no model is loaded). `cancelled` is asked before the
  // reply and between its tokens.
  void run(const ChatRequest& request, ChatModel* chat, AppReplyCache& cache, const std::function<bool()>& cancelled);
  // The text (may be empty) and a measurement of `chat`'s session.
  void publish(ChatModel& chat, const QString& text, int generated, double tokensPerSecond);
  // A new model: nothing drafts with the previous one's draft model any more.
  void modelChanged() { m_draftsWithModel = false; }

 signals:
  void tokens(const QString& chunk);
  // More of the model's thinking before its answer; `total`: its tokens so far.
  void reasoning(const QString& chunk, int total);
  void metrics(const inferscope::ui::MetricsSample& sample);
  void replyFinished(const inferscope::ui::ReplyStats& stats);
  void replyFailed(const QString& message);
  void chatTemplateFellBack(const QString& reason);
  void semanticCacheNotice(const QString& message);
  void routeNotice(const QString& message);

 private:
  class Sink;
  reply::ReplyRequest toReplyRequest(const ChatRequest& request, const ChatModel& chat) const;
  ReplyStats statsOf(const reply::ReplyOutcome& outcome, const ChatModel& chat) const;

  OpProfile m_replyStart;  // the session's profile as the running reply started
  // The running (or, between replies, the last) reply drafts with the pipeline's draft model:
  // only then do the measurements count its memory.
  bool m_draftsWithModel = false;
};

}  // namespace inferscope::ui
