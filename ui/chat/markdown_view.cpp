#include "ui/chat/markdown_view.h"

#include <QResizeEvent>
#include <QtMath>

namespace inferscope::ui {

MarkdownView::MarkdownView(QWidget* parent) : QTextBrowser(parent) {
  setFrameShape(QFrame::NoFrame);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
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
  fitHeight();
}

void MarkdownView::showPlainText(const QString& text) {
  setPlainText(text);
  fitHeight();
}

QSize MarkdownView::sizeHint() const { return {QTextBrowser::sizeHint().width(), contentHeight()}; }

QSize MarkdownView::minimumSizeHint() const { return {0, contentHeight()}; }

void MarkdownView::resizeEvent(QResizeEvent* event) {
  QTextBrowser::resizeEvent(event);
  if (event->size().width() != event->oldSize().width()) fitHeight();
}

int MarkdownView::contentHeight() const {
  const QMargins m = contentsMargins();
  return qCeil(document()->size().height()) + m.top() + m.bottom();
}

void MarkdownView::fitHeight() {
  const int h = contentHeight();
  if (h != height()) setFixedHeight(h);
}

}  // namespace inferscope::ui
