#include "engine/weightlab/weight_method.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/core/thread_pool.h"
#include "engine/model/model.h"
#include "engine/weightlab/awq_rewriter.h"
#include "engine/weightlab/gptq_rewriter.h"
#include "engine/weightlab/imatrix_file.h"
#include "engine/weightlab/imatrix_rewriter.h"
#include "engine/weightlab/llm_int8_method.h"
#include "engine/weightlab/pruning.h"
#include "engine/weightlab/ternary.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

constexpr const char* kNames[] = {"rtn",   "gptq", "awq", "ternary", "magnitude", "wanda", "2:4", "llm-int8",
                                  "imatrix"};

std::string percent(double x) { return std::to_string(static_cast<int>(x * 100.0 + 0.5)) + "%"; }

// The model in `file` as stored, to read a calibration text through (weights left in the file).
Result<std::shared_ptr<const Model>> model_as_stored(std::shared_ptr<const gguf::File> file) {
  ModelLoadOptions load;
  load.resident_weights = false;
  load.check_memory = false;
  return Model::load_file(std::move(file), load);
}

const std::string& calibration_text(const WeightLabOptions& options) {
  return options.calibration_text.empty() ? default_calibration_text() : options.calibration_text;
}

}  // namespace

Result<Calibration> read_calibration(std::shared_ptr<const gguf::File> file, const WeightLabOptions& options) {
  auto model = model_as_stored(std::move(file));
  if (!model) return Result<Calibration>::error(model.status().message());
  CalibrationOptions co = options.calibration;
  co.n_threads = options.n_threads;
  return collect_calibration(*model, calibration_text(options), co);
}

namespace {

Result<PreparedMethod> prepare_gptq(std::shared_ptr<const gguf::File> file, const QuantMix& mix,
                                    const WeightLabOptions& options) {
  if (!gptq_supports(mix.base)) {
    return Result<PreparedMethod>::error("gptq cannot place weights on the grid of " + mix.name +
                                         "; choose q8_0, q4_0, q4_1, iq4_nl, iq4_xs, q3_k_*, q4_k_* or q5_k_*");
  }
  auto calibration = read_calibration(std::move(file), options);
  if (!calibration) return calibration.status();
  const int64_t tokens = calibration->tokens;
  auto rewriter =
      std::make_shared<GptqRewriter>(std::make_shared<const Calibration>(std::move(*calibration)), options.gptq);
  PreparedMethod p;
  p.rewriter = rewriter;
  p.summary = [rewriter, tokens] { return WeightLabSummary{tokens, rewriter->fallbacks()}; };
  return p;
}

Result<PreparedMethod> prepare_awq(std::shared_ptr<const gguf::File> file, const QuantMix& mix,
                                   const WeightLabOptions& options) {
  auto calibration = read_calibration(file, options);
  if (!calibration) return calibration.status();
  ThreadPool pool(std::max(1, options.n_threads));
  auto rewriter = AwqRewriter::search(*file, *calibration, mix, options.awq, pool);
  if (!rewriter) return rewriter.status();
  WeightLabSummary summary{calibration->tokens, {}};
  for (const AwqGroupChoice& c : (*rewriter)->choices()) {
    const double gain = c.error_plain > 0 ? 1.0 - c.error / c.error_plain : 0.0;
    summary.notes.push_back(c.group + ": alpha " + std::to_string(c.alpha).substr(0, 4) + ", output error " +
                            percent(gain) + " below rounding");
  }
  PreparedMethod p;
  p.rewriter = *rewriter;
  p.summary = [summary] { return summary; };
  return p;
}

Status check_takes_importance(const QuantMix& mix) {
  if (kernels::takes_importance(mix.base)) return Status::ok();
  return Status::error(mix.name + " rounds without importance weights: an importance matrix weighs the K-quants "
                                  "(q2_k..q6_k and their mixes), iq4_nl and iq4_xs");
}

// rtn weighted by `im` (read from `source`: a file name, or the calibration text).
Result<PreparedMethod> imatrix_method(const ImportanceMatrix& im, const gguf::File& file, const std::string& source) {
  auto rewriter = ImatrixRewriter::create(im, file, source);
  if (!rewriter) return rewriter.status();
  const std::string note = "importance matrix " + source + ": " + std::to_string(im.entries.size()) + " matrices, " +
                           std::to_string(im.chunk_count) + " chunks of " + std::to_string(im.chunk_size) + " tokens";
  const int64_t tokens = im.chunk_count * im.chunk_size;
  return PreparedMethod{*rewriter, [note, tokens] { return WeightLabSummary{tokens, {note}}; }};
}

// rtn with an importance matrix file.
Result<PreparedMethod> prepare_imatrix_file(const gguf::File& file, const QuantMix& mix, const std::string& path) {
  INFERSCOPE_RETURN_IF_ERROR(check_takes_importance(mix));
  auto im = read_imatrix(path);
  if (!im) return im.status();
  return imatrix_method(*im, file, std::filesystem::path(path).filename().string());
}

// imatrix: the matrix of the calibration text through the model as stored, in chunks of
// options.calibration.seq_len tokens (at most the model's context) over its first max_tokens.
Result<PreparedMethod> prepare_computed_imatrix(std::shared_ptr<const gguf::File> file, const QuantMix& mix,
                                                const WeightLabOptions& options) {
  INFERSCOPE_RETURN_IF_ERROR(check_takes_importance(mix));
  auto model = model_as_stored(file);
  if (!model) return model.status();
  ImatrixOptions io;
  const int64_t context = (*model)->config().n_ctx_train;
  io.chunk_size = context > 0 ? std::min(options.calibration.seq_len, context) : options.calibration.seq_len;
  io.max_chunks = std::max<int64_t>(1, options.calibration.max_tokens / std::max<int64_t>(1, io.chunk_size));
  io.n_threads = std::max(1, options.n_threads);
  io.dataset = options.calibration_text.empty() ? "the shipped calibration text" : "the calibration text";
  auto im = compute_imatrix(*model, calibration_text(options), io);
  if (!im) return im.status();
  return imatrix_method(*im, *file, io.dataset);
}

Result<PreparedMethod> prepare_pruning(std::shared_ptr<const gguf::File> file, const WeightLabOptions& options) {
  static constexpr PruneRule kRules[] = {PruneRule::Magnitude, PruneRule::Wanda, PruneRule::TwoFour};
  const PruneRule rule = kRules[static_cast<int>(options.method) - static_cast<int>(WeightMethod::Magnitude)];
  std::shared_ptr<const Calibration> calibration;
  if (is_calibrated(options.method)) {
    auto c = read_calibration(std::move(file), options);
    if (!c) return c.status();
    calibration = std::make_shared<const Calibration>(std::move(*c));
  }
  const int64_t tokens = calibration ? calibration->tokens : 0;
  PreparedMethod p;
  p.rewriter = std::make_shared<PruneRewriter>(rule, options.sparsity, std::move(calibration));
  p.summary = [tokens] { return WeightLabSummary{tokens, {}}; };
  return p;
}

}  // namespace

std::optional<WeightMethod> weight_method_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (lower == kNames[i]) return static_cast<WeightMethod>(i);
  }
  return std::nullopt;
}

const char* weight_method_name(WeightMethod method) { return kNames[static_cast<size_t>(method)]; }

bool is_calibrated(WeightMethod method) {
  return method == WeightMethod::Gptq || method == WeightMethod::Awq || method == WeightMethod::Wanda ||
         method == WeightMethod::TwoFour || method == WeightMethod::Imatrix;
}

bool is_pruning(WeightMethod method) {
  return method == WeightMethod::Magnitude || method == WeightMethod::Wanda || method == WeightMethod::TwoFour;
}

Result<PreparedMethod> prepare_weight_method(std::shared_ptr<const gguf::File> file, const QuantMix& mix,
                                             const WeightLabOptions& options) {
  if (!options.imatrix_path.empty() && options.method == WeightMethod::Imatrix) {
    return Result<PreparedMethod>::error("the imatrix method computes its matrix from the calibration text; a "
                                         "matrix file goes with plain rounding (rtn)");
  }
  if (!options.imatrix_path.empty() && options.method != WeightMethod::Rtn) {
    return Result<PreparedMethod>::error(std::string("an importance matrix weighs plain rounding (rtn); ") +
                                         weight_method_name(options.method) + " takes none");
  }
  switch (options.method) {
    case WeightMethod::Rtn:
      if (!options.imatrix_path.empty()) return prepare_imatrix_file(*file, mix, options.imatrix_path);
      return PreparedMethod{nullptr, [] { return WeightLabSummary{}; }};
    case WeightMethod::Ternary:
      if (mix.base != kernels::GgmlType::TQ1_0 && mix.base != kernels::GgmlType::TQ2_0) {
        return Result<PreparedMethod>::error("the ternary method writes tq1_0 or tq2_0, not " + mix.name);
      }
      return PreparedMethod{std::make_shared<TernaryRewriter>(options.ternary_per_block),
                            [] { return WeightLabSummary{}; }};
    case WeightMethod::Imatrix:
      return prepare_computed_imatrix(std::move(file), mix, options);
    case WeightMethod::Gptq:
      return prepare_gptq(std::move(file), mix, options);
    case WeightMethod::Awq:
      return prepare_awq(std::move(file), mix, options);
    case WeightMethod::Magnitude:
    case WeightMethod::Wanda:
    case WeightMethod::TwoFour:
      return prepare_pruning(std::move(file), options);
    case WeightMethod::LlmInt8:
      if (mix.base != kernels::GgmlType::I8) {
        return Result<PreparedMethod>::error("llm-int8 decomposes INT8 per-channel weights: use --type int8, not " +
                                             mix.name);
      }
      if (!(options.llm_int8_threshold > 0.0f)) return Result<PreparedMethod>::error("the outlier threshold must be > 0");
      return PreparedMethod{std::make_shared<LlmInt8Marker>(options.llm_int8_threshold),
                            [] { return WeightLabSummary{}; }};
  }
  return Result<PreparedMethod>::error("unknown weight method");
}

}  // namespace inferscope
