#include "ui/settings/semantic_cache_store.h"

namespace inferscope::ui {

namespace {

constexpr const char* kEnabledKey = "semanticCache/enabled";
constexpr const char* kThresholdKey = "semanticCache/threshold";
constexpr const char* kGuardKey = "semanticCache/guard";
constexpr const char* kEmbeddingModelKey = "semanticCache/embeddingModel";
constexpr const char* kTtlHoursKey = "semanticCache/ttlHours";
constexpr const char* kMaxEntriesKey = "semanticCache/maxEntries";
constexpr const char* kMaxMegabytesKey = "semanticCache/maxMegabytes";

// The saved positive integer, or `fallback` when it is missing or not one.
int positive(const QSettings& settings, const char* key, int fallback) {
  bool ok = false;
  const int value = settings.value(key, fallback).toInt(&ok);
  return ok && value > 0 ? value : fallback;
}

}  // namespace

SemanticCacheSettings readSemanticCacheSettings(const QSettings& settings) {
  SemanticCacheSettings s;
  s.enabled = settings.value(kEnabledKey, s.enabled).toBool();
  const double threshold = settings.value(kThresholdKey, s.threshold).toDouble();
  if (threshold >= semantic::SemanticCacheOptions::kMinThreshold &&
      threshold <= semantic::SemanticCacheOptions::kMaxThreshold) {
    s.threshold = threshold;
  }
  s.guard = settings.value(kGuardKey, s.guard).toBool();
  s.embeddingModel = settings.value(kEmbeddingModelKey).toString();
  s.ttlHours = positive(settings, kTtlHoursKey, s.ttlHours);
  s.maxEntries = positive(settings, kMaxEntriesKey, s.maxEntries);
  s.maxMegabytes = positive(settings, kMaxMegabytesKey, s.maxMegabytes);
  return s;
}

void writeSemanticCacheSettings(QSettings& settings, const SemanticCacheSettings& cache) {
  settings.setValue(kEnabledKey, cache.enabled);
  settings.setValue(kThresholdKey, cache.threshold);
  settings.setValue(kGuardKey, cache.guard);
  settings.setValue(kEmbeddingModelKey, cache.embeddingModel);
  settings.setValue(kTtlHoursKey, cache.ttlHours);
  settings.setValue(kMaxEntriesKey, cache.maxEntries);
  settings.setValue(kMaxMegabytesKey, cache.maxMegabytes);
}

}  // namespace inferscope::ui
