// Attention-head pruning: each layer's KV groups (a K/V head and the query heads that read it;
// one query head without GQA) ranked by a proxy of their importance on calibration text, the
// least important removed physically, and the smaller model written: fewer rows of attn_q,
// attn_k, attn_v (and their biases), fewer columns of attn_output, head_count and
// head_count_kv lowered (key_length / value_length written, so the head size stays).
//
// The proxy, instead of the KL of the output with each head masked (one forward pass per head):
// a group's share of the attention output, sum over calibration tokens of ||Wo[:, h] a_t[h]||^2
// over its query heads h, where a_t[h] is head h's attention output at token t (the input of
// attn_output, calibration.h). A head whose output weights are zero scores 0.
//
// Every layer loses the same number of groups (the GGUF llama format has one head count for
// all layers). Files with a fused attn_qkv are refused.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/weightlab/calibration.h"

namespace inferscope {

struct HeadPruning {
  std::shared_ptr<const gguf::File> source;  // the writer reads its tensors
  gguf::Writer writer;
  std::vector<std::vector<double>> importance;  // [layer][KV group]
  std::vector<std::vector<int>> removed;        // [layer]: the KV groups removed, ascending
  int heads_before = 0, heads_after = 0, kv_heads_after = 0;
};

// Removes `query_heads` query heads per layer: a multiple of the group size (n_head / n_head_kv),
// fewer than n_head. Fails naming the reason for other counts and unsupported files.
Result<HeadPruning> prune_heads(std::shared_ptr<const gguf::File> file, const Calibration& calibration,
                                int query_heads);

}  // namespace inferscope
