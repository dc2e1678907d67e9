#include "ui/layout/eliding_combo_box.h"

#include <QStyleOptionComboBox>
#include <QStylePainter>

namespace inferscope::ui {

// QComboBox's own painting, with the current text elided to the edit field's width.
void ElidingComboBox::paintEvent(QPaintEvent*) {
  QStylePainter painter(this);
  painter.setPen(palette().color(QPalette::Text));
  QStyleOptionComboBox option;
  initStyleOption(&option);
  painter.drawComplexControl(QStyle::CC_ComboBox, option);
  const QRect field = style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, this);
  const int iconWidth = option.currentIcon.isNull() ? 0 : option.iconSize.width() + 4;
  option.currentText = fontMetrics().elidedText(option.currentText, Qt::ElideRight, field.width() - iconWidth - 2);
  painter.drawControl(QStyle::CE_ComboBoxLabel, option);
}

}  // namespace inferscope::ui
