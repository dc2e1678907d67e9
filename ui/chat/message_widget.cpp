#include "ui/chat/message_widget.h"

#include <algorithm>

#include <QLabel>
#include <QToolButton>
#include <QLocale>
#include <QVBoxLayout>

#include "ui/chat/markdown_view.h"

namespace inferscope::ui {

namespace {

constexpr int kMinRenderIntervalMs = 33;
constexpr int kRenderCostFactor = 10;

QString stopReasonText(const QString& reason) {
  if (reason == QLatin1String("eos") || reason == QLatin1String("end_of_turn")) return QObject::tr("end of turn");
  if (reason == QLatin1String("max_tokens")) return QObject::tr("token limit");
  if (reason == QLatin1String("context_full")) return QObject::tr("context full");
  if (reason == QLatin1String("cancelled")) return QObject::tr("stopped");
  return reason;
}

// "From the semantic cache · similarity 0.983 · 12.3 ms · cached for “How do I ...”"
QString formatCachedReplyStats(const ReplyStats& stats) {
  const QLocale locale;
  constexpr int kPromptChars = 80;
  QString prompt = stats.cacheMatchedPrompt.simplified();
  if (prompt.size() > kPromptChars) prompt = prompt.left(kPromptChars) + QStringLiteral("…");
  return QObject::tr("From the semantic cache · similarity %1 · %2 ms · cached for “%3”")
      .arg(locale.toString(stats.cacheSimilarity, 'f', 3), locale.toString(stats.ttftMs, 'f', 1), prompt);
}

}  // namespace

QString formatReplyStats(const ReplyStats& stats) {
  if (stats.stopReason == QLatin1String("semantic_cache")) return formatCachedReplyStats(stats);
  const QLocale locale;
  const QString line = QObject::tr("%1 tokens · %2 tokens/s · first token %3 ms · %4")
                           .arg(stats.tokens)
                           .arg(locale.toString(stats.tokensPerSecond, 'f', 1), locale.toString(stats.ttftMs, 'f', 1),
                                stopReasonText(stats.stopReason));
  const QString reuse = stats.reusedTokens > 0 ? QObject::tr("%1 · %2 of %3 prompt tokens cached")
                                                     .arg(line)
                                                     .arg(stats.reusedTokens)
                                                     .arg(stats.promptTokens)
                                               : line;
  const QString drafted = stats.draftTokens > 0 ? QObject::tr("%1 · %2 of %3 drafted tokens accepted")
                                                       .arg(reuse)
                                                       .arg(stats.acceptedTokens)
                                                       .arg(stats.draftTokens)
                                                 : reuse;
  const QString placed = stats.backend.isEmpty() ? drafted : QObject::tr("%1 · %2").arg(drafted, stats.backend);
  return stats.route.isEmpty() ? placed : QObject::tr("%1 · answered by %2").arg(placed, stats.route);
}

MessageWidget::MessageWidget(const ConversationMessage& message, QWidget* parent)
    : QFrame(parent),
      m_role(new QLabel(this)),
      m_thinkingToggle(new QToolButton(this)),
      m_thinking(new QLabel(this)),
      m_body(new MarkdownView(this)),
      m_stats(new QLabel(this)),
      m_runForReal(new QLabel(tr("<a href=\"run\">Run it for real</a>"), this)) {
  const bool user = message.role == ConversationMessage::Role::User;
  setObjectName(user ? QStringLiteral("userMessage") : QStringLiteral("assistantMessage"));
  setAutoFillBackground(true);
  setBackgroundRole(user ? QPalette::AlternateBase : QPalette::Base);
  QFont bold = m_role->font();
  bold.setBold(true);
  m_role->setFont(bold);
  m_role->setText(user ? tr("You") : tr("Assistant"));
  m_stats->setForegroundRole(QPalette::PlaceholderText);
  m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_stats->setWordWrap(true);  // a narrow chat wraps the statistics instead of clipping them
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(12, 8, 12, 8);
  layout->setSpacing(4);
  layout->addWidget(m_role);
  layout->addWidget(m_thinkingToggle);
  layout->addWidget(m_thinking);
  layout->addWidget(m_body);
  m_thinkingToggle->setObjectName("thinkingToggle");
  m_thinkingToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_thinkingToggle->setArrowType(Qt::RightArrow);
  m_thinkingToggle->setCheckable(true);
  m_thinkingToggle->setAutoRaise(true);
  m_thinkingToggle->setToolTip(tr("The model's reasoning before its answer (not sent back to it in later turns)"));
  m_thinking->setObjectName("thinking");
  m_thinking->setWordWrap(true);
  m_thinking->setTextFormat(Qt::PlainText);
  m_thinking->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_thinking->setForegroundRole(QPalette::PlaceholderText);
  m_thinking->setContentsMargins(16, 0, 0, 0);
  m_thinking->hide();
  connect(m_thinkingToggle, &QToolButton::toggled, this, [this](bool open) {
    m_thinkingToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    m_thinking->setVisible(open);
  });
  layout->addWidget(m_stats);
  layout->addWidget(m_runForReal);
  m_runForReal->setObjectName("runForReal");
  m_runForReal->setToolTip(tr("Generate this reply with the model instead (the cache then keeps the new one)"));
  connect(m_runForReal, &QLabel::linkActivated, this, &MessageWidget::runForRealRequested);
  m_renderTimer.setSingleShot(true);
  connect(&m_renderTimer, &QTimer::timeout, this, &MessageWidget::render);
  m_message = message;
  render();
}

void MessageWidget::showMessage(const ConversationMessage& message) {
  m_message = message;
  if (!message.streaming) {
    m_renderTimer.stop();
    render();
    return;
  }
  if (m_renderTimer.isActive()) return;
  const qint64 interval = std::max<qint64>(kMinRenderIntervalMs, kRenderCostFactor * m_renderCostMs);
  m_renderTimer.start(static_cast<int>(std::max<qint64>(0, interval - m_sinceRender.elapsed())));
}

void MessageWidget::render() {
  QElapsedTimer cost;
  cost.start();
  if (m_message.role == ConversationMessage::Role::User) {
    m_body->showPlainText(m_message.text);
  } else {
    m_body->showMarkdown(m_message.text);
  }
  m_thinkingToggle->setVisible(!m_message.reasoning.isEmpty());
  m_thinkingToggle->setText(thinkingTitle());
  m_thinking->setText(m_message.reasoning.trimmed());
  m_stats->setVisible(m_message.stats.has_value());
  m_runForReal->setVisible(m_message.stats && m_message.stats->stopReason == QLatin1String("semantic_cache"));
  if (m_message.stats) {
    m_stats->setText(formatReplyStats(*m_message.stats));
    m_stats->setToolTip(m_message.stats->routeReason);
  }
  m_renderCostMs = cost.elapsed();
  m_sinceRender.start();
}

QString MessageWidget::text() const { return m_body->toPlainText(); }

QString MessageWidget::statsText() const { return m_stats->text(); }

QString MessageWidget::thinkingTitle() const {
  if (m_message.reasoning.isEmpty()) return {};
  const int n = m_message.reasoningTokens;
  const QString tokens = n == 1 ? tr("1 token") : tr("%1 tokens").arg(n);
  return m_message.streaming && m_message.text.isEmpty() ? tr("Thinking… · %1").arg(tokens)
                                                         : tr("Thinking · %1").arg(tokens);
}

bool MessageWidget::thinkingShown() const { return m_thinking->isVisibleTo(this); }

}  // namespace inferscope::ui
