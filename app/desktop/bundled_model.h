// Finds the bundled stories260K model: beside an installed binary (<prefix>/share/inferscope/
// models), in the configured install prefix, or in the source tree (running from a build tree).
#pragma once

#include <QString>

namespace inferscope::desktop {

// The first candidate that exists; empty when none does.
QString bundledModelPath();

}  // namespace inferscope::desktop
