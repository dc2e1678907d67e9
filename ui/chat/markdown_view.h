// Read-only rich text (Markdown or plain) that is exactly as tall as its content, for stacking
// messages in a scroll area: no scroll bars or frame of its own, transparent background, links
// open in the browser. Markdown is GitHub's dialect without raw HTML: HTML a model writes shows
// as text, never as markup (nor as images or files it would load).
#pragma once

#include <QTextBrowser>

namespace inferscope::ui {

class MarkdownView : public QTextBrowser {
  Q_OBJECT

 public:
  explicit MarkdownView(QWidget* parent = nullptr);

  // Each sets the content and fits the height once (fitting on every documentSizeChanged would
  // lay a long document out again for every step of its layout).
  void showMarkdown(const QString& markdown);
  void showPlainText(const QString& text);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitHeight();
  int contentHeight() const;
};

}  // namespace inferscope::ui
