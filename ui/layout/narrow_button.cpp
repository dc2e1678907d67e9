#include "ui/layout/narrow_button.h"

#include <QPushButton>
#include <QStyle>

namespace inferscope::ui {

void letShrinkToText(QPushButton* button) {
  QString text = button->text();
  text.remove(QLatin1Char('&'));
  const int padding = 2 * (button->style()->pixelMetric(QStyle::PM_ButtonMargin, nullptr, button) +
                           button->style()->pixelMetric(QStyle::PM_DefaultFrameWidth, nullptr, button));
  button->setMinimumWidth(button->fontMetrics().horizontalAdvance(text) + padding);
}

}  // namespace inferscope::ui
