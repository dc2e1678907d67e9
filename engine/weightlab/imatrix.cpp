#include "engine/weightlab/imatrix.h"

#include <algorithm>
#include <set>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/core/thread_pool.h"
#include "engine/graph/forward_pass.h"

namespace inferscope {

std::vector<float> ImatrixEntry::mean(int64_t mat) const {
  const int64_t cols = values_per_mat();
  std::vector<float> m(static_cast<size_t>(cols), 1.0f);
  const float count = counts[static_cast<size_t>(mat)];
  if (count <= 0) return m;
  for (int64_t j = 0; j < cols; ++j) m[static_cast<size_t>(j)] = in_sum2[static_cast<size_t>(mat * cols + j)] / count;
  return m;
}

const ImatrixEntry* ImportanceMatrix::find(const std::string& tensor) const {
  const auto it = entries.find(tensor);
  return it == entries.end() ? nullptr : &it->second;
}

namespace {

// Adds a product's input rows x[n][cols] to the entry of each block matrix that multiplied them.
void accumulate(ImportanceMatrix& im, std::span<const MatmulOutput> outputs, const float* x, int64_t n) {
  std::set<std::string> seen;  // a fused tensor's row slices name it once
  for (const MatmulOutput& o : outputs) {
    if (!o.w->tensor || !o.w->tensor->name.starts_with("blk.") || !seen.insert(o.w->tensor->name).second) continue;
    const int64_t cols = o.w->cols;
    ImatrixEntry& e = im.entries[o.w->tensor->name];
    if (e.counts.empty()) {
      e.in_sum2.assign(static_cast<size_t>(cols), 0.0f);
      e.counts.assign(1, 0.0f);
    }
    for (int64_t r = 0; r < n; ++r) {
      const float* row = x + r * cols;
      for (int64_t j = 0; j < cols; ++j) e.in_sum2[static_cast<size_t>(j)] += row[j] * row[j];
    }
    e.counts[0] += static_cast<float>(n);
  }
}

}  // namespace

Result<ImportanceMatrix> compute_imatrix(std::shared_ptr<const Model> model, const std::string& text,
                                         const ImatrixOptions& options) {
  const Tokenizer& tok = model->tokenizer();
  const std::vector<int32_t> tokens = tok.encode(text, true, false);
  const int64_t train = model->config().n_ctx_train;
  const int64_t chunk = std::min(options.chunk_size, train > 0 ? train : options.chunk_size);
  if (chunk < 2) return Result<ImportanceMatrix>::error("imatrix: chunks must hold at least 2 tokens");
  int64_t n_chunks = static_cast<int64_t>(tokens.size()) / chunk;
  if (options.max_chunks >= 0) n_chunks = std::min(n_chunks, options.max_chunks);
  if (n_chunks < 1) {
    return Result<ImportanceMatrix>::error("imatrix: the text has " + std::to_string(tokens.size()) +
                                           " tokens, fewer than one chunk of " + std::to_string(chunk));
  }

  ThreadPool pool(std::max(1, options.n_threads));
  auto ops = std::make_unique<CpuOps>(model, pool);
  CpuOps* cpu = ops.get();
  ForwardOptions fo;
  fo.n_ctx = chunk;
  fo.max_batch = chunk;  // a chunk in one batch: every product sees all its rows at once
  fo.host_threads = &pool;
  auto pass = ForwardPass::create(model, std::move(ops), fo);
  if (!pass) return Result<ImportanceMatrix>::error("imatrix: " + pass.status().message());

  ImportanceMatrix im;
  im.chunk_size = chunk;
  if (!options.dataset.empty()) im.datasets.push_back(options.dataset);
  cpu->observe_matmuls([&im](std::span<const MatmulOutput> outputs, const float* in, int64_t n) {
    accumulate(im, outputs, in, n);
  });
  // Every position's logits, as the reference asks for: every row goes through the last layer.
  std::vector<float> logits(static_cast<size_t>(chunk * model->config().n_vocab));
  for (int64_t c = 0; c < n_chunks; ++c) {
    std::vector<int32_t> ids(tokens.begin() + c * chunk, tokens.begin() + (c + 1) * chunk);
    if (tok.add_bos() && tok.bos_id() >= 0) ids[0] = tok.bos_id();
    (*pass)->clear();
    Status st = (*pass)->forward(0, ids, true, logits.data());
    if (!st) return Result<ImportanceMatrix>::error("imatrix: " + st.message());
    im.chunk_count = c + 1;
    if (options.progress) options.progress(c + 1, n_chunks);
  }
  return im;
}

}  // namespace inferscope
