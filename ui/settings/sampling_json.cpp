#include "ui/settings/sampling_json.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace inferscope::ui {

QString samplingToJson(const SamplingSettings& s) {
  QJsonObject o{{QStringLiteral("temperature"), s.temperature},  {QStringLiteral("top_k"), s.topK},
                {QStringLiteral("top_p"), s.topP},                {QStringLiteral("min_p"), s.minP},
                {QStringLiteral("repeat_penalty"), s.repetitionPenalty}, {QStringLiteral("max_tokens"), s.maxTokens},
                {QStringLiteral("beam_width"), s.beamWidth},
                {QStringLiteral("draft_lookup"), s.draftLookup}};
  if (s.seed) o.insert(QStringLiteral("seed"), static_cast<qint64>(*s.seed));
  return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

std::optional<SamplingSettings> samplingFromJson(const QString& json) {
  const QJsonDocument doc = QJsonDocument::fromJson(json.toUtf8());
  if (!doc.isObject()) return std::nullopt;
  const QJsonObject o = doc.object();
  SamplingSettings s;
  s.temperature = static_cast<float>(o.value(QStringLiteral("temperature")).toDouble(s.temperature));
  s.topK = o.value(QStringLiteral("top_k")).toInt(s.topK);
  s.topP = static_cast<float>(o.value(QStringLiteral("top_p")).toDouble(s.topP));
  s.minP = static_cast<float>(o.value(QStringLiteral("min_p")).toDouble(s.minP));
  s.repetitionPenalty = static_cast<float>(o.value(QStringLiteral("repeat_penalty")).toDouble(s.repetitionPenalty));
  s.maxTokens = o.value(QStringLiteral("max_tokens")).toInt(s.maxTokens);
  s.beamWidth = o.value(QStringLiteral("beam_width")).toInt(s.beamWidth);
  s.draftLookup = o.value(QStringLiteral("draft_lookup")).toInt(s.draftLookup);
  if (o.contains(QStringLiteral("seed"))) s.seed = static_cast<quint32>(o.value(QStringLiteral("seed")).toInteger());
  return s;
}

}  // namespace inferscope::ui
