// Read-only rich text (Markdown or plain) that is exactly as tall as its content at the width a
// layout gives it (height for width), for stacking messages in a scroll area: no scroll bars or
// frame of its own, transparent background, links open in the browser. Markdown is GitHub's
// dialect without raw HTML: HTML a model writes shows as text, never as markup (nor as images or
// files it would load).
#pragma once

#include <QTextBrowser>

namespace inferscope::ui {

class MarkdownView : public QTextBrowser {
  Q_OBJECT

 public:
  explicit MarkdownView(QWidget* parent = nullptr);

  // Each sets the content and asks the layouts once for the new height (doing so on every
  // documentSizeChanged would lay a long document out again for every step of its layout).
  void showMarkdown(const QString& markdown);
  void showPlainText(const QString& text);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  // The content's height at `width`: the document's own at the current width, a laid-out copy
  // at another (remembered until the content changes).
  int heightForWidth(int width) const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void contentChanged();
  int contentHeight() const;

  mutable int m_hfwWidth = -1;
  mutable int m_hfwHeight = 0;
};

}  // namespace inferscope::ui
