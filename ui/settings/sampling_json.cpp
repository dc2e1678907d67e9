#include "ui/settings/sampling_json.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <array>
#include <utility>

namespace inferscope::ui {

namespace {

// DraftSource as a preset stores it.
constexpr std::array<std::pair<DraftSource, const char*>, 5> kDraftSourceNames{{
    {DraftSource::None, "none"},
    {DraftSource::Lookup, "lookup"},
    {DraftSource::Model, "model"},
    {DraftSource::LayerSkip, "layer_skip"},
    {DraftSource::Mtp, "mtp"},
}};

QString draftSourceName(DraftSource source) {
  for (const auto& [s, name] : kDraftSourceNames) {
    if (s == source) return QString::fromLatin1(name);
  }
  return QStringLiteral("none");
}

// `fallback` for a name it does not know.
DraftSource draftSourceFromName(const QString& name, DraftSource fallback) {
  for (const auto& [s, n] : kDraftSourceNames) {
    if (name == QLatin1String(n)) return s;
  }
  return fallback;
}

// Where the draft settings come from: the keys of this version, or "draft_lookup" (the draft
// length of prompt lookup, 0 = off) in a preset saved before the other sources existed.
void readDraft(const QJsonObject& o, SamplingSettings& s) {
  const int lookup = o.value(QStringLiteral("draft_lookup")).toInt(0);
  if (!o.contains(QStringLiteral("draft")) && lookup > 0) {
    s.draftSource = DraftSource::Lookup;
    s.draftMax = lookup;
    return;
  }
  s.draftSource = draftSourceFromName(o.value(QStringLiteral("draft")).toString(), s.draftSource);
  s.draftMax = o.value(QStringLiteral("draft_max")).toInt(s.draftMax);
  s.draftModelPath = o.value(QStringLiteral("draft_model")).toString(s.draftModelPath);
  s.draftLayers = o.value(QStringLiteral("draft_layers")).toInt(s.draftLayers);
}

}  // namespace

QString samplingToJson(const SamplingSettings& s) {
  QJsonObject o{{QStringLiteral("temperature"), s.temperature},  {QStringLiteral("top_k"), s.topK},
                {QStringLiteral("top_p"), s.topP},                {QStringLiteral("min_p"), s.minP},
                {QStringLiteral("repeat_penalty"), s.repetitionPenalty}, {QStringLiteral("max_tokens"), s.maxTokens},
                {QStringLiteral("beam_width"), s.beamWidth},
                {QStringLiteral("draft"), draftSourceName(s.draftSource)},
                {QStringLiteral("draft_max"), s.draftMax},
                {QStringLiteral("draft_model"), s.draftModelPath},
                {QStringLiteral("draft_layers"), s.draftLayers}};
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
  readDraft(o, s);
  if (o.contains(QStringLiteral("seed"))) s.seed = static_cast<quint32>(o.value(QStringLiteral("seed")).toInteger());
  return s;
}

}  // namespace inferscope::ui
