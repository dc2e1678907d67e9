#include "engine/weightlab/imatrix_rewriter.h"

#include "engine/core/thread_pool.h"
#include "engine/gguf/gguf_writer.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {

namespace {

// The column means of all of an entry's matrices together (sums over counts).
std::vector<float> pooled_mean(const ImatrixEntry& e) {
  if (e.n_mat() == 1) return e.mean(0);
  const int64_t cols = e.values_per_mat();
  double count = 0;
  std::vector<double> sum(static_cast<size_t>(cols), 0.0);
  for (int64_t m = 0; m < e.n_mat(); ++m) {
    count += e.counts[static_cast<size_t>(m)];
    for (int64_t j = 0; j < cols; ++j) sum[static_cast<size_t>(j)] += e.in_sum2[static_cast<size_t>(m * cols + j)];
  }
  std::vector<float> mean(static_cast<size_t>(cols), 1.0f);
  if (count > 0) {
    for (int64_t j = 0; j < cols; ++j) mean[static_cast<size_t>(j)] = static_cast<float>(sum[static_cast<size_t>(j)] / count);
  }
  return mean;
}

}  // namespace

Result<std::shared_ptr<ImatrixRewriter>> ImatrixRewriter::create(const ImportanceMatrix& im, const gguf::File& model,
                                                                 std::string file_name) {
  auto r = std::make_shared<ImatrixRewriter>();
  for (const auto& [name, entry] : im.entries) {
    const gguf::TensorInfo* t = model.find_tensor(name);
    if (t == nullptr) {
      return Status::error(file_name + ": the importance matrix is for another model: this one has no " + name);
    }
    if (entry.values_per_mat() != t->ne[0] || (entry.n_mat() != 1 && entry.n_mat() != t->ne[2])) {
      return Status::error(file_name + ": the importance matrix is for another model: " + name + " is " +
                           t->shape_string() + " here, " + std::to_string(entry.values_per_mat()) + " columns x " +
                           std::to_string(entry.n_mat()) + " matrices there");
    }
    r->weights_[name] = pooled_mean(entry);
  }
  r->file_name_ = std::move(file_name);
  r->dataset_ = im.datasets.empty() ? "" : im.datasets.front();
  r->chunks_ = im.chunk_count;
  return r;
}

bool ImatrixRewriter::encode_rows(const std::string& name, kernels::GgmlType to, float* rows, int64_t n, int64_t cols,
                                  uint8_t* out, ThreadPool& pool) const {
  const auto it = weights_.find(name);
  if (it == weights_.end() || !kernels::takes_importance(to)) return false;
  const float* importance = it->second.data();
  const int64_t row_bytes = kernels::row_bytes(to, cols);
  pool.run([&](int ith, int nth) {
    for (int64_t r = ith; r < n; r += nth) kernels::quantize_row(to, rows + r * cols, out + r * row_bytes, cols, importance);
  });
  return true;
}

void ImatrixRewriter::add_metadata(gguf::Writer& writer) const {
  writer.add_string("quantize.imatrix.file", file_name_);
  if (!dataset_.empty()) writer.add_string("quantize.imatrix.dataset", dataset_);
  writer.add_i32("quantize.imatrix.entries_count", static_cast<int32_t>(weights_.size()));
  writer.add_i32("quantize.imatrix.chunks_count", static_cast<int32_t>(chunks_));
}

}  // namespace inferscope
