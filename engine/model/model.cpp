#include "engine/model/model.h"

#include <algorithm>
#include <cstring>

#include "engine/model/memory_estimate.h"

namespace inferscope {

namespace {

// Share of the load reported before the weight copy starts (parsing, tokenizer, binding).
constexpr double kProgressBeforeCopy = 0.05;
constexpr size_t kCopyStepBytes = size_t(4) << 20;  // also the most of the mapping resident at once

void report(const ModelLoadOptions& options, double fraction) {
  if (options.on_progress) options.on_progress(fraction);
}

// Copies the tensor data section into huge-page memory in steps (reporting progress), giving
// each step's pages of the file mapping back once copied, so that the weights are never
// resident twice (the peak stays at the estimate, not at twice the weights); nullptr when it
// does not fit.
std::unique_ptr<ResidentBuffer> copy_tensor_data(const gguf::File& file, const ModelLoadOptions& options) {
  if (file.tensors().empty()) return nullptr;
  const gguf::TensorInfo& first = file.tensors().front();
  const uint8_t* section = first.data - first.offset;
  const size_t bytes = file.file_size() - file.data_offset();
  auto buffer = ResidentBuffer::allocate(bytes);
  if (!buffer) return nullptr;
  uint8_t* dst = (*buffer)->data();
  for (size_t done = 0; done < bytes;) {
    const size_t step = std::min(kCopyStepBytes, bytes - done);
    std::memcpy(dst + done, section + done, step);
    file.release_pages(section + done, step);
    done += step;
    report(options, kProgressBeforeCopy + (1.0 - kProgressBeforeCopy) * static_cast<double>(done) / bytes);
  }
  return std::move(*buffer);
}

}  // namespace

Result<std::shared_ptr<const Model>> Model::load(const std::string& path, const ModelLoadOptions& options) {
  report(options, 0.0);
  auto file = gguf::File::open(path);
  if (!file) return file.status();
  return load_file(*file, options);
}

Result<std::shared_ptr<const Model>> Model::load_file(std::shared_ptr<const gguf::File> file,
                                                      const ModelLoadOptions& options) {
  const std::string path = file->path();
  auto model = std::shared_ptr<Model>(new Model());
  model->file_ = std::move(file);
  auto config = ModelConfig::from_gguf(*model->file_);
  if (!config) return config.status();
  model->config_ = *config;
  auto tokenizer = Tokenizer::from_gguf(*model->file_);
  if (!tokenizer) return tokenizer.status();
  model->tokenizer_ = *tokenizer;
  if (model->config_.n_vocab != model->tokenizer_->n_vocab()) {
    return Status::error(path + ": vocab size " + std::to_string(model->config_.n_vocab) +
                         " differs from the tokenizer's " + std::to_string(model->tokenizer_->n_vocab()) + " tokens");
  }
  if (options.check_memory) {
    // available_memory_bytes() (resident_buffer.h): MemAvailable, 0 when unknown (no check then).
    const uint64_t available = options.available_memory_bytes.value_or(available_memory_bytes());
    if (available != 0) {
      const int64_t n_ctx =
          options.n_ctx > 0 ? options.n_ctx : std::min<int64_t>(std::max<int64_t>(model->config_.n_ctx_train, 1), 4096);
      const MemoryEstimate need =
          estimate_memory(*model->file_, model->config_, n_ctx, std::max(options.n_threads, 1));
      if (need.total_bytes() > available) {
        return Status::error(path + ": not enough memory to load this model at a context of " + std::to_string(n_ctx) +
                             " tokens: it needs " + format_gib(need.total_bytes()) + ", " + format_gib(available) +
                             " available");
      }
    }
  }
  // Bind against the mapping first, so a file that cannot be used is refused before the copy.
  auto weights = ModelWeights::bind(*model->file_, model->config_, nullptr);
  if (!weights) return weights.status();
  report(options, kProgressBeforeCopy);
  // A file with INT8 matrices is used from the mapping: their re-blocked rows are resident
  // already, and a copy of the section would hold the I8 rows a second time.
  if (options.resident_weights && (*weights)->reblocked.empty()) {
    model->resident_ = copy_tensor_data(*model->file_, options);
    if (model->resident_) weights = ModelWeights::bind(*model->file_, model->config_, model->resident_->data());
  }
  if (!weights) return weights.status();
  model->weights_ = std::move(*weights);
  report(options, 1.0);
  return std::shared_ptr<const Model>(model);
}

}  // namespace inferscope
