// Push buttons that may shrink to their text. Styles pad a text button to about 80 px, and a row
// of three such buttons (sessions sidebar, presets) alone would make a dock too wide for a small
// window; with this they keep that width while there is room and give it up when there is not.
#pragma once

class QPushButton;

namespace inferscope::ui {

void letShrinkToText(QPushButton* button);

}  // namespace inferscope::ui
