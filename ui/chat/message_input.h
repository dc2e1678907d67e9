// Where the user writes: Enter sends (emits submitted), Shift+Enter starts a new line.
#pragma once

#include <QPlainTextEdit>

namespace inferscope::ui {

class MessageInput : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit MessageInput(QWidget* parent = nullptr);

  QSize sizeHint() const override;

 signals:
  void submitted();

 protected:
  void keyPressEvent(QKeyEvent* event) override;
};

}  // namespace inferscope::ui
