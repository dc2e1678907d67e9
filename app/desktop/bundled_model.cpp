#include "app/desktop/bundled_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace inferscope::desktop {

QString bundledModelPath() {
  const QString relative = QStringLiteral("../share/inferscope/models/stories260K.gguf");
  const QStringList candidates = {QDir(QCoreApplication::applicationDirPath()).filePath(relative),
                                  QStringLiteral(INFERSCOPE_INSTALLED_MODEL), QStringLiteral(INFERSCOPE_SOURCE_MODEL)};
  for (const QString& candidate : candidates) {
    const QFileInfo info(candidate);
    if (info.isFile()) return info.canonicalFilePath();
  }
  return {};
}

}  // namespace inferscope::desktop
