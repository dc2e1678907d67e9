#include "ui/export/session_export.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include "ui/chat/message_widget.h"

namespace inferscope::ui {

namespace {

QString roleName(ConversationMessage::Role role) {
  return role == ConversationMessage::Role::User ? QStringLiteral("user") : QStringLiteral("assistant");
}

QJsonObject statsJson(const ReplyStats& stats) {
  return {{QStringLiteral("tokens"), stats.tokens},
          {QStringLiteral("tokens_per_second"), stats.tokensPerSecond},
          {QStringLiteral("ttft_ms"), stats.ttftMs},
          {QStringLiteral("stop_reason"), stats.stopReason}};
}

}  // namespace

QString sessionToMarkdown(const QString& title, const QString& systemPrompt, const QList<ConversationMessage>& messages) {
  QString md = QStringLiteral("# %1\n\n").arg(title);
  if (!systemPrompt.isEmpty()) md += QStringLiteral("> System: %1\n\n").arg(systemPrompt);
  for (const ConversationMessage& m : messages) {
    const bool user = m.role == ConversationMessage::Role::User;
    md += user ? QStringLiteral("## User\n\n") : QStringLiteral("## Assistant\n\n");
    md += m.text.trimmed() + QStringLiteral("\n\n");
    if (m.stats) md += QStringLiteral("*%1*\n\n").arg(formatReplyStats(*m.stats));
  }
  return md;
}

QString sessionToJson(const QString& title, const QString& systemPrompt, const QList<ConversationMessage>& messages) {
  QJsonArray list;
  for (const ConversationMessage& m : messages) {
    QJsonObject o{{QStringLiteral("role"), roleName(m.role)}, {QStringLiteral("content"), m.text}};
    if (m.stats) o.insert(QStringLiteral("stats"), statsJson(*m.stats));
    list.append(o);
  }
  const QJsonObject session{{QStringLiteral("title"), title},
                            {QStringLiteral("system_prompt"), systemPrompt},
                            {QStringLiteral("messages"), list}};
  return QString::fromUtf8(QJsonDocument(session).toJson(QJsonDocument::Indented));
}

bool writeTextFile(const QString& path, const QString& text) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return false;
  file.write(text.toUtf8());
  return file.commit();
}

}  // namespace inferscope::ui
