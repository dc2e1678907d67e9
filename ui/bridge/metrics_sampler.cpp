#include "ui/bridge/metrics_sampler.h"

#include <QString>

namespace inferscope::ui {

namespace {

// Since the reply started: the profile now less the profile then, layer by layer.
QList<QList<double>> replyLayerOpSeconds(const OpProfile& now, const OpProfile& start) {
  QList<QList<double>> layers;
  for (size_t l = 0; l < now.layer_op_seconds.size(); ++l) {
    QList<double> kinds;
    for (size_t k = 0; k < kOpKinds; ++k) {
      const double before = l < start.layer_op_seconds.size() ? start.layer_op_seconds[l][k] : 0.0;
      kinds.append(now.layer_op_seconds[l][k] - before);
    }
    layers.append(kinds);
  }
  return layers;
}

QList<QList<quint64>> replyExpertChoices(const OpProfile& now, const OpProfile& start) {
  QList<QList<quint64>> layers;
  for (size_t l = 0; l < now.expert_choices.size(); ++l) {
    QList<quint64> experts;
    for (size_t e = 0; e < now.expert_choices[l].size(); ++e) {
      const bool known = l < start.expert_choices.size() && e < start.expert_choices[l].size();
      experts.append(now.expert_choices[l][e] - (known ? start.expert_choices[l][e] : 0));
    }
    layers.append(experts);
  }
  return layers;
}

}  // namespace

MetricsSample sampleMetrics(Session& session, const OpProfile& replyStart, const DraftModel* drafting, int generated,
                            double tokensPerSecond) {
  const MemoryUsage memory = session.memory();
  MetricsSample sample;
  sample.decodeTokensPerSecond = tokensPerSecond;
  sample.tokens = generated;
  sample.weightsBytes = memory.weights_bytes;
  sample.deviceWeightsBytes = memory.device_weights_bytes;
  sample.kvCacheBytes = memory.kv_cache_bytes;
  sample.recurrentBytes = memory.recurrent_bytes;
  sample.kvCacheType = QString::fromStdString(kv_types_label(memory.kv_types));
  const KvBlockStats& b = memory.kv_blocks;
  sample.kvBlocks = {b.block_size, b.referenced, b.cached, b.free};
  sample.scratchBytes = memory.scratch_bytes;
  sample.peakRssBytes = memory.peak_rss_bytes;
  if (drafting) {
    sample.draftModelBytes = drafting->memory_bytes();
    // On a device all of it but the weights' host copy (as weightsBytes is the target's).
    const quint64 hostWeights = drafting->model().weights().total_bytes;
    if (!session.options().backend.on_cpu() && sample.draftModelBytes > hostWeights) {
      sample.draftModelDeviceBytes = sample.draftModelBytes - hostWeights;
    }
  }
  const OpProfile& profile = session.executor().profile();
  for (size_t k = 0; k < profile.seconds.size(); ++k) {
    sample.opSeconds.append({QString::fromLatin1(op_kind_name(static_cast<OpKind>(k))), profile.seconds[k]});
  }
  sample.layerOpSeconds = replyLayerOpSeconds(profile, replyStart);
  sample.expertChoices = replyExpertChoices(profile, replyStart);
  return sample;
}

}  // namespace inferscope::ui
