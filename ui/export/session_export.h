// A chat session as a file: Markdown to read, JSON to process (role, content and each reply's
// statistics), and the small helper that writes them.
#pragma once

#include <QList>
#include <QString>

#include "ui/chat/conversation.h"

namespace inferscope::ui {

QString sessionToMarkdown(const QString& title, const QString& systemPrompt, const QList<ConversationMessage>& messages);
QString sessionToJson(const QString& title, const QString& systemPrompt, const QList<ConversationMessage>& messages);
// UTF-8; false when the file cannot be written.
bool writeTextFile(const QString& path, const QString& text);

}  // namespace inferscope::ui
