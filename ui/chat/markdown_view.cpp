#include "ui/chat/markdown_view.h"

#include <algorithm>
#include <memory>

#include <QResizeEvent>
#include <QTextDocument>
#include <QtMath>

namespace inferscope::ui {

MarkdownView::MarkdownView(QWidget* parent) : QTextBrowser(parent) {
  setFrameShape(QFrame::NoFrame);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  setOpenExternalLinks(true);
  viewport()->setAutoFillBackground(false);
  document()->setDocumentMargin(2);
  // Laying out a long reply is mostly text shaping; Latin text reads the same without it (Qt
  // still shapes the scripts that need it), and renders about 3x faster while streaming.
  QFont noShaping;
  noShaping.setStyleStrategy(QFont::PreferNoShaping);
  setFont(noShaping);
}

void MarkdownView::showMarkdown(const QString& markdown) {
  document()->setMarkdown(markdown, QTextDocument::MarkdownFeatures(QTextDocument::MarkdownDialectGitHub |
                                                                      QTextDocument::MarkdownNoHTML));
  contentChanged();
}

void MarkdownView::showPlainText(const QString& text) {
  setPlainText(text);
  contentChanged();
}

QSize MarkdownView::sizeHint() const { return {QTextBrowser::sizeHint().width(), heightForWidth(width())}; }

// One line: the height comes from heightForWidth, which follows the width the layout gives.
QSize MarkdownView::minimumSizeHint() const {
  const QMargins m = contentsMargins();
  return {0, fontMetrics().height() + 2 * qCeil(document()->documentMargin()) + m.top() + m.bottom()};
}

int MarkdownView::heightForWidth(int width) const {
  const QMargins m = contentsMargins();
  const int textWidth = std::max(1, width - m.left() - m.right());
  if (qFuzzyCompare(document()->textWidth(), qreal(textWidth))) return contentHeight();
  if (m_hfwWidth != textWidth) {
    std::unique_ptr<QTextDocument> copy(document()->clone());
    copy->setTextWidth(textWidth);
    m_hfwWidth = textWidth;
    m_hfwHeight = qCeil(copy->size().height()) + m.top() + m.bottom();
  }
  return m_hfwHeight;
}

void MarkdownView::resizeEvent(QResizeEvent* event) {
  QTextBrowser::resizeEvent(event);
  // The layout gave this width for heightForWidth(width); the document is laid out at it now.
  if (event->size().width() != event->oldSize().width() && contentHeight() != event->size().height()) updateGeometry();
}

int MarkdownView::contentHeight() const {
  const QMargins m = contentsMargins();
  return qCeil(document()->size().height()) + m.top() + m.bottom();
}

void MarkdownView::contentChanged() {
  m_hfwWidth = -1;
  updateGeometry();
}

}  // namespace inferscope::ui
