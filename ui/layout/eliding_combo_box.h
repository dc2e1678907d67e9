// A combo box that ends a current text too long for it with "…" (styles clip it mid-letter), so a
// long entry such as a GPU's full name can sit in a narrow dock; the open list shows it whole.
#pragma once

#include <QComboBox>

namespace inferscope::ui {

class ElidingComboBox : public QComboBox {
  Q_OBJECT

 public:
  using QComboBox::QComboBox;

 protected:
  void paintEvent(QPaintEvent* event) override;
};

}  // namespace inferscope::ui
