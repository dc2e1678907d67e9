// A live measurement taken while a reply streams (~30 per second; a value type carried by signals).
#pragma once

#include <QList>
#include <QMetaType>
#include <QPair>
#include <QString>

namespace inferscope::ui {

// The paged KV pool's blocks (KvBlockStats): held by a chat, kept for the prefix cache, free.
// All zero when unknown.
struct KvBlockCounts {
  int blockSize = 0;  // positions per block
  int inUse = 0, cached = 0, free = 0;
  int total() const { return inUse + cached + free; }
  bool operator==(const KvBlockCounts&) const = default;
};

struct MetricsSample {
  double decodeTokensPerSecond = 0;  // over the interval since the previous sample
  int tokens = 0;                    // generated so far in this reply
  // Memory by category, bytes. On a GPU backend the KV cache and scratch live on the device,
  // beside the weights copied there; weightsBytes stays the host copy.
  quint64 weightsBytes = 0;
  quint64 deviceWeightsBytes = 0;  // 0 on the CPU
  quint64 kvCacheBytes = 0;
  quint64 recurrentBytes = 0;  // a hybrid model's recurrent states (MemoryUsage::recurrent_bytes)
  QString kvCacheType;  // "f16", "q8_0", or "k q8_0, v f16"
  KvBlockCounts kvBlocks;  // how the KV cache's bytes divide
  quint64 scratchBytes = 0;
  quint64 peakRssBytes = 0;  // whole process
  // Speculative decoding's draft model (DraftModel::memory_bytes: its weights, their device copy,
  // its KV cache and scratch) while the reply drafts with one, else 0; in none of the figures
  // above. On a GPU backend draftModelDeviceBytes is the part on the device (all but the
  // weights' host copy); 0 on the CPU.
  quint64 draftModelBytes = 0;
  quint64 draftModelDeviceBytes = 0;
  // Seconds per op kind ("matmul", "attention"...) since the model loaded: wall time on the CPU,
  // the device's timestamps on a GPU backend (OpProfile).
  QList<QPair<QString, double>> opSeconds;
  // The reply so far, per layer: seconds per op kind ([layer][kind], the kinds in opSeconds'
  // order), and for a mixture-of-experts model the times each expert was chosen
  // ([layer][expert]); empty where the backend does not measure them.
  QList<QList<double>> layerOpSeconds;
  QList<QList<quint64>> expertChoices;
};

}  // namespace inferscope::ui

Q_DECLARE_METATYPE(inferscope::ui::MetricsSample)
