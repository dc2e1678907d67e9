// The app's local OpenAI-compatible server (docs/SERVER.md) as the settings dock sets it: off by
// default; when on, the model the app has loaded is served on 127.0.0.1:port (loopback only), to
// clients that send the API key when one is set; with semanticCache, a repeated question is
// answered from the semantic cache in the app's database (its default threshold and guard, the
// loaded model as the embedder).
#pragma once

#include <QMetaType>
#include <QString>

namespace inferscope::ui {

struct LocalServerSettings {
  bool enabled = false;
  int port = 8080;  // 0: any free port (tests)
  QString apiKey;   // empty: no key (loopback only either way)
  bool semanticCache = false;

  bool operator==(const LocalServerSettings&) const = default;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::LocalServerSettings)
